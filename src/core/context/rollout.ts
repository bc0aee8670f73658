/**
 * The per-call sampler (the chapter's `context_rollout_batch`): the lockstep sampler where each
 * call is generated from its own context view. It returns the full episodes (for statistics) and
 * one sample per call (view + call; mask and sampling log-probs on the call tokens only), each
 * tagged with its episode.
 *
 * Under the full-context policy it computes exactly what `rolloutBatch` computes: the same
 * lockstep loop, whose KV cache is kept whenever a call's view extends what the row holds.
 */
import type { Env } from '../gym/env.js';
import { type Episode, OWNER, type Trajectory } from '../gym/episode.js';
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { type CallView, lockstepRollout, type RolloutOptions } from '../model/sampler.js';
import type { TinyAgent } from '../model/tinyagent.js';
import type { Rng } from '../rng.js';
import { type ContextPolicy, contextView } from './policy.js';

export interface CallSample {
  /** Index of the episode in the batch. */
  episode: number;
  /** Index of the call in its episode. */
  call: number;
  /** view + call as a trajectory: mask and log-probs on the call tokens only; reward and info of the episode. */
  traj: Trajectory;
}

/** One call as its own Trajectory (the chapter's `call_sample`). */
export function callSample(
  episode: Trajectory,
  view: CallView,
  callIds: readonly number[],
  callLogps: readonly number[],
  k: number,
): Trajectory {
  const ids = [...view.ids, ...callIds];
  const n = callIds.length;
  const T = ids.length;
  const actionMask = Array.from({ length: T - 1 }, (_, i) => (i >= T - 1 - n ? 1 : 0));
  const logps = Array.from({ length: T - 1 }, (_, i) => (i >= T - 1 - n ? callLogps[i - (T - 1 - n)] : 0));
  return {
    ids,
    owner: [...view.owner, ...callIds.map(() => OWNER.policy)],
    turn: [...view.turn, ...callIds.map(() => k)],
    actionMask,
    logps,
    reward: episode.reward,
    info: episode.info,
    task: episode.task,
  };
}

/** Lockstep episodes whose calls see `contextView(policy)`: episodes and per-call samples. */
export function contextRolloutBatch(
  model: TinyAgent,
  envs: readonly Env[],
  tasks: readonly Task[],
  tok: Tokenizer,
  policy: ContextPolicy,
  rng: Rng,
  opts: RolloutOptions = {},
): { trajs: Trajectory[]; samples: CallSample[] } {
  const viewOf = (ep: Episode) => {
    const v = contextView(ep, ep.nCalls, policy, tok);
    return { ids: v.ids, owner: v.owner, turn: v.turn };
  };
  const { trajs, calls } = lockstepRollout(model, envs, tasks, tok, rng, opts, viewOf);
  const samples = calls.map((c) => ({
    episode: c.episode,
    call: c.call,
    traj: callSample(trajs[c.episode], c.view, c.ids, c.logps, c.call),
  }));
  return { trajs, samples };
}
