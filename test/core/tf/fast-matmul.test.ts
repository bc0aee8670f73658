/**
 * The SIMD BatchMatMul against the wasm backend's own kernel: the same bits on seeded random
 * shapes (every transpose, shared and broadcast batches, odd sizes that exercise every tail of the
 * kernel), the same gradients through attention-shaped products, and the assembled module equal
 * to what its .wat assembles to.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { assemble } from '../../../scripts/build-kernels.js';
import { Rng } from '../../../src/core/rng.js';
import { initBackend } from '../../../src/core/tf/backend.js';
import { fastMatmulActive, setFastMatmul } from '../../../src/core/tf/fast-matmul.js';
import { WASM_BASE64 } from '../../../src/core/tf/kernels/matmul-wasm.js';

/** Run `f` with the SIMD kernel off, then on; both results as plain arrays. */
function both(f: () => tf.Tensor | tf.Tensor[]): [Float32Array[], Float32Array[]] {
  const run = (on: boolean) => {
    const was = setFastMatmul(on);
    try {
      return tf.tidy(() => {
        const r = f();
        return (Array.isArray(r) ? r : [r]).map((t) => t.dataSync() as Float32Array);
      });
    } finally {
      setFastMatmul(was);
    }
  };
  return [run(false), run(true)];
}

function assertSameBits(ref: Float32Array[], got: Float32Array[], what: string): void {
  assert.equal(got.length, ref.length);
  ref.forEach((r, t) => {
    assert.equal(got[t].length, r.length, `${what}: size`);
    const a = new Uint32Array(r.buffer, r.byteOffset, r.length);
    const b = new Uint32Array(got[t].buffer, got[t].byteOffset, got[t].length);
    const i = a.findIndex((x, k) => x !== b[k]);
    assert.equal(i, -1, `${what}: element ${i} is ${got[t][i]}, the backend's kernel gives ${r[i]}`);
  });
}

describe('the SIMD batched matmul', () => {
  before(async () => {
    const info = await initBackend('wasm');
    assert.equal(info.name, 'wasm');
  });

  it('is installed on wasm', () => {
    assert.equal(fastMatmulActive(), true);
  });

  it('gives the backend kernel’s bits on random shapes, every transpose, shared and broadcast batches', () => {
    const rng = new Rng(18);
    const dim = () => 1 + Math.floor(rng.float() * 70); // crosses the 48-block and the 8/4/1 column tails
    let cases = 0;
    for (let trial = 0; trial < 24; trial++) {
      const [m, k, n] = [dim(), dim(), dim()];
      const batch = 1 + Math.floor(rng.float() * 4);
      const ta = rng.float() < 0.5;
      const tb = rng.float() < 0.5;
      const shapeA = ta ? [batch, k, m] : [batch, m, k];
      const shapeB = tb ? [batch, n, k] : [batch, k, n];
      const seed = Math.floor(rng.float() * 1e6);
      const [ref, got] = both(() =>
        tf.matMul(
          tf.randomNormal(shapeA, 0, 1, 'float32', seed),
          tf.randomNormal(shapeB, 0, 1, 'float32', seed + 1),
          ta,
          tb,
        ),
      );
      assertSameBits(ref, got, `[${shapeA}] x [${shapeB}] ta=${ta} tb=${tb}`);
      cases++;
    }
    // A 4-D product (heads), and the one-row products of KV-cached sampling.
    for (const [sa, sb] of [
      [
        [2, 3, 5, 16],
        [2, 3, 16, 37],
      ],
      [
        [8, 1, 16],
        [8, 16, 41],
      ],
    ]) {
      const [ref, got] = both(() =>
        tf.matMul(tf.randomNormal(sa, 0, 1, 'float32', 5), tf.randomNormal(sb, 0, 1, 'float32', 6)),
      );
      assertSameBits(ref, got, `[${sa}] x [${sb}]`);
      cases++;
    }
    assert.equal(cases, 26);
  });

  it('gives the same gradients through attention-shaped products', () => {
    const [B, T, d] = [3, 50, 16];
    const q = tf.randomNormal([B, T, d], 0, 1, 'float32', 1);
    const kT = tf.randomNormal([B, d, T], 0, 1, 'float32', 2);
    const v = tf.randomNormal([B, T, d], 0, 1, 'float32', 3);
    const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
      tf.sum(tf.square(tf.matMul(tf.softmax(tf.mul(tf.matMul(a, b), 0.25)), c)));
    const [ref, got] = both(() => tf.grads(f)([q, kT, v]));
    assertSameBits(ref, got, 'dq, dkT, dv');
    assert.ok(
      ref[0].some((x) => x !== 0),
      'the gradient is not all zero',
    );
  });

  it('is the module its .wat assembles to', async () => {
    const bytes = await assemble(path.join(__dirname, '../../../src/core/tf/kernels/matmul.wat'));
    assert.equal(
      Buffer.from(bytes).toString('base64'),
      WASM_BASE64,
      'matmul-wasm.ts is stale: run npm run build:kernels',
    );
  });
});
