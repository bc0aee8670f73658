/**
 * The gradient of the clipped policy-gradient loss on one minibatch (or one part of it): what
 * `rlUpdate` takes a step with, and what each gradient worker computes on its share of the rows.
 */
import * as tf from '@tensorflow/tfjs-core';
import { pick } from '../model/logprobs.js';
import type { TinyAgent } from '../model/tinyagent.js';
import type { LossMode } from './config.js';
import { ppoClipLoss } from './loss.js';

/** Rows of a minibatch, padded to T tokens; mask, old log-probs and advantages over T - 1 predicted positions. */
export interface PgRows {
  ids: number[][];
  mask: number[][];
  old: number[][];
  adv: number[][];
  T: number;
}

export interface PgOptions {
  temperature: number;
  clip: number;
  lossMode: LossMode;
  /** These rows are a part of a larger minibatch: its denominator (see `aggregate`). */
  denominator?: number;
}

/** Gradients (one per variable, by name) and sums over the masked positions of these rows. */
export interface PgResult {
  grads: tf.NamedTensorMap;
  /** The loss (this part's share of it, with a denominator). */
  loss: number;
  clipped: number;
  kl: number;
  ent: number;
}

/**
 * The loss's gradients with respect to every variable of the policy. The caller owns (and
 * disposes) the gradient tensors.
 */
export function pgGradients(policy: TinyAgent, rows: PgRows, opts: PgOptions): PgResult {
  const n = rows.ids.length;
  const diag = { clipped: 0, kl: 0, ent: 0 };
  let loss = 0;
  const grads = tf.tidy(() => {
    const ids = tf.tensor2d(rows.ids, undefined, 'int32');
    const mask = tf.tensor2d(rows.mask);
    const old = tf.tensor2d(rows.old);
    const adv = tf.tensor2d(rows.adv);
    const { value, grads } = tf.variableGrads(() => {
      const raw = tf.slice(policy.logits(ids), [0, 0, 0], [n, rows.T - 1, policy.config.vocabSize]);
      // The episodes were sampled at this temperature and their log-probs recorded there: the
      // update takes its log-probs from the same tempered distribution, so the ratio starts at 1.
      const logits = opts.temperature === 1 ? raw : tf.div(raw, opts.temperature);
      // One log-softmax for the loss's log-probs and the entropy diagnostic.
      const lsm = tf.logSoftmax(logits) as tf.Tensor3D;
      const logp = pick(lsm, tf.slice(ids, [0, 1], [n, rows.T - 1]));
      const terms = ppoClipLoss(logp, old, adv, mask, opts.clip, opts.lossMode, opts.denominator);
      // diagnostics: computed on the tape but not part of the loss, so they add no gradient
      diag.clipped = terms.clippedTokens.dataSync()[0];
      diag.kl = terms.klSum.dataSync()[0];
      diag.ent = tf.tidy(() => {
        const ent = tf.neg(tf.sum(tf.mul(tf.exp(lsm), lsm), -1));
        return tf.sum(tf.mul(ent, mask)).dataSync()[0];
      });
      return terms.loss;
    }, policy.variables());
    loss = value.dataSync()[0];
    return grads;
  });
  return { grads, loss, ...diag };
}
