import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { type LossMode, ppoClipLoss } from '../../../src/core/rl/loss.js';
import { initBackend } from '../../../src/core/tf/backend.js';

before(async () => {
  await initBackend('cpu');
});

// Two sequences of four predicted positions; the last position of row 1 is masked out.
const old = [
  [-1, -2, -0.5, -3],
  [-1.5, -1, -2, -1],
];
// log ratios: 0 (inside), ln 1.5 (above 1 + clip), ln 0.5 (below 1 - clip), 0.1 (inside)
const logRatio = [
  [0, Math.log(1.5), Math.log(0.5), 0.1],
  [Math.log(1.5), Math.log(0.5), -0.1, 0.3],
];
const logp = old.map((row, b) => row.map((o, t) => o + logRatio[b][t]));
const adv = [
  [1, 1, 1, -2],
  [-1, -1, 0.5, 3],
];
const mask = [
  [1, 1, 1, 1],
  [1, 1, 1, 0],
];
const clip = 0.2;

/** The surrogate written out per token with plain numbers: -min(r A, clip(r) A). */
function expectedTerms(): number[][] {
  return logRatio.map((row, b) =>
    row.map((lr, t) => {
      const r = Math.exp(lr);
      const a = adv[b][t];
      const rc = Math.min(Math.max(r, 1 - clip), 1 + clip);
      return -Math.min(r * a, rc * a);
    }),
  );
}

function run(mode: LossMode) {
  return tf.tidy(() => {
    const lp = tf.tensor2d(logp);
    const { value, grad } = tf.valueAndGrad(
      (x: tf.Tensor) =>
        ppoClipLoss(x as tf.Tensor2D, tf.tensor2d(old), tf.tensor2d(adv), tf.tensor2d(mask), clip, mode).loss,
    )(lp);
    const terms = ppoClipLoss(lp, tf.tensor2d(old), tf.tensor2d(adv), tf.tensor2d(mask), clip, mode);
    return {
      loss: value.dataSync()[0],
      grad: grad.arraySync() as number[][],
      clipped: terms.clippedTokens.dataSync()[0],
      kl: terms.klSum.dataSync()[0],
    };
  });
}

describe('ppoClipLoss: the clipped surrogate, checked number by number', () => {
  it('token_mean: the masked mean of -min(r A, clip(r) A) over all tokens of the batch', () => {
    const e = expectedTerms();
    const flat = e.flatMap((row, b) => row.filter((_, t) => mask[b][t]));
    const want = flat.reduce((a, x) => a + x, 0) / flat.length;
    const got = run('token_mean');
    assert.ok(Math.abs(got.loss - want) < 1e-5, `loss ${got.loss}, expected ${want}`);
  });

  it('seq_mean_token_mean: the mean within each sequence, then over sequences', () => {
    const e = expectedTerms();
    const perSeq = e.map((row, b) => {
      const kept = row.filter((_, t) => mask[b][t]);
      return kept.reduce((a, x) => a + x, 0) / kept.length;
    });
    const want = (perSeq[0] + perSeq[1]) / 2;
    const got = run('seq_mean_token_mean');
    assert.ok(Math.abs(got.loss - want) < 1e-5, `loss ${got.loss}, expected ${want}`);
    assert.ok(Math.abs(run('token_mean').loss - want) > 1e-3, 'the two modes must differ on this batch');
  });

  it('the gradient vanishes exactly where the clip binds, and is -A r / n elsewhere (token_mean)', () => {
    const got = run('token_mean');
    const n = mask.flat().reduce((a, b) => a + b, 0);
    for (let b = 0; b < 2; b++)
      for (let t = 0; t < 4; t++) {
        const r = Math.exp(logRatio[b][t]);
        const a = adv[b][t];
        // The clipped branch is the smaller one (so it is chosen) when the ratio has moved past the
        // clip in the direction the advantage rewards: r > 1 + clip with A > 0, r < 1 - clip with A < 0.
        const binds = (a > 0 && r > 1 + clip) || (a < 0 && r < 1 - clip);
        const want = !mask[b][t] || binds ? 0 : (-a * r) / n;
        assert.ok(
          Math.abs(got.grad[b][t] - want) < 1e-5,
          `position [${b}, ${t}]: gradient ${got.grad[b][t]}, expected ${want}`,
        );
      }
  });

  it('counts clipped tokens and sums the KL estimate over the mask only', () => {
    const got = run('token_mean');
    let clipped = 0;
    let kl = 0;
    for (let b = 0; b < 2; b++)
      for (let t = 0; t < 4; t++) {
        if (!mask[b][t]) continue;
        const r = Math.exp(logRatio[b][t]);
        if (Math.abs(r - 1) > clip) clipped++;
        kl += r - 1 - logRatio[b][t];
      }
    assert.equal(got.clipped, clipped);
    assert.ok(Math.abs(got.kl - kl) < 1e-5);
  });

  it('at ratio 1 the gradient is REINFORCE’s: -A / n on every masked position', () => {
    const grad = tf.tidy(() => {
      const lp = tf.tensor2d(logp);
      const constant = tf.tensor2d(logp); // the same values, not on the tape
      const g = tf.grad(
        (x: tf.Tensor) =>
          ppoClipLoss(x as tf.Tensor2D, constant, tf.tensor2d(adv), tf.tensor2d(mask), clip, 'token_mean')
            .loss,
      )(lp);
      return g.arraySync() as number[][];
    });
    const n = mask.flat().reduce((a, b) => a + b, 0);
    for (let b = 0; b < 2; b++)
      for (let t = 0; t < 4; t++) assert.ok(Math.abs(grad[b][t] - (mask[b][t] ? -adv[b][t] / n : 0)) < 1e-6);
  });
});
