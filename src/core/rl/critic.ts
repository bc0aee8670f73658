/**
 * Credit assignment with a critic (section 12.2): values per predicted position, the critic's
 * warm-up on base-agent episodes, and the advantage function of the chapter's `train_credit`
 * (per-call rewards, critic values, token- or turn-level GAE, whitening, one critic step per
 * training step).
 */
import * as tf from '@tensorflow/tfjs-core';
import { type Batch, collate, type Trajectory } from '../gym/episode.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { makeCritic, type TinyAgent } from '../model/tinyagent.js';
import type { Rng } from '../rng.js';
import {
  explainedVariance,
  gaeAdvantages,
  maskedWhiten,
  perCallRewards,
  perCallRewardsOf,
  returnsToGo,
  turnAdvantages,
} from './advantages.js';
import type { RLConfig } from './config.js';
import { clipGradients, episodeGroups } from './grpo.js';
import type { AdvantageFn } from './train.js';
import { valueLoss } from './value-loss.js';

/** Critic values [B, T-1]: the value of the state before each predicted token (the chapter's `critic_values`). */
export function criticValues(critic: TinyAgent, ids: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, T] = ids.shape;
    return tf.slice(critic.values(ids), [0, 0], [B, T - 1]) as tf.Tensor2D;
  });
}

/** Rows per forward or backward pass of the critic: a whole batch at once can exhaust wasm memory. */
export const CRITIC_CHUNK = 32;

/** Row chunks of at most `size` rows: the length buckets of `rlUpdate`, so a chunk is padded little. */
function rowChunks(lengths: readonly number[], size: number): number[][] {
  const order = episodeGroups(lengths).flat();
  const chunks: number[][] = [];
  for (let i = 0; i < order.length; i += size) chunks.push(order.slice(i, i + size));
  return chunks;
}

/** criticValues on a collated batch, as arrays (computed in chunks of CRITIC_CHUNK rows). */
export function criticValuesOf(critic: TinyAgent, batch: Batch, chunk = CRITIC_CHUNK): number[][] {
  const T = batch.ids[0]?.length ?? 0;
  const out: number[][] = new Array(batch.ids.length);
  for (const rows of rowChunks(batch.lengths, chunk)) {
    const Tc = Math.max(2, ...rows.map((i) => batch.lengths[i]));
    const v = tf.tidy(() =>
      criticValues(
        critic,
        tf.tensor2d(
          rows.map((i) => batch.ids[i].slice(0, Tc)),
          undefined,
          'int32',
        ),
      ).arraySync(),
    );
    rows.forEach((i, j) => {
      out[i] = [...v[j], ...new Array(T - Tc).fill(0)];
    });
  }
  return out;
}

/**
 * One regression step of the critic on (returns) over masked positions; returns the loss. The
 * gradient is accumulated over chunks of CRITIC_CHUNK rows (each cut after its last masked
 * position, which a causal model's earlier values do not depend on), weighted by their share of
 * the masked positions: the same loss and gradient as the whole batch at once, in bounded memory.
 * `o.clip` clips the value change (PPO's value clipping; none by default); `o.maxGradNorm` clips the
 * gradient's global norm (none by default, as the chapter's critic; the recipes pass
 * RECIPE_CRITIC_MAX_GRAD_NORM).
 */
export function criticStep(
  critic: TinyAgent,
  opt: tf.Optimizer,
  ids: number[][],
  oldValues: number[][],
  returns: number[][],
  mask: number[][],
  o: { clip?: number | null; chunk?: number; maxGradNorm?: number | null } = {},
): number {
  const clip = o.clip ?? null;
  const chunk = o.chunk ?? CRITIC_CHUNK;
  const lastMasked = mask.map((r) => r.lastIndexOf(1));
  const count = (rows: number[][]) => rows.reduce((a, r) => a + r.reduce((p, q) => p + q, 0), 0);
  const total = count(mask);
  if (total === 0) return 0;
  const vars = critic.variables();
  let acc: tf.NamedTensorMap | null = null;
  let loss = 0;
  for (const rows of rowChunks(
    lastMasked.map((l) => l + 2),
    chunk,
  )) {
    const Tc = Math.max(2, ...rows.map((i) => lastMasked[i] + 2));
    const cut = (a: number[][], n: number) => rows.map((i) => a[i].slice(0, n));
    const m = cut(mask, Tc - 1);
    const share = count(m) / total;
    if (share === 0) continue;
    const { value, grads } = tf.tidy(() => {
      const idsT = tf.tensor2d(cut(ids, Tc), undefined, 'int32');
      const old = tf.tensor2d(cut(oldValues, Tc - 1));
      const ret = tf.tensor2d(cut(returns, Tc - 1));
      const mT = tf.tensor2d(m);
      return tf.variableGrads(
        () => tf.mul(share, valueLoss(criticValues(critic, idsT), old, ret, mT, clip)) as tf.Scalar,
        vars,
      );
    });
    loss += value.dataSync()[0];
    value.dispose();
    if (acc === null) acc = grads;
    else {
      const prev: tf.NamedTensorMap = acc;
      acc = Object.fromEntries(Object.keys(prev).map((k) => [k, tf.add(prev[k], grads[k])]));
      tf.dispose([...Object.values(prev), ...Object.values(grads)]);
    }
  }
  if (acc !== null) {
    const g = acc;
    tf.tidy(() => {
      if (o.maxGradNorm != null) clipGradients(g, o.maxGradNorm);
      opt.applyGradients(g);
    });
    tf.dispose(Object.values(g));
  }
  return loss;
}

/**
 * The critic's gradient-norm clip in the recipes (12.2, exercise 6): their published figures were
 * measured with it. The chapter's critic does not clip; criticStep does not by default.
 */
export const RECIPE_CRITIC_MAX_GRAD_NORM = 1;

export interface WarmOptions {
  steps?: number;
  batchSize?: number;
  lr?: number;
  stepPenalty?: number;
  /** Token rewards [B, T-1] to regress the returns of (default: per-call rewards with stepPenalty). */
  tokenRewards?: (trajs: readonly Trajectory[], mask: number[][]) => number[][];
}

/**
 * A critic copied from the policy and regressed on the returns-to-go of base-agent episodes
 * (the chapter: 60 steps of 64 episodes, Adam 1e-3), under the step penalty or any token rewards. Returns the critic and its explained variance
 * on the warm-up episodes before and after.
 */
export function warmCritic(
  policy: TinyAgent,
  trajs: readonly Trajectory[],
  tok: Tokenizer,
  rng: Rng,
  o: WarmOptions = {},
): { critic: TinyAgent; evBefore: number; evAfter: number; losses: number[] } {
  const steps = o.steps ?? 60;
  const size = o.batchSize ?? 64;
  const critic = makeCritic(policy);
  const opt = tf.train.adam(o.lr ?? 1e-3);
  const all = collate(trajs, tok.padId);
  const rewards = o.tokenRewards
    ? o.tokenRewards(trajs, all.actionMask)
    : perCallRewards(trajs, all.actionMask, o.stepPenalty ?? 0);
  const returns = returnsToGo(rewards, all.actionMask);
  const ev = () => explainedVariance(criticValuesOf(critic, all), returns, all.actionMask);
  const evBefore = ev();
  const losses: number[] = [];
  for (let s = 0; s < steps; s++) {
    const idx = Array.from({ length: size }, () => rng.int(trajs.length));
    const sub = collate(
      idx.map((i) => trajs[i]),
      tok.padId,
    );
    const T1 = sub.ids[0].length - 1;
    const ret = idx.map((i) => padTo(returns[i], T1));
    losses.push(
      criticStep(critic, opt, sub.ids, ret, ret, sub.actionMask, {
        maxGradNorm: RECIPE_CRITIC_MAX_GRAD_NORM,
      }),
    );
  }
  opt.dispose();
  return { critic, evBefore, evAfter: ev(), losses };
}

function padTo(row: readonly number[], n: number): number[] {
  const out = row.slice(0, n);
  while (out.length < n) out.push(0);
  return out;
}

export interface CreditState {
  critic: TinyAgent;
  opt: tf.Optimizer;
  /** Statistics of the last step: critic loss and explained variance. */
  last: { value_loss: number; explained_variance: number };
}

/**
 * The advantage function of `train_credit`: per-call rewards (every term of the run's reward),
 * critic values, token- or turn-level GAE (gamma 1, lambda `lam`), whitened over the policy
 * tokens; then one critic step on the batch's returns-to-go (the critic update does not change
 * this step's advantages).
 */
export function creditAdvantages(
  scheme: 'token' | 'turn',
  state: CreditState,
  tok: Tokenizer,
  lam = 0.95,
): AdvantageFn {
  return (trajs: Trajectory[], cfg: RLConfig) => {
    const batch = collate(trajs, tok.padId);
    const mask = batch.actionMask;
    const rewards = perCallRewardsOf(trajs, mask, cfg.reward, tok);
    const values = criticValuesOf(state.critic, batch);
    const adv =
      scheme === 'token'
        ? gaeAdvantages(rewards, values, mask, 1, lam).advantages
        : turnAdvantages(rewards, values, mask, batch.turnIds, 1, lam);
    const white = maskedWhiten(adv, mask);
    const returns = returnsToGo(rewards, mask);
    state.last = {
      explained_variance: explainedVariance(values, returns, mask),
      value_loss: criticStep(state.critic, state.opt, batch.ids, values, returns, mask, {
        maxGradNorm: RECIPE_CRITIC_MAX_GRAD_NORM,
      }),
    };
    return white.map((row, b) => row.slice(0, trajs[b].ids.length - 1));
  };
}
