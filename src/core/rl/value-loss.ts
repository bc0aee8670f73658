/**
 * The critic's regression loss on TF.js tensors (section 12.2, the chapter's `value_loss`).
 * Shapes: values, old values, returns and mask are [B, T] over predicted positions.
 */
import * as tf from '@tensorflow/tfjs-core';
import { maskedMean } from './loss.js';

/**
 * Value loss (a scalar): 0.5 * masked mean of (V - R)^2; with `clip` a number, PPO's clipped form
 * 0.5 * masked mean of max((V - R)^2, (V_old + clip(V - V_old, -clip, clip) - R)^2).
 */
export function valueLoss(
  values: tf.Tensor2D,
  oldValues: tf.Tensor2D,
  returns: tf.Tensor2D,
  mask: tf.Tensor2D,
  clip: number | null = null,
): tf.Scalar {
  if (clip !== null && !(clip > 0))
    throw new Error(`valueLoss: clip must be a positive number or null, got ${clip}`);
  return tf.tidy(() => {
    const unclipped = tf.square(tf.sub(values, returns));
    if (clip === null) return tf.mul(0.5, maskedMean(unclipped, mask)) as tf.Scalar;
    const vClipped = tf.add(oldValues, tf.clipByValue(tf.sub(values, oldValues), -clip, clip));
    const clipped = tf.square(tf.sub(vClipped, returns));
    return tf.mul(0.5, maskedMean(tf.maximum(unclipped, clipped), mask)) as tf.Scalar;
  });
}
