/**
 * Episodes grow token by token; every token carries its owner and its turn. A finished episode
 * becomes a `Trajectory`, the unit that samplers return, trainers consume, run files store and
 * the inspector shows.
 *
 * Conventions (shapes as in the chapter): `ids`, `owner`, `turn` have one entry per token [T];
 * `actionMask` and `logps` have one entry per *predicted* position [T-1]: position i predicts
 * ids[i+1], and `actionMask[i]` is 1 exactly when ids[i+1] was sampled by the policy.
 */
import type { Env } from './env.js';
import type { EpisodeInfo } from './rewards.js';
import type { Task } from './tasks.js';
import type { Tokenizer } from './tokenizer.js';

/** Who produced a token. Template tokens are `<obs>` and `</obs>`; the issue is prompt. */
export const OWNER = { template: 0, prompt: 1, policy: 2, tool: 3 } as const;
export type OwnerName = keyof typeof OWNER;
export const OWNER_NAMES: readonly OwnerName[] = ['template', 'prompt', 'policy', 'tool'];

/** A call ends at `</call>` or after this many tokens (the longest valid call has 4). */
export const MAX_CALL_TOKENS = 6;
/** TinyAgent's context length. */
export const CONTEXT_LENGTH = 256;

export interface Action {
  ids: number[];
  text: string;
  logps: number[];
}

export class Episode {
  readonly ids: number[] = [];
  readonly owner: number[] = [];
  readonly turn: number[] = [];
  /** Sampling log-prob of each token (0 for tokens the policy did not sample). */
  readonly logp: number[] = [];
  readonly actions: Action[] = [];
  done = false;
  reward = 0;
  info: EpisodeInfo | null = null;

  constructor(
    readonly env: Env,
    readonly task: Task,
    readonly tok: Tokenizer,
    readonly maxLen = CONTEXT_LENGTH,
  ) {
    const prompt = tok.encode(env.reset(task));
    if (prompt.length + MAX_CALL_TOKENS > maxLen)
      throw new Error(
        `task ${task.id}: its prompt (${prompt.length} tokens) leaves no room for a call in ${maxLen}`,
      );
    this.push(prompt, OWNER.prompt, 0);
  }

  /** Index of the next call (the number of calls made so far). */
  get nCalls(): number {
    return this.actions.length;
  }

  /** Append one call (token ids and their sampling log-probs) and the environment's answer. */
  act(callIds: readonly number[], logps?: readonly number[]): void {
    if (this.done) throw new Error('act() on a finished episode');
    if (callIds.length === 0 || callIds.length > MAX_CALL_TOKENS)
      throw new Error(`a call has 1 to ${MAX_CALL_TOKENS} tokens, got ${callIds.length}`);
    const lp = logps ?? callIds.map(() => 0);
    if (lp.length !== callIds.length) throw new Error('act(): one log-prob per call token');
    const k = this.actions.length;
    const text = this.tok.decode(callIds);
    this.actions.push({ ids: callIds.slice(), text, logps: lp.slice() });
    this.push(callIds, OWNER.policy, k, lp);
    const r = this.env.step(text);
    if (r.done) {
      this.end(r.reward, r.info as EpisodeInfo);
      return;
    }
    const obs = this.tok.encode(r.obs);
    if (this.ids.length + obs.length + 2 + MAX_CALL_TOKENS > this.maxLen) {
      // The next call would not fit in the context: the episode ends here, unsubmitted.
      const f = this.env.finish('truncated');
      this.end(f.reward, f.info as EpisodeInfo);
      return;
    }
    this.push([this.tok.obsStartId], OWNER.template, k);
    this.push(obs, OWNER.tool, k);
    this.push([this.tok.obsEndId], OWNER.template, k);
  }

  private push(ids: readonly number[], owner: number, turn: number, logps?: readonly number[]): void {
    ids.forEach((id, i) => {
      this.ids.push(id);
      this.owner.push(owner);
      this.turn.push(turn);
      this.logp.push(logps ? logps[i] : 0);
    });
  }

  private end(reward: number, info: EpisodeInfo): void {
    this.done = true;
    this.reward = reward;
    this.info = info;
  }
}

/** A finished episode as training data (the chapter's `Trajectory`). */
export interface Trajectory {
  ids: number[];
  owner: number[];
  turn: number[];
  /** [T-1]: 1 where ids[i+1] was sampled by the policy. */
  actionMask: number[];
  /** [T-1]: sampling log-prob of ids[i+1] (0 off the mask). */
  logps: number[];
  reward: number;
  info: EpisodeInfo;
  /** The (renamed) task the episode ran on. */
  task: Pick<Task, 'id' | 'fname' | 'issue' | 'source' | 'kind' | 'template'>;
}

export function makeTrajectory(ep: Episode): Trajectory {
  if (!ep.done || !ep.info) throw new Error('makeTrajectory() needs a finished episode');
  const T = ep.ids.length;
  const actionMask: number[] = [];
  const logps: number[] = [];
  for (let i = 0; i + 1 < T; i++) {
    const isPolicy = ep.owner[i + 1] === OWNER.policy;
    actionMask.push(isPolicy ? 1 : 0);
    logps.push(isPolicy ? ep.logp[i + 1] : 0);
  }
  const { id, fname, issue, source, kind, template } = ep.task;
  return {
    ids: ep.ids.slice(),
    owner: ep.owner.slice(),
    turn: ep.turn.slice(),
    actionMask,
    logps,
    reward: ep.reward,
    info: { ...ep.info },
    task: { id, fname, issue, source, kind, template },
  };
}

/** One call of an episode as text (`<call> test </call>`) and the observation that answered it (null when none was appended). */
export interface CallText {
  call: string;
  obs: string | null;
}

/** The calls of an episode in order, decoded, each with its observation's text (without `<obs>`). */
export function callTexts(
  t: Pick<Trajectory, 'ids' | 'owner' | 'turn'>,
  tok: { decode(ids: readonly number[]): string },
): CallText[] {
  const calls: { call: number[]; obs: number[] }[] = [];
  t.ids.forEach((id, i) => {
    const owner = t.owner[i];
    if (owner !== OWNER.policy && owner !== OWNER.tool) return;
    const k = t.turn[i];
    while (calls.length <= k) calls.push({ call: [], obs: [] });
    (owner === OWNER.policy ? calls[k].call : calls[k].obs).push(id);
  });
  return calls.map((c) => ({ call: tok.decode(c.call), obs: c.obs.length ? tok.decode(c.obs) : null }));
}

/** Pad each row to `length` with `value` (rows longer than `length` are an error). */
export function padRows(rows: readonly (readonly number[])[], length: number, value: number): number[][] {
  return rows.map((r) => {
    if (r.length > length) throw new Error(`padRows: a row of ${r.length} does not fit in ${length}`);
    const out = r.slice();
    while (out.length < length) out.push(value);
    return out;
  });
}

export interface Batch {
  /** [B, T] token ids, padded with the pad id. */
  ids: number[][];
  /** [B, T-1] 1 on policy-sampled predicted positions. */
  actionMask: number[][];
  /** [B, T-1] turn of each predicted token (-1 on padding). */
  turnIds: number[][];
  /** [B, T-1] owner of each predicted token (-1 on padding). */
  owner: number[][];
  /** [B, T-1] sampling log-probs. */
  oldLogps: number[][];
  /** [B] unpadded lengths. */
  lengths: number[];
}

/** Pad a batch of trajectories to the longest one (the chapter's `collate`). */
export function collate(trajs: readonly Trajectory[], padId: number): Batch {
  if (trajs.length === 0) throw new Error('collate() needs at least one trajectory');
  const T = Math.max(...trajs.map((t) => t.ids.length));
  return {
    ids: padRows(
      trajs.map((t) => t.ids),
      T,
      padId,
    ),
    actionMask: padRows(
      trajs.map((t) => t.actionMask),
      T - 1,
      0,
    ),
    turnIds: padRows(
      trajs.map((t) => t.turn.slice(1)),
      T - 1,
      -1,
    ),
    owner: padRows(
      trajs.map((t) => t.owner.slice(1)),
      T - 1,
      -1,
    ),
    oldLogps: padRows(
      trajs.map((t) => t.logps),
      T - 1,
      0,
    ),
    lengths: trajs.map((t) => t.ids.length),
  };
}
