/**
 * Policy-gradient losses on TF.js tensors. Shapes as in the chapter: logits [B, T, V], ids [B, T],
 * masks and log-probs [B, T] over predicted positions.
 */
import * as tf from '@tensorflow/tfjs-core';

export type LossMode = 'token_mean' | 'seq_mean_token_mean';

/** Log-prob of each id under the logits: [B, T, V], [B, T] -> [B, T]. */
export function selectedLogProbs(logits: tf.Tensor3D, ids: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const logp = tf.logSoftmax(logits);
    const onehot = tf.oneHot(tf.cast(ids, 'int32'), logits.shape[2]);
    return tf.sum(tf.mul(logp, onehot), -1) as tf.Tensor2D;
  });
}

/** Mean of x over positions where mask is 1 (a scalar). */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.div(tf.sum(tf.mul(x, mask)), tf.maximum(tf.sum(mask), 1)) as tf.Scalar);
}

/**
 * Aggregate per-token loss terms [B, T] over the mask: `token_mean` divides by the number of
 * masked tokens in the batch; `seq_mean_token_mean` averages within each sequence, then over
 * sequences that have at least one masked token.
 */
export function aggregate(terms: tf.Tensor2D, mask: tf.Tensor2D, mode: LossMode): tf.Scalar {
  return tf.tidy(() => {
    if (mode === 'token_mean') return maskedMean(terms, mask);
    const perSeqCount = tf.sum(mask, 1);
    const perSeq = tf.div(tf.sum(tf.mul(terms, mask), 1), tf.maximum(perSeqCount, 1));
    const hasTokens = tf.cast(tf.greater(perSeqCount, 0), 'float32');
    return tf.div(tf.sum(tf.mul(perSeq, hasTokens)), tf.maximum(tf.sum(hasTokens), 1)) as tf.Scalar;
  });
}

/**
 * REINFORCE loss: -A * log p on masked tokens, aggregated by `mode`. `advantages` is [B] (one per
 * sequence) or [B, T] (per token).
 */
export function reinforceLoss(
  logps: tf.Tensor2D,
  advantages: tf.Tensor1D | tf.Tensor2D,
  mask: tf.Tensor2D,
  mode: LossMode = 'token_mean',
): tf.Scalar {
  return tf.tidy(() => {
    const adv = advantages.rank === 1 ? tf.expandDims(advantages, 1) : advantages;
    return aggregate(tf.neg(tf.mul(adv, logps)) as tf.Tensor2D, mask, mode);
  });
}
