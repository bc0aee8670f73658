/**
 * Log-probabilities of given tokens under a model's logits (the chapter's `selected_log_probs` and
 * `sequence_log_probs`). They belong to the model: the sampler records them, the losses consume them.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { TinyAgent } from './tinyagent.js';

/** Log-prob of each id under the logits: [B, T, V], [B, T] -> [B, T]. */
export function selectedLogProbs(logits: tf.Tensor3D, ids: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => pick(tf.logSoftmax(logits) as tf.Tensor3D, ids));
}

/** The entries of log-softmaxed logits [B, T, V] at ids [B, T]. */
export function pick(logp: tf.Tensor3D, ids: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const onehot = tf.oneHot(tf.cast(ids, 'int32'), logp.shape[2]);
    return tf.sum(tf.mul(logp, onehot), -1) as tf.Tensor2D;
  });
}

/**
 * Log-prob of each next token under the model, over whole sequences: ids [B, T] -> [B, T-1]
 * (the chapter's `sequence_log_probs`), at a sampling temperature (1: the model's own).
 */
export function sequenceLogProbs(model: TinyAgent, ids: tf.Tensor2D, temperature = 1): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, T] = ids.shape;
    const raw = tf.slice(model.logits(ids), [0, 0, 0], [B, T - 1, model.config.vocabSize]) as tf.Tensor3D;
    const logits = temperature === 1 ? raw : (tf.div(raw, temperature) as tf.Tensor3D);
    return selectedLogProbs(logits, tf.slice(ids, [0, 1], [B, T - 1]) as tf.Tensor2D);
  });
}
