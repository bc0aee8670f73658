/**
 * Lockstep batched sampling with a KV cache: every active episode advances by one sampled token
 * per tick; an episode whose call just ended feeds its last call token and the observation in the
 * same tick. Keys and values live per row in JS memory, so each row keeps exactly its own tokens
 * (no padding holes); each tick builds the attention inputs for the active rows only.
 */
import type { Env } from '../gym/env.js';
import { Episode, MAX_CALL_TOKENS, makeTrajectory, type Trajectory } from '../gym/episode.js';
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { Rng } from '../rng.js';
import { defaultThreads } from '../tf/workers.js';
import { makeTokenCache } from './kv-split.js';
import type { TinyAgent } from './tinyagent.js';

export { KVCache, type KVPad } from './kv-cache.js';

/** Sample one id from logits[offset : offset + V] at a temperature; returns the id and its log-prob. */
export function sampleNext(
  logits: Float32Array,
  offset: number,
  V: number,
  temperature: number,
  rng: Rng,
): { id: number; logp: number } {
  const t = temperature > 0 ? temperature : 1;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[offset + i] / t);
  let z = 0;
  for (let i = 0; i < V; i++) z += Math.exp(logits[offset + i] / t - max);
  const logZ = Math.log(z) + max;
  if (temperature <= 0) {
    // greedy
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[offset + i] > logits[offset + best]) best = i;
    return { id: best, logp: logits[offset + best] / t - logZ };
  }
  const u = rng.float() * z;
  let acc = 0;
  for (let i = 0; i < V; i++) {
    acc += Math.exp(logits[offset + i] / t - max);
    if (u < acc) return { id: i, logp: logits[offset + i] / t - logZ };
  }
  return { id: V - 1, logp: logits[offset + V - 1] / t - logZ };
}

export interface RolloutOptions {
  temperature?: number;
  maxLen?: number;
  /**
   * Threads to sample on (this one and worker threads, each holding a block of the rows' KV cache):
   * the episodes are the same, bit for bit, with any number. Default: the machine's cores, at most
   * 4 (EPISODE_LAB_THREADS caps it).
   */
  threads?: number;
}

/** The tokens a call is generated from (the episode so far, or a context view of it). */
export interface CallView {
  ids: number[];
  owner: number[];
  turn: number[];
}

/** A call as it was sampled: its episode, its index, the view it saw, its tokens and log-probs. */
export interface SampledCall {
  episode: number;
  call: number;
  view: CallView;
  ids: number[];
  logps: number[];
}

/**
 * The lockstep sampler: one episode per (env, task), each advancing one sampled token per tick.
 * `viewOf(episode)` gives the tokens a new call is generated from (default: the whole episode).
 * The KV cache is kept while the new view extends what the row holds and rebuilt otherwise, so the
 * whole-episode view never recomputes anything. Deterministic for the generator's state.
 */
export function lockstepRollout(
  model: TinyAgent,
  envs: readonly Env[],
  tasks: readonly Task[],
  tok: Tokenizer,
  rng: Rng,
  opts: RolloutOptions = {},
  viewOf?: (ep: Episode) => CallView,
): { trajs: Trajectory[]; calls: SampledCall[] } {
  if (envs.length !== tasks.length) throw new Error('rollout: one env per task');
  const temperature = opts.temperature ?? 1;
  const maxLen = Math.min(opts.maxLen ?? model.config.contextLength, model.config.contextLength);
  const V = model.config.vocabSize;
  if (V !== tok.size)
    throw new Error(`the model's vocabulary (${V}) differs from the tokenizer's (${tok.size})`);
  const episodes = tasks.map((t, i) => new Episode(envs[i], t, tok, maxLen));
  const cache = makeTokenCache(model, episodes.length, opts.threads ?? defaultThreads());
  const held: number[][] = episodes.map(() => []); // what each row's cache holds
  const views: CallView[] = episodes.map(() => ({ ids: [], owner: [], turn: [] }));
  const current = episodes.map(() => ({ ids: [] as number[], logps: [] as number[] }));
  const calls: SampledCall[] = [];
  let active = episodes.map((_, i) => i).filter((i) => !episodes[i].done);
  try {
    while (active.length) {
      const chunks = active.map((b) => {
        if (current[b].ids.length > 0) return current[b].ids.slice(-1);
        // A new call starts: fix its view, and reuse the cache if the view extends it.
        const ep = episodes[b];
        const v = viewOf
          ? viewOf(ep)
          : { ids: ep.ids.slice(), owner: ep.owner.slice(), turn: ep.turn.slice() };
        views[b] = v;
        const h = held[b];
        if (h.length > v.ids.length || h.some((x, i) => v.ids[i] !== x)) {
          cache.reset(b);
          held[b] = [];
        }
        return v.ids.slice(held[b].length);
      });
      const logits = cache.step(active, chunks);
      active.forEach((b, a) => {
        held[b].push(...chunks[a]);
        const { id, logp } = sampleNext(logits, a * V, V, temperature, rng);
        const call = current[b];
        call.ids.push(id);
        call.logps.push(logp);
        if (id === tok.callEndId || call.ids.length === MAX_CALL_TOKENS) {
          const ep = episodes[b];
          calls.push({ episode: b, call: ep.nCalls, view: views[b], ids: call.ids, logps: call.logps });
          ep.act(call.ids, call.logps);
          current[b] = { ids: [], logps: [] };
        }
      });
      active = active.filter((b) => !episodes[b].done);
    }
  } finally {
    cache.close();
  }
  return { trajs: episodes.map(makeTrajectory), calls };
}

/**
 * Sample one episode per (env, task) in lockstep, every call seeing the whole episode so far (the
 * chapter's `rollout_batch`). The same seed gives the same episodes, token for token.
 */
export function rolloutBatch(
  model: TinyAgent,
  envs: readonly Env[],
  tasks: readonly Task[],
  tok: Tokenizer,
  rng: Rng,
  opts: RolloutOptions = {},
): Trajectory[] {
  return lockstepRollout(model, envs, tasks, tok, rng, opts).trajs;
}
