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
  returnsToGo,
  turnAdvantages,
} from './advantages.js';
import type { RLConfig } from './config.js';
import { clipGradients } from './grpo.js';
import type { AdvantageFn } from './train.js';
import { valueLoss } from './value-loss.js';

/** Critic values [B, T-1]: the value of the state before each predicted token (the chapter's `critic_values`). */
export function criticValues(critic: TinyAgent, ids: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, T] = ids.shape;
    return tf.slice(critic.values(ids), [0, 0], [B, T - 1]) as tf.Tensor2D;
  });
}

/** criticValues on a collated batch, as arrays. */
export function criticValuesOf(critic: TinyAgent, batch: Batch): number[][] {
  return tf.tidy(() => criticValues(critic, tf.tensor2d(batch.ids, undefined, 'int32')).arraySync());
}

/** One regression step of the critic on (returns) over masked positions; returns the loss. */
export function criticStep(
  critic: TinyAgent,
  opt: tf.Optimizer,
  ids: number[][],
  oldValues: number[][],
  returns: number[][],
  mask: number[][],
  clip: number | null = null,
): number {
  return tf.tidy(() => {
    const idsT = tf.tensor2d(ids, undefined, 'int32');
    const old = tf.tensor2d(oldValues);
    const ret = tf.tensor2d(returns);
    const m = tf.tensor2d(mask);
    const { value, grads } = tf.variableGrads(
      () => valueLoss(criticValues(critic, idsT), old, ret, m, clip),
      critic.variables(),
    );
    clipGradients(grads, 1);
    opt.applyGradients(grads as unknown as Record<string, tf.Variable>);
    return value.dataSync()[0];
  });
}

export interface WarmOptions {
  steps?: number;
  batchSize?: number;
  lr?: number;
  stepPenalty?: number;
}

/**
 * A critic copied from the policy and regressed on the returns-to-go of base-agent episodes
 * (the chapter: 60 steps of 64 episodes, Adam 1e-3). Returns the critic and its explained variance
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
  const rewards = perCallRewards(trajs, all.actionMask, o.stepPenalty ?? 0);
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
    losses.push(criticStep(critic, opt, sub.ids, ret, ret, sub.actionMask));
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
 * The advantage function of `train_credit`: per-call rewards, critic values, token- or turn-level
 * GAE (gamma 1, lambda `lam`), whitened over the policy tokens; then one critic step on the batch's
 * returns-to-go (the critic update does not change this step's advantages).
 */
export function creditAdvantages(
  scheme: 'token' | 'turn',
  state: CreditState,
  tok: Tokenizer,
  stepPenalty: number,
  lam = 0.95,
): AdvantageFn {
  return (trajs: Trajectory[], _cfg: RLConfig) => {
    const batch = collate(trajs, tok.padId);
    const mask = batch.actionMask;
    const rewards = perCallRewards(trajs, mask, stepPenalty);
    const values = criticValuesOf(state.critic, batch);
    const adv =
      scheme === 'token'
        ? gaeAdvantages(rewards, values, mask, 1, lam).advantages
        : turnAdvantages(rewards, values, mask, batch.turnIds, 1, lam);
    const white = maskedWhiten(adv, mask);
    const returns = returnsToGo(rewards, mask);
    state.last = {
      explained_variance: explainedVariance(values, returns, mask),
      value_loss: criticStep(state.critic, state.opt, batch.ids, values, returns, mask),
    };
    return white.map((row, b) => row.slice(0, trajs[b].ids.length - 1));
  };
}
