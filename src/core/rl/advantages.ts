/**
 * Rewards, returns and advantages on plain arrays (section 12.2), for multi-turn episodes.
 *
 * Shapes follow `collate` (src/core/gym/episode.ts): token-level arrays are [B, T-1] over
 * *predicted* positions: position i predicts token i+1, `mask[b][i]` is 1 exactly when token i+1
 * was sampled by the policy, `turnIds[b][i]` is the turn of token i+1 (-1 on padding), and
 * `values[b][i]` is the critic's value of the prefix ids[0..i], i.e. of the state in which token
 * i+1 is about to be chosen.
 *
 * A *call* is a maximal run of 1s in a mask row (calls are always separated by an observation,
 * so runs and turns coincide on episodes). Every estimator here works on policy positions only:
 * observation, prompt, template and padding positions neither receive an advantage nor take a
 * discounting step of their own (the value at an observation boundary bootstraps the next call).
 * Rewards placed off the mask are ignored by every estimator.
 */
import { OWNER, type Trajectory } from '../gym/episode.js';
import { type RewardSpec, verdictOf } from '../gym/rewards.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { CallRow } from './call-row.js';

/** [B, T] rows of numbers (T may differ between functions but is the same within a call). */
export type Matrix = number[][];

const zerosLike = (x: readonly (readonly number[])[]): Matrix => x.map((row) => row.map(() => 0));

function checkSameShape(
  name: string,
  x: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
) {
  if (x.length !== mask.length) throw new Error(`${name} has ${x.length} rows, the mask ${mask.length}`);
  x.forEach((row, b) => {
    if (row.length !== mask[b].length)
      throw new Error(`${name} row ${b} has ${row.length} entries, the mask row ${mask[b].length}`);
  });
}

/** Positions where a mask row is 1, in order: [T] -> [n]. */
export function maskedPositions(maskRow: readonly number[]): number[] {
  const out: number[] = [];
  maskRow.forEach((m, i) => {
    if (m !== 0) out.push(i);
  });
  return out;
}

/** The calls of one mask row as [start, end] position pairs (inclusive), maximal runs of 1s. */
export function callSpans(maskRow: readonly number[]): [number, number][] {
  const spans: [number, number][] = [];
  for (let i = 0; i < maskRow.length; i++) {
    if (maskRow[i] === 0) continue;
    const start = i;
    while (i + 1 < maskRow.length && maskRow[i + 1] !== 0) i++;
    spans.push([start, i]);
  }
  return spans;
}

/** The calls of one row grouped by turn id: each call's masked positions, in order of first position. */
function callsByTurn(maskRow: readonly number[], turnRow: readonly number[]): number[][] {
  const byTurn = new Map<number, number[]>();
  maskRow.forEach((m, i) => {
    if (m === 0) return;
    const k = turnRow[i];
    if (k === undefined || k < 0) throw new Error(`a policy position (${i}) has no turn id (got ${k})`);
    const list = byTurn.get(k);
    if (list) list.push(i);
    else byTurn.set(k, [i]);
  });
  return [...byTurn.values()].sort((a, b) => a[0] - b[0]);
}

// ---------------------------------------------------------------------------------------------
// Token rewards
// ---------------------------------------------------------------------------------------------

/** Token rewards [B, T]: verdict[b] on the last policy token of row b, 0 elsewhere (rows without one get nothing). */
export function outcomeRewards(verdict: readonly number[], mask: readonly (readonly number[])[]): Matrix {
  if (verdict.length !== mask.length)
    throw new Error(`outcomeRewards: ${verdict.length} verdicts for ${mask.length} mask rows`);
  return mask.map((row, b) => {
    const out = row.map(() => 0);
    const pos = maskedPositions(row);
    if (pos.length > 0) out[pos[pos.length - 1]] = verdict[b];
    return out;
  });
}

export interface PerCallRewardOptions {
  /**
   * The verdict of a submission that fails the hidden test. Default 0, the chapter's
   * `float(submitted and hidden_pass)`; -1 for section 12.7's never-submit run.
   */
  wrongSubmit?: number;
  /** The verdict of an unsubmitted episode (default 0; `RewardSpec.unsubmitted`). */
  unsubmitted?: number;
  /**
   * Subtracted on the last token of each invalid call (a malformed call, an unknown tool or op, or
   * an edit beyond the budget). Needs `tok`: a call is invalid when its observation starts with
   * `error`; the final call has no observation, and is invalid when `info.n_invalid` counts one
   * more invalid call than the observations show.
   */
  invalidPenalty?: number;
  tok?: Pick<Tokenizer, 'id'>;
}

/**
 * Token rewards [B, T] (the chapter's `per_call_rewards`): -stepPenalty on each call's last policy
 * token, the hidden-test verdict on the episode's last; with `opts`, the rest of `makeReward`'s terms
 * too, so that each row sums to `rewardOf(makeReward('hidden', {stepPenalty, ...opts}), info)`.
 */
export function perCallRewards(
  trajs: readonly Pick<Trajectory, 'info' | 'ids' | 'owner' | 'turn'>[],
  mask: readonly (readonly number[])[],
  stepPenalty = 0,
  opts: PerCallRewardOptions = {},
): Matrix {
  if (trajs.length !== mask.length)
    throw new Error(`perCallRewards: ${trajs.length} trajectories for ${mask.length} mask rows`);
  const invalidPenalty = opts.invalidPenalty ?? 0;
  if (invalidPenalty !== 0 && !opts.tok) throw new Error('perCallRewards: invalidPenalty needs opts.tok');
  const spec = { wrongSubmit: opts.wrongSubmit ?? 0, unsubmitted: opts.unsubmitted ?? 0 };
  const verdict = trajs.map((t) => verdictOf(spec, t.info));
  const rewards = outcomeRewards(verdict, mask);
  mask.forEach((row, b) => {
    const spans = callSpans(row);
    const invalid = invalidPenalty !== 0 ? invalidCalls(trajs[b], spans.length, opts.tok!) : [];
    spans.forEach(([, end], k) => {
      rewards[b][end] -= stepPenalty + (invalid[k] ? invalidPenalty : 0);
    });
  });
  return rewards;
}

/** `perCallRewards` under every term of a reward spec: each row sums to `rewardOf(spec, info)`. */
export function perCallRewardsOf(
  trajs: readonly Pick<Trajectory, 'info' | 'ids' | 'owner' | 'turn'>[],
  mask: readonly (readonly number[])[],
  spec: RewardSpec,
  tok?: Pick<Tokenizer, 'id'>,
): Matrix {
  const { stepPenalty, wrongSubmit, unsubmitted, invalidPenalty } = spec;
  return perCallRewards(trajs, mask, stepPenalty, { wrongSubmit, unsubmitted, invalidPenalty, tok });
}

/** Which of an episode's nCalls calls were invalid (see PerCallRewardOptions.invalidPenalty). */
function invalidCalls(
  traj: Pick<Trajectory, 'info' | 'ids' | 'owner' | 'turn'>,
  nCalls: number,
  tok: Pick<Tokenizer, 'id'>,
): boolean[] {
  const errorId = tok.id('error');
  const out = new Array<boolean>(nCalls).fill(false);
  const seen = new Set<number>();
  traj.ids.forEach((id, i) => {
    const k = traj.turn[i];
    if (traj.owner[i] !== OWNER.tool || seen.has(k)) return;
    seen.add(k); // the first tool token of turn k
    if (id === errorId && k < nCalls) out[k] = true;
  });
  const counted = out.filter(Boolean).length;
  if (traj.info.n_invalid === counted + 1 && nCalls > 0 && !seen.has(nCalls - 1)) out[nCalls - 1] = true;
  else if (traj.info.n_invalid !== counted)
    throw new Error(
      `perCallRewards: info.n_invalid = ${traj.info.n_invalid} but the observations show ${counted} invalid calls`,
    );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Group (GRPO) advantages
// ---------------------------------------------------------------------------------------------

export interface GroupAdvantageOptions {
  eps?: number;
  /**
   * `'population'` (default: n in the denominator, as the trainer's `computeAdvantages`) or
   * `'sample'` (n-1, clamped to >= 1; torch's `std()`, and 12.7's masked truncation).
   */
  std?: 'sample' | 'population';
}

/**
 * GRPO outcome advantages [B]: (r - mean of its group) / (std of its group + eps), groups being
 * consecutive runs of `groupSize` episodes; population std unless `std: 'sample'`. A group whose
 * rewards are all equal gets 0.
 */
export function groupAdvantages(
  rewards: readonly number[],
  groupSize: number,
  opts: GroupAdvantageOptions = {},
): number[] {
  const eps = opts.eps ?? 1e-6;
  const sample = (opts.std ?? 'population') === 'sample';
  if (!Number.isInteger(groupSize) || groupSize < 1)
    throw new Error(`groupSize must be a positive integer, got ${groupSize}`);
  if (rewards.length % groupSize !== 0)
    throw new Error(`groupAdvantages: ${rewards.length} rewards do not split into groups of ${groupSize}`);
  const out: number[] = [];
  for (let g = 0; g < rewards.length; g += groupSize) {
    const r = rewards.slice(g, g + groupSize);
    const mean = r.reduce((s, x) => s + x, 0) / groupSize;
    const ss = r.reduce((s, x) => s + (x - mean) ** 2, 0);
    const std = Math.sqrt(ss / (sample ? Math.max(groupSize - 1, 1) : groupSize));
    for (const x of r) out.push((x - mean) / (std + eps));
  }
  return out;
}

/**
 * Section 12.7's masked truncation [B]: group mean and sample std (n-1, clamped to >= 1) over the
 * submitted episodes of each group only; unsubmitted episodes get advantage 0.
 */
export function maskedTruncationAdvantages(
  rewards: readonly number[],
  submitted: readonly boolean[],
  groupSize: number,
  eps = 1e-6,
): number[] {
  if (submitted.length !== rewards.length)
    throw new Error(`maskedTruncationAdvantages: ${rewards.length} rewards, ${submitted.length} flags`);
  if (!Number.isInteger(groupSize) || groupSize < 1 || rewards.length % groupSize !== 0)
    throw new Error(`maskedTruncationAdvantages: ${rewards.length} rewards in groups of ${groupSize}`);
  const out: number[] = [];
  for (let g = 0; g < rewards.length; g += groupSize) {
    const r = rewards.slice(g, g + groupSize);
    const keep = submitted.slice(g, g + groupSize);
    const n = Math.max(keep.filter(Boolean).length, 1);
    const mean = r.reduce((s, x, i) => s + (keep[i] ? x : 0), 0) / n;
    const ss = r.reduce((s, x, i) => s + (keep[i] ? (x - mean) ** 2 : 0), 0);
    const std = Math.sqrt(ss / Math.max(n - 1, 1));
    r.forEach((x, i) => {
      out.push(keep[i] ? (x - mean) / (std + eps) : 0);
    });
  }
  return out;
}

/**
 * Exercise 6, episode returns [B]: R_hat = R + V(s_K) for truncated episodes, R otherwise, where
 * R = sum of the episode's rewards and V(s_K) the critic's value of the state after its last call.
 */
export function bootstrappedTruncationReturns(
  rewards: readonly number[],
  truncated: readonly boolean[],
  valueAtTruncation: readonly number[],
): number[] {
  if (truncated.length !== rewards.length || valueAtTruncation.length !== rewards.length)
    throw new Error(
      'bootstrappedTruncationReturns: rewards, truncated and values must have one entry per episode',
    );
  return rewards.map((r, b) => r + (truncated[b] ? valueAtTruncation[b] : 0));
}

// ---------------------------------------------------------------------------------------------
// Token-level returns and GAE
// ---------------------------------------------------------------------------------------------

/**
 * Returns-to-go [B, T]: at each policy position, the discounted sum of rewards at this and later
 * policy positions (gamma applies once per policy token; other positions are skipped); 0 elsewhere.
 */
export function returnsToGo(
  rewards: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  gamma = 1,
): Matrix {
  checkSameShape('rewards', rewards, mask);
  const out = zerosLike(mask);
  mask.forEach((row, b) => {
    let G = 0;
    const pos = maskedPositions(row);
    for (let j = pos.length - 1; j >= 0; j--) {
      G = rewards[b][pos[j]] + gamma * G;
      out[b][pos[j]] = G;
    }
  });
  return out;
}

/**
 * Token-level GAE over policy positions -> {advantages, returns} [B, T]: with p_0 < p_1 < ... the
 * policy positions of a row, delta_j = r[p_j] + gamma V[p_{j+1}] - V[p_j] (V after the last = 0),
 * A_j = delta_j + gamma lam A_{j+1}, returns = A + V; 0 off the mask. So the next value of a call's
 * last token is the value at the first token of the next call.
 */
export function gaeAdvantages(
  rewards: readonly (readonly number[])[],
  values: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  gamma = 1,
  lam = 1,
): { advantages: Matrix; returns: Matrix } {
  checkSameShape('rewards', rewards, mask);
  checkSameShape('values', values, mask);
  const advantages = zerosLike(mask);
  const returns = zerosLike(mask);
  mask.forEach((row, b) => {
    const pos = maskedPositions(row);
    let lastgaelam = 0;
    let nextValue = 0;
    for (let j = pos.length - 1; j >= 0; j--) {
      const p = pos[j];
      const delta = rewards[b][p] + gamma * nextValue - values[b][p];
      lastgaelam = delta + gamma * lam * lastgaelam;
      advantages[b][p] = lastgaelam;
      returns[b][p] = lastgaelam + values[b][p];
      nextValue = values[b][p];
    }
  });
  return { advantages, returns };
}

/**
 * Turn-level GAE [B, T]: for the calls k = 0..K-1 of a row (policy positions grouped by turn id),
 * V(s_k) = value at the call's first policy position, r_k = sum of its rewards,
 * delta_k = r_k + gamma V(s_{k+1}) - V(s_k) (V(s_K) = 0), A_k = delta_k + gamma lam A_{k+1},
 * broadcast to every policy token of call k; 0 off the mask.
 */
export function turnAdvantages(
  rewards: readonly (readonly number[])[],
  values: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  turnIds: readonly (readonly number[])[],
  gamma = 1,
  lam = 1,
): Matrix {
  return turnGae(rewards, values, mask, turnIds, gamma, lam).advantages;
}

/** Per-call quantities of turn-level GAE for each row: r_k, V(s_k), V(s_{k+1}), delta_k, A_k and positions. */
export interface TurnGaeRow {
  positions: number[][];
  reward: number[];
  valueStart: number[];
  valueNext: number[];
  tdError: number[];
  advantage: number[];
}

/** Turn-level GAE with its per-call intermediate quantities ([B, T] advantages and one TurnGaeRow per row). */
export function turnGae(
  rewards: readonly (readonly number[])[],
  values: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  turnIds: readonly (readonly number[])[],
  gamma = 1,
  lam = 1,
): { advantages: Matrix; rows: TurnGaeRow[] } {
  checkSameShape('rewards', rewards, mask);
  checkSameShape('values', values, mask);
  checkSameShape('turnIds', turnIds, mask);
  const advantages = zerosLike(mask);
  const rows = mask.map((row, b): TurnGaeRow => {
    const positions = callsByTurn(row, turnIds[b]);
    const K = positions.length;
    const reward = positions.map((ps) => ps.reduce((s, p) => s + rewards[b][p], 0));
    const valueStart = positions.map((ps) => values[b][ps[0]]);
    const valueNext = valueStart.map((_, k) => (k + 1 < K ? valueStart[k + 1] : 0));
    const tdError = reward.map((r, k) => r + gamma * valueNext[k] - valueStart[k]);
    const advantage = new Array<number>(K).fill(0);
    let lastgaelam = 0;
    for (let k = K - 1; k >= 0; k--) {
      lastgaelam = tdError[k] + gamma * lam * lastgaelam;
      advantage[k] = lastgaelam;
      for (const p of positions[k]) advantages[b][p] = lastgaelam;
    }
    return { positions, reward, valueStart, valueNext, tdError, advantage };
  });
  return { advantages, rows };
}

// ---------------------------------------------------------------------------------------------
// Masked statistics
// ---------------------------------------------------------------------------------------------

/** Mean of x over positions where mask is 1 (a number; 0 when the mask is empty): [B, T], [B, T] -> scalar. */
export function maskedMeanRows(
  x: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
): number {
  checkSameShape('x', x, mask);
  let s = 0;
  let n = 0;
  mask.forEach((row, b) => {
    row.forEach((m, i) => {
      s += m * x[b][i];
      n += m;
    });
  });
  return n > 0 ? s / n : 0;
}

/**
 * Normalise x to mean 0, std 1 over positions where mask is 1; zero elsewhere: [B, T] -> [B, T].
 * The std is the population std over the mask (as the chapter's `masked_whiten`).
 */
export function maskedWhiten(
  x: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  eps = 1e-6,
): Matrix {
  const mean = maskedMeanRows(x, mask);
  const variance = maskedMeanRows(
    x.map((row) => row.map((v) => (v - mean) ** 2)),
    mask,
  );
  const std = Math.sqrt(variance);
  return x.map((row, b) =>
    row.map((v, i) => (mask[b][i] !== 0 ? ((v - mean) / (std + eps)) * mask[b][i] : 0)),
  );
}

/**
 * Explained variance of the critic over the mask: 1 - Var(returns - values) / Var(returns)
 * (population variances; NaN when the returns do not vary, as in CleanRL).
 */
export function explainedVariance(
  values: readonly (readonly number[])[],
  returns: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
): number {
  checkSameShape('values', values, mask);
  const variance = (x: readonly (readonly number[])[]) => {
    const m = maskedMeanRows(x, mask);
    return maskedMeanRows(
      x.map((row) => row.map((v) => (v - m) ** 2)),
      mask,
    );
  };
  const varReturns = variance(returns);
  if (varReturns === 0) return Number.NaN;
  return 1 - variance(returns.map((row, b) => row.map((v, i) => v - values[b][i]))) / varReturns;
}

// ---------------------------------------------------------------------------------------------
// Figure 12.1: the per-call table of one episode
// ---------------------------------------------------------------------------------------------

export type { CallRow } from './call-row.js';

/**
 * The per-call table of one episode (figure 12.1), from its turn-level GAE (`turnGae`'s row: r_k,
 * V(s_k), V(s_{k+1}), delta_k, A_k per call and the call's positions), its token-level advantages
 * [T-1] and its outcome advantage -> one row per call.
 */
export function callTable(
  traj: Pick<Trajectory, 'ids' | 'actionMask'>,
  turn: TurnGaeRow,
  advTok: readonly number[],
  advOutcome: number,
  tok: Pick<Tokenizer, 'decode'>,
): CallRow[] {
  const n = traj.actionMask.length;
  if (advTok.length < n) throw new Error(`callTable: advTok has ${advTok.length} entries, the episode ${n}`);
  return turn.positions.map((ps, k) => {
    const start = ps[0];
    const end = ps[ps.length - 1];
    const callAdv = ps.map((p) => advTok[p]);
    return {
      k,
      text: tok.decode(traj.ids.slice(start + 1, end + 2)), // predicted positions start..end hold tokens start+1..end+1
      start,
      end,
      reward: turn.reward[k],
      valueStart: turn.valueStart[k],
      valueNext: turn.valueNext[k],
      tdError: turn.tdError[k],
      advOutcome,
      advToken: callAdv.reduce((s, x) => s + x, 0) / callAdv.length,
      advTokenSpread: Math.max(...callAdv) - Math.min(...callAdv),
      advTurn: turn.advantage[k],
    };
  });
}
