/**
 * The SIMD kernels against the wasm backend's own: BatchMatMul with the same bits on seeded random
 * shapes (every transpose, shared and broadcast batches, odd sizes that exercise every tail of the
 * kernel) and the same gradients through attention-shaped products; Sum over leading and middle
 * axes with the same bits; and the assembled module equal to what its .wat assembles to.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { assemble } from '../../../scripts/build-kernels.js';
import { Rng } from '../../../src/core/rng.js';
import { initBackend } from '../../../src/core/tf/backend.js';
import { asSwap, fastKernelsActive, setFastKernels } from '../../../src/core/tf/fast-kernels.js';
import { WASM_BASE64 } from '../../../src/core/tf/kernels/kernels-wasm.js';

/** Run `f` with the SIMD kernel off, then on; both results as plain arrays. */
function both(f: () => tf.Tensor | tf.Tensor[]): [Float32Array[], Float32Array[]] {
  const run = (on: boolean) => {
    const was = setFastKernels(on);
    try {
      return tf.tidy(() => {
        const r = f();
        return (Array.isArray(r) ? r : [r]).map((t) => t.dataSync() as Float32Array);
      });
    } finally {
      setFastKernels(was);
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

describe('the SIMD kernels', () => {
  before(async () => {
    const info = await initBackend('wasm');
    assert.equal(info.name, 'wasm');
  });

  it('is installed on wasm', () => {
    assert.equal(fastKernelsActive(), true);
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

  it('sums over leading and middle axes with the backend’s bits, keepDims or not', () => {
    const rng = new Rng(7);
    const cases: [number[], number[]][] = [
      [
        [64, 128, 256],
        [0, 1],
      ], // a bias gradient
      [[8192, 64], [0]],
      [
        [3, 5, 7, 9],
        [1, 2],
      ],
      [[3, 5, 7, 9], [1]],
      [[2, 3, 17], [0]], // 17 columns: the 16-, 4- and 1-column paths
      [
        [6, 1, 3],
        [0, 1],
      ],
    ];
    for (let t = 0; t < 8; t++) {
      const shape = Array.from(
        { length: 2 + Math.floor(rng.float() * 3) },
        () => 1 + Math.floor(rng.float() * 40),
      );
      const s0 = Math.floor(rng.float() * (shape.length - 1));
      const len = 1 + Math.floor(rng.float() * (shape.length - 1 - s0));
      cases.push([shape, Array.from({ length: len }, (_, i) => s0 + i)]);
    }
    for (const [shape, axes] of cases)
      for (const keepDims of [false, true]) {
        const x = tf.randomNormal(shape, 0, 1, 'float32', shape.length + axes[0]);
        const [ref, got] = both(() => tf.sum(x, axes, keepDims));
        assertSameBits(ref, got, `sum over ${axes} of [${shape}] keepDims=${keepDims}`);
        const shapes = [false, true].map((on) => {
          setFastKernels(on);
          return tf.tidy(() => tf.sum(x, axes, keepDims).shape);
        });
        assert.deepEqual(shapes[1], shapes[0], 'the same shape');
        x.dispose();
      }
    setFastKernels(true);
  });

  it('transposes and clones as the backend does, and a clone outlives its source', () => {
    const rng = new Rng(9);
    const perms = [
      [1, 0],
      [0, 2, 1],
      [0, 2, 1, 3],
      [0, 2, 3, 1],
      [1, 2, 0],
      [2, 1, 0], // not a swap: the backend's kernel
      [3, 2, 0, 1],
    ];
    for (const perm of perms)
      for (const dtype of ['float32', 'int32'] as const) {
        const shape = perm.map(() => 1 + Math.floor(rng.float() * 19));
        const x = tf.tidy(() => tf.cast(tf.mul(tf.randomNormal(shape, 0, 1, 'float32', 3), 100), dtype));
        const [ref, got] = both(() => tf.cast(tf.transpose(x, perm), 'float32'));
        assertSameBits(ref, got, `transpose [${shape}] by [${perm}] (${dtype})`);
        x.dispose();
      }
    const a = tf.randomNormal([5, 6], 0, 1, 'float32', 4);
    const want = a.dataSync().slice();
    const b = tf.clone(a);
    a.dispose();
    assert.deepEqual(b.dataSync(), want, 'the clone keeps its values when the source is disposed');
    b.dispose();
  });

  it('is the module its .wat assembles to', async () => {
    const bytes = await assemble(path.join(__dirname, '../../../src/core/tf/kernels/kernels.wat'));
    assert.equal(
      Buffer.from(bytes).toString('base64'),
      WASM_BASE64,
      'kernels-wasm.ts is stale: run npm run build:kernels',
    );
  });
});

describe('transposes as a swap of two groups of axes', () => {
  it('recognises a matrix transpose, the head split and merge, a rotation; not other permutations', () => {
    assert.deepEqual(asSwap([8, 5], [1, 0]), { outer: 1, na: 8, nb: 5, inner: 1 });
    assert.deepEqual(asSwap([2, 7, 4, 16], [0, 2, 1, 3]), { outer: 2, na: 7, nb: 4, inner: 16 });
    assert.deepEqual(asSwap([2, 7, 4, 16], [0, 2, 3, 1]), { outer: 2, na: 7, nb: 64, inner: 1 });
    assert.deepEqual(asSwap([3, 4, 5], [1, 2, 0]), { outer: 1, na: 3, nb: 20, inner: 1 });
    assert.deepEqual(
      asSwap([3, 1, 5], [2, 1, 0]),
      { outer: 1, na: 3, nb: 5, inner: 1 },
      'size-1 axes set aside',
    );
    assert.equal(asSwap([3, 4, 5], [2, 1, 0]), null, 'a reversal is not one swap');
    assert.equal(asSwap([3, 4, 5], [0, 1, 2]), null, 'nothing to do');
  });
});
