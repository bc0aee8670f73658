/**
 * Truncated episodes in the loss (section 12.7 and exercise 6): masked from it (a baseline over the
 * submitted episodes only), or bootstrapped from a critic's value of the state they ended in.
 */
import * as tf from '@tensorflow/tfjs-core';
import { collate, type Trajectory } from '../gym/episode.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { TinyAgent } from '../model/tinyagent.js';
import {
  bootstrappedTruncationReturns,
  explainedVariance,
  groupAdvantages,
  maskedTruncationAdvantages,
  outcomeRewards,
  perCallRewardsOf,
  returnsToGo,
} from './advantages.js';
import type { RLConfig } from './config.js';
import { criticStep, criticValues, criticValuesOf, RECIPE_CRITIC_MAX_GRAD_NORM } from './critic.js';
import type { AdvantageFn } from './train.js';

/** Section 12.7's masked truncation as a trainer AdvantageFn: baseline over submitted episodes, 0 for the rest. */
export const maskedTruncation: AdvantageFn = (trajs, cfg) =>
  maskedTruncationAdvantages(
    trajs.map((t) => t.reward),
    trajs.map((t) => t.info.submitted),
    cfg.groupSize,
  );

/** True for an episode that ended on a limit (turn budget or context) rather than by submitting. */
export const endedOnLimit = (info: { submitted: boolean; stop: string }) =>
  !info.submitted && (info.stop === 'max_turns' || info.stop === 'truncated');

/**
 * The critic's value of the state each episode ended in, V(s_K) [B]: its value of the whole
 * episode as a prefix (one pad token is appended so that the longest row has that position too).
 */
export function endValues(critic: TinyAgent, trajs: readonly Trajectory[], tok: Tokenizer): number[] {
  const batch = collate(trajs, tok.padId);
  const ids = batch.ids.map((row) => [...row, tok.padId]);
  const values = tf.tidy(() => criticValues(critic, tf.tensor2d(ids, undefined, 'int32')).arraySync());
  return trajs.map((t, b) => values[b][t.ids.length - 1]);
}

/** Token rewards [B, T-1] of a batch under cfg's reward, plus bootstrap values on the last call of limit-ended episodes. */
export function bootstrappedTokenRewards(
  trajs: readonly Trajectory[],
  mask: number[][],
  cfg: RLConfig,
  bootstrap: readonly number[] | null,
): number[][] {
  const rewards = perCallRewardsOf(trajs, mask, cfg.reward);
  if (bootstrap) {
    const last = outcomeRewards(
      trajs.map((t, b) => (endedOnLimit(t.info) ? bootstrap[b] : 0)),
      mask,
    );
    return rewards.map((row, b) => row.map((r, i) => r + last[b][i]));
  }
  return rewards;
}

export interface BootstrapState {
  critic: TinyAgent;
  opt: tf.Optimizer;
  tok: Tokenizer;
  /** Statistics of the last step. */
  last: { explained_variance: number; bootstrap_mean: number; limit_share: number };
}

/**
 * Exercise 6 as a trainer AdvantageFn: R_hat = R + V(s_K) for episodes that ended on a limit, R
 * otherwise (`bootstrappedTruncationReturns`), group-normalised; then one critic step on the
 * batch's bootstrapped returns-to-go (the step does not change this batch's advantages).
 */
export function bootstrapAdvantages(state: BootstrapState): AdvantageFn {
  return (trajs, cfg) => {
    const v = endValues(state.critic, trajs, state.tok);
    const limit = trajs.map((t) => endedOnLimit(t.info));
    const rHat = bootstrappedTruncationReturns(
      trajs.map((t) => t.reward),
      limit,
      v,
    );
    const batch = collate(trajs, state.tok.padId);
    const returns = returnsToGo(bootstrappedTokenRewards(trajs, batch.actionMask, cfg, v), batch.actionMask);
    const values = criticValuesOf(state.critic, batch);
    const nLimit = limit.filter(Boolean).length;
    state.last = {
      explained_variance: explainedVariance(values, returns, batch.actionMask),
      bootstrap_mean: nLimit ? v.filter((_, b) => limit[b]).reduce((a, x) => a + x, 0) / nLimit : Number.NaN,
      limit_share: nLimit / trajs.length,
    };
    criticStep(state.critic, state.opt, batch.ids, values, returns, batch.actionMask, {
      maxGradNorm: RECIPE_CRITIC_MAX_GRAD_NORM,
    });
    return groupAdvantages(rHat, cfg.groupSize);
  };
}
