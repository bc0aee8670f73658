/**
 * The sampler's KV cache: keys and values live per row in JS memory, so each row keeps exactly its
 * own tokens (no padding holes); each tick builds the attention inputs for the active rows only.
 */
import * as tf from '@tensorflow/tfjs-core';
import { filledTensor } from '../tf/fast-kernels.js';
import { embed, layerNorm, matmulTransposed } from './layers.js';
import type { TinyAgent } from './tinyagent.js';

/** Lengths a tick pads to: new tokens per row (C) and keys per row (L). */
export interface KVPad {
  C: number;
  L: number;
}

/** Per-row key/value storage of one model. */
export class KVCache {
  /**
   * keys[row][layer] and vals[row][layer]: [H][cap][dh], so a head's first L positions are one
   * contiguous run (copied into the step's [A, H, L, dh] tensors with one `set` per row and head).
   */
  private keys: Float32Array[][] = [];
  private vals: Float32Array[][] = [];
  /** Tokens cached per row. */
  readonly length: number[] = [];

  constructor(readonly model: TinyAgent) {}

  private row(r: number): void {
    const c = this.model.config;
    while (this.keys.length <= r) {
      this.keys.push(Array.from({ length: c.nLayers }, () => new Float32Array(c.dModel * c.contextLength)));
      this.vals.push(Array.from({ length: c.nLayers }, () => new Float32Array(c.dModel * c.contextLength)));
      this.length.push(0);
    }
  }

  /** Free the rows' keys and values. */
  close(): void {
    this.keys = [];
    this.vals = [];
    this.length.length = 0;
  }

  /** Forget a row's tokens (to reuse it for a new sequence). */
  reset(r: number): void {
    this.row(r);
    this.length[r] = 0;
  }

  /**
   * Feed `chunks[i]` (at least one token) to row `rows[i]`, after its cached tokens. Returns the
   * next-token logits at each row's last new token: [A, V], row-major. `pad`: pad to at least these
   * chunk and key lengths (a part of a larger tick, so that each row sees what it would in it).
   */
  step(rows: readonly number[], chunks: readonly (readonly number[])[], pad?: KVPad): Float32Array {
    const m = this.model;
    const c = m.config;
    const A = rows.length;
    const H = c.nHeads;
    const dh = c.dModel / H;
    const cap = c.contextLength;
    rows.forEach((r) => {
      this.row(r);
    });
    const C = Math.max(pad?.C ?? 0, ...chunks.map((x) => x.length));
    const starts = rows.map((r) => this.length[r]);
    const ends = rows.map((_, i) => starts[i] + chunks[i].length);
    if (chunks.some((x) => x.length === 0))
      throw new Error('KVCache.step: every row needs at least one token');
    if (ends.some((e) => e > cap)) throw new Error(`KVCache.step: a row would exceed the context of ${cap}`);
    const L = Math.max(pad?.L ?? 0, ...ends);
    const ids = new Int32Array(A * C);
    const pos = new Int32Array(A * C);
    const mask = new Float32Array(A * C * L).fill(-1e9);
    for (let a = 0; a < A; a++) {
      for (let j = 0; j < C; j++) {
        const valid = j < chunks[a].length;
        ids[a * C + j] = valid ? chunks[a][j] : 0;
        pos[a * C + j] = Math.min(starts[a] + j, cap - 1);
        const upTo = Math.min(starts[a] + j, ends[a] - 1); // keys this query may see: [0, upTo]
        const base = (a * C + j) * L;
        for (let t = 0; t <= upTo; t++) mask[base + t] = 0;
      }
    }
    const logits = tf.tidy(() => {
      const tok = embed(tf.tensor1d(ids, 'int32'), m.p('wte') as tf.Tensor2D);
      const pe = tf.gather(m.p('wpe'), tf.tensor1d(pos, 'int32'));
      let x: tf.Tensor = tf.reshape(tf.add(tok, pe), [A, C, c.dModel]);
      const maskT = tf.tensor4d(mask, [A, 1, C, L]);
      for (let l = 0; l < c.nLayers; l++) {
        const h = layerNorm(x, m.p(`h${l}.ln1.g`) as tf.Tensor1D, m.p(`h${l}.ln1.b`) as tf.Tensor1D);
        const [q, k, v] = m.qkv(l, h); // [A, C, H, dh]
        const kd = k.dataSync();
        const vd = v.dataSync();
        // The step's keys and values [A, H, L, dh], written where the backend keeps them: per row and
        // head, positions 0 .. n - 1 from the cache, then zeros up to L (a shorter row's padding).
        const fillFrom = (cache: Float32Array[][]) => (out: Float32Array) => {
          for (let a = 0; a < A; a++) {
            const src = cache[rows[a]][l];
            const n = ends[a] * dh;
            for (let hh = 0; hh < H; hh++) {
              const from = hh * cap * dh;
              const to = (a * H + hh) * L * dh;
              out.set(src.subarray(from, from + n), to);
              out.fill(0, to + n, to + L * dh);
            }
          }
        };
        for (let a = 0; a < A; a++) {
          const K = this.keys[rows[a]][l];
          const V = this.vals[rows[a]][l];
          for (let j = 0; j < chunks[a].length; j++) {
            const p = starts[a] + j;
            for (let hh = 0; hh < H; hh++) {
              const src = ((a * C + j) * H + hh) * dh;
              const dst = (hh * cap + p) * dh;
              K.set(kd.subarray(src, src + dh), dst);
              V.set(vd.subarray(src, src + dh), dst);
            }
          }
        }
        const kt = filledTensor([A, H, L, dh], fillFrom(this.keys));
        const vt = filledTensor([A, H, L, dh], fillFrom(this.vals));
        const att = m.attendCached(l, q, kt as tf.Tensor4D, vt as tf.Tensor4D, maskT as tf.Tensor4D);
        x = tf.add(x, att);
        x = tf.add(x, m.mlpBlock(l, x));
      }
      const hf = layerNorm(x, m.p('lnf.g') as tf.Tensor1D, m.p('lnf.b') as tf.Tensor1D);
      const last = tf.tensor1d(
        rows.map((_, a) => a * C + chunks[a].length - 1),
        'int32',
      );
      const sel = tf.gather(tf.reshape(hf, [A * C, c.dModel]), last) as tf.Tensor2D;
      return matmulTransposed(sel, m.p('wte') as tf.Tensor2D);
    });
    const out = logits.dataSync() as Float32Array;
    logits.dispose();
    rows.forEach((r, a) => {
      this.length[r] = ends[a];
    });
    return out;
  }
}
