/**
 * The policy-gradient loss on TF.js tensors: the one GRPO trains with and the mask debugger checks.
 * Shapes as in the chapter: log-probs, masks and advantages [B, T] over predicted positions.
 */
import * as tf from '@tensorflow/tfjs-core';

import type { LossMode } from './config.js';

export type { LossMode } from './config.js';

/** Mean of x over positions where mask is 1 (a scalar). */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.div(tf.sum(tf.mul(x, mask)), tf.maximum(tf.sum(mask), 1)) as tf.Scalar);
}

/**
 * Aggregate per-token loss terms [B, T] over the mask: `token_mean` divides by the number of
 * masked tokens in the batch; `seq_mean_token_mean` averages within each sequence, then over
 * sequences that have at least one masked token.
 *
 * With `denominator`, these rows are one part of a larger minibatch (split across workers): the
 * numerator is this part's, the denominator the whole minibatch's (its masked tokens, or its
 * sequences with a masked token), so the parts' losses and gradients add up to the whole one's.
 */
export function aggregate(
  terms: tf.Tensor2D,
  mask: tf.Tensor2D,
  mode: LossMode,
  denominator?: number,
): tf.Scalar {
  return tf.tidy(() => {
    if (mode === 'token_mean')
      return denominator === undefined
        ? maskedMean(terms, mask)
        : (tf.div(tf.sum(tf.mul(terms, mask)), denominator) as tf.Scalar);
    const perSeqCount = tf.sum(mask, 1);
    const perSeq = tf.div(tf.sum(tf.mul(terms, mask), 1), tf.maximum(perSeqCount, 1));
    const hasTokens = tf.cast(tf.greater(perSeqCount, 0), 'float32');
    return tf.div(
      tf.sum(tf.mul(perSeq, hasTokens)),
      denominator ?? tf.maximum(tf.sum(hasTokens), 1),
    ) as tf.Scalar;
  });
}

/** The whole-minibatch denominator `aggregate` uses under `mode`, from the mask's rows. */
export function aggregateDenominator(mask: readonly (readonly number[])[], mode: LossMode): number {
  if (mode === 'token_mean')
    return Math.max(
      mask.reduce((a, row) => a + row.reduce((s, x) => s + x, 0), 0),
      1,
    );
  return Math.max(mask.filter((row) => row.some((x) => x > 0)).length, 1);
}

/** The clipped surrogate and its diagnostics (sums over masked positions, for weighting by tokens). */
export interface PpoClipLoss {
  /** -min(ratio * A, clip(ratio, 1 - clip, 1 + clip) * A), aggregated over the mask by the loss mode. */
  loss: tf.Scalar;
  /** Masked positions whose ratio lies outside [1 - clip, 1 + clip]. */
  clippedTokens: tf.Scalar;
  /** Sum over masked positions of (ratio - 1) - log ratio (an estimate of KL(old || new) times the count). */
  klSum: tf.Scalar;
}

/**
 * The PPO-clipped policy-gradient loss: logp, oldLogp, mask [B, T]; adv [B] (one per sequence) or
 * [B, T]. With oldLogp equal to logp's value the ratio is 1 and the gradient is REINFORCE's,
 * -A * dlogp, on the masked positions (what the mask debugger relies on). `denominator`: see
 * `aggregate` (a part of a minibatch split across workers).
 */
export function ppoClipLoss(
  logp: tf.Tensor2D,
  oldLogp: tf.Tensor2D,
  adv: tf.Tensor1D | tf.Tensor2D,
  mask: tf.Tensor2D,
  clip: number,
  mode: LossMode,
  denominator?: number,
): PpoClipLoss {
  return tf.tidy(() => {
    const a = adv.rank === 1 ? tf.expandDims(adv, 1) : adv;
    const logRatio = tf.sub(logp, oldLogp);
    const ratio = tf.exp(logRatio);
    const surr1 = tf.mul(ratio, a);
    const surr2 = tf.mul(tf.clipByValue(ratio, 1 - clip, 1 + clip), a);
    const loss = aggregate(tf.neg(tf.minimum(surr1, surr2)) as tf.Tensor2D, mask, mode, denominator);
    const outside = tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), clip), 'float32');
    const clippedTokens = tf.sum(tf.mul(outside, mask)) as tf.Scalar;
    const klSum = tf.sum(tf.mul(tf.sub(tf.sub(ratio, 1), logRatio), mask)) as tf.Scalar;
    return { loss, clippedTokens, klSum };
  });
}
