/**
 * Building blocks written for speed on the TF.js `wasm` backend: the backend's fast matmul
 * (XNNPACK) only takes 2-D matmuls without transpose flags (batched or transposed ones fall back to
 * a scalar loop), and autodiff would create transposed ones in the backward pass, so linear layers,
 * the embedding and the tied output head carry custom gradients that transpose explicitly. `wasm`
 * also lacks the gradient of `gather` (UnsortedSegmentSum): the embedding is a one-hot matmul instead.
 */
import * as tf from '@tensorflow/tfjs-core';

/** x [N, in] @ w [in, out] -> [N, out], with a backward pass of plain 2-D matmuls. */
export const matmul2d = tf.customGrad((x, w, save) => {
  const x2 = x as tf.Tensor2D;
  const w2 = w as tf.Tensor2D;
  (save as tf.GradSaveFunc)([x2, w2]);
  return {
    value: tf.matMul(x2, w2),
    gradFunc: (dy, saved) => {
      const [xs, ws] = saved as tf.Tensor2D[];
      const g = dy as tf.Tensor2D;
      return [tf.matMul(g, tf.transpose(ws)), tf.matMul(tf.transpose(xs), g)];
    },
  };
}) as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** h [N, d] @ e^T for a tied output head, e [V, d] -> [N, V]. */
export const matmulTransposed = tf.customGrad((h, e, save) => {
  const h2 = h as tf.Tensor2D;
  const e2 = e as tf.Tensor2D;
  (save as tf.GradSaveFunc)([h2, e2]);
  return {
    value: tf.matMul(h2, tf.transpose(e2)),
    gradFunc: (dy, saved) => {
      const [hs, es] = saved as tf.Tensor2D[];
      const g = dy as tf.Tensor2D;
      return [tf.matMul(g, es), tf.matMul(tf.transpose(g), hs)];
    },
  };
}) as (h: tf.Tensor2D, e: tf.Tensor2D) => tf.Tensor2D;

/** Linear layer on [..., in]: reshapes to 2-D for the fast path and back. */
export function linear(x: tf.Tensor, w: tf.Tensor2D, b?: tf.Tensor1D): tf.Tensor {
  const shape = x.shape;
  const inDim = shape[shape.length - 1];
  const y = matmul2d(tf.reshape(x, [-1, inDim]) as tf.Tensor2D, w);
  const yb = b ? tf.add(y, b) : y;
  return tf.reshape(yb, [...shape.slice(0, -1), w.shape[1]]);
}

/** Token embedding as a one-hot matmul: ids [N] -> [N, d]. */
export function embed(ids: tf.Tensor1D, table: tf.Tensor2D): tf.Tensor2D {
  const onehot = tf.oneHot(tf.cast(ids, 'int32'), table.shape[0]) as tf.Tensor2D;
  return matmul2d(tf.cast(onehot, 'float32') as tf.Tensor2D, table);
}

/** LayerNorm over the last axis. */
export function layerNorm(x: tf.Tensor, gamma: tf.Tensor1D, beta: tf.Tensor1D, eps = 1e-5): tf.Tensor {
  const mean = tf.mean(x, -1, true);
  const centered = tf.sub(x, mean);
  const variance = tf.mean(tf.mul(centered, centered), -1, true);
  return tf.add(tf.mul(tf.div(centered, tf.sqrt(tf.add(variance, eps))), gamma), beta);
}

/** GELU, tanh approximation (x*x*x instead of pow, which is slow on wasm). */
export function gelu(x: tf.Tensor): tf.Tensor {
  const inner = tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), 0.044715)), Math.sqrt(2 / Math.PI));
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}
