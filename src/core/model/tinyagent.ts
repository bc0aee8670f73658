/**
 * TinyAgent: a decoder-only transformer (nanoGPT-shaped) on TF.js, about 158k parameters with a
 * 256-token context: d=64, 3 layers, 4 heads, MLP 4x, learned positions, tied embeddings. With
 * `valueHead` it is a critic: a scalar value per position instead of logits.
 *
 * Two forward passes that agree: `logits(ids)` over whole sequences (training, differentiable),
 * and `KVCache.step` over a few new tokens per row against cached keys and values (sampling).
 */
import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '../rng.js';
import { embed, gelu, layerNorm, linear, matmulTransposed } from './layers.js';

export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  mlpRatio: number;
  contextLength: number;
  /** A critic: a scalar value head on top of the final hidden state. */
  valueHead: boolean;
}

export function defaultModelConfig(vocabSize: number): ModelConfig {
  return { vocabSize, dModel: 64, nLayers: 3, nHeads: 4, mlpRatio: 4, contextLength: 256, valueHead: false };
}

/** Parameter names and shapes, in a fixed order (the checkpoint order). */
export function parameterShapes(c: ModelConfig): [string, number[]][] {
  const d = c.dModel;
  const m = d * c.mlpRatio;
  const out: [string, number[]][] = [
    ['wte', [c.vocabSize, d]],
    ['wpe', [c.contextLength, d]],
  ];
  for (let l = 0; l < c.nLayers; l++) {
    const p = `h${l}.`;
    out.push(
      [`${p}ln1.g`, [d]],
      [`${p}ln1.b`, [d]],
      [`${p}attn.wq`, [d, d]],
      [`${p}attn.bq`, [d]],
      [`${p}attn.wk`, [d, d]],
      [`${p}attn.bk`, [d]],
      [`${p}attn.wv`, [d, d]],
      [`${p}attn.bv`, [d]],
      [`${p}attn.wo`, [d, d]],
      [`${p}attn.bo`, [d]],
      [`${p}ln2.g`, [d]],
      [`${p}ln2.b`, [d]],
      [`${p}mlp.w1`, [d, m]],
      [`${p}mlp.b1`, [m]],
      [`${p}mlp.w2`, [m, d]],
      [`${p}mlp.b2`, [d]],
    );
  }
  out.push(['lnf.g', [d]], ['lnf.b', [d]]);
  if (c.valueHead) out.push(['value.w', [d, 1]], ['value.b', [1]]);
  return out;
}

/** Seeded initial values (normal 0.02; residual projections scaled; LayerNorm 1/0). */
function initialValues(c: ModelConfig, seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed);
  const normal = () => {
    const u = Math.max(rng.float(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.float());
  };
  const out = new Map<string, Float32Array>();
  for (const [name, shape] of parameterShapes(c)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const a = new Float32Array(n);
    if (name.endsWith('.g')) a.fill(1);
    else if (/\.b\d?$|\.b[qkvo]$/.test(name) || name === 'value.b') a.fill(0);
    else {
      const std =
        name.endsWith('attn.wo') || name.endsWith('mlp.w2') ? 0.02 / Math.sqrt(2 * c.nLayers) : 0.02;
      for (let i = 0; i < n; i++) a[i] = normal() * std;
    }
    out.set(name, a);
  }
  return out;
}

export class TinyAgent {
  readonly params: Map<string, tf.Variable>;

  constructor(
    readonly config: ModelConfig,
    values: Map<string, Float32Array>,
  ) {
    if (config.dModel % config.nHeads !== 0) throw new Error('dModel must be divisible by nHeads');
    this.params = new Map();
    for (const [name, shape] of parameterShapes(config)) {
      const v = values.get(name);
      if (!v) throw new Error(`missing parameter ${name}`);
      const n = shape.reduce((a, b) => a * b, 1);
      if (v.length !== n)
        throw new Error(`parameter ${name} has ${v.length} values, its shape [${shape}] needs ${n}`);
      const init = tf.tensor(v, shape, 'float32');
      this.params.set(name, tf.variable(init, true, `${name}_${nextId++}`));
      init.dispose();
    }
  }

  /** A freshly initialised model (deterministic for the seed). */
  static create(config: ModelConfig, seed = 0): TinyAgent {
    return new TinyAgent(config, initialValues(config, seed));
  }

  p(name: string): tf.Variable {
    const v = this.params.get(name);
    if (!v) throw new Error(`no parameter ${name}`);
    return v;
  }

  get numParams(): number {
    let n = 0;
    for (const v of this.params.values()) n += v.size;
    return n;
  }

  /** Parameters without the position table (the chapter counts 158k this way). */
  get numParamsWithoutPositions(): number {
    return this.numParams - this.p('wpe').size;
  }

  variables(): tf.Variable[] {
    return [...this.params.values()];
  }

  /** Current parameter values, copied out. */
  snapshot(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const [name, v] of this.params) out.set(name, v.dataSync() as Float32Array);
    return out;
  }

  /** An independent copy (the chapter's `copy.deepcopy`). */
  clone(): TinyAgent {
    return new TinyAgent({ ...this.config }, this.snapshot());
  }

  /** Copy another model's parameter values into this one (same config). */
  load(values: Map<string, Float32Array>): void {
    for (const [name, v] of this.params) {
      const src = values.get(name);
      if (!src || src.length !== v.size) throw new Error(`parameter ${name} missing or of the wrong size`);
      const t = tf.tensor(src, v.shape, 'float32');
      v.assign(t);
      t.dispose();
    }
  }

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
    this.params.clear();
  }

  /** Final hidden states [B, T, d] of whole sequences (causal). */
  hidden(ids: tf.Tensor2D): tf.Tensor3D {
    const c = this.config;
    const [B, T] = ids.shape;
    if (T > c.contextLength)
      throw new Error(`sequence of ${T} tokens exceeds the context of ${c.contextLength}`);
    return tf.tidy(() => {
      const tok = embed(tf.reshape(ids, [-1]) as tf.Tensor1D, this.p('wte') as tf.Tensor2D);
      const pos = tf.slice(this.p('wpe'), [0, 0], [T, c.dModel]);
      let x: tf.Tensor = tf.add(tf.reshape(tok, [B, T, c.dModel]), pos);
      const mask = causalMask(T); // [T, T] additive
      for (let l = 0; l < c.nLayers; l++) {
        const h = layerNorm(x, this.p(`h${l}.ln1.g`) as tf.Tensor1D, this.p(`h${l}.ln1.b`) as tf.Tensor1D);
        x = tf.add(x, this.attention(l, h, mask));
        x = tf.add(x, this.mlp(l, x));
      }
      return layerNorm(x, this.p('lnf.g') as tf.Tensor1D, this.p('lnf.b') as tf.Tensor1D) as tf.Tensor3D;
    });
  }

  /** Next-token logits [B, T, V] (policy). */
  logits(ids: tf.Tensor2D): tf.Tensor3D {
    if (this.config.valueHead) throw new Error('logits() of a critic: use values()');
    return tf.tidy(() => {
      const [B, T] = ids.shape;
      const h = tf.reshape(this.hidden(ids), [B * T, this.config.dModel]) as tf.Tensor2D;
      return tf.reshape(matmulTransposed(h, this.p('wte') as tf.Tensor2D), [
        B,
        T,
        this.config.vocabSize,
      ]) as tf.Tensor3D;
    });
  }

  /** Values [B, T] (critic): the value of the state after each position. */
  values(ids: tf.Tensor2D): tf.Tensor2D {
    if (!this.config.valueHead) throw new Error('values() of a policy: make a critic with makeCritic()');
    return tf.tidy(() => {
      const [B, T] = ids.shape;
      const h = this.hidden(ids);
      return tf.reshape(linear(h, this.p('value.w') as tf.Tensor2D, this.p('value.b') as tf.Tensor1D), [
        B,
        T,
      ]) as tf.Tensor2D;
    });
  }

  private mlp(l: number, x: tf.Tensor): tf.Tensor {
    const p = `h${l}.`;
    const h = layerNorm(x, this.p(`${p}ln2.g`) as tf.Tensor1D, this.p(`${p}ln2.b`) as tf.Tensor1D);
    const u = gelu(linear(h, this.p(`${p}mlp.w1`) as tf.Tensor2D, this.p(`${p}mlp.b1`) as tf.Tensor1D));
    return linear(u, this.p(`${p}mlp.w2`) as tf.Tensor2D, this.p(`${p}mlp.b2`) as tf.Tensor1D);
  }

  /** Projections q, k, v of h [B, T, d], each [B, T, H, dh]. */
  qkv(l: number, h: tf.Tensor): [tf.Tensor4D, tf.Tensor4D, tf.Tensor4D] {
    const c = this.config;
    const [B, T] = h.shape;
    const dh = c.dModel / c.nHeads;
    const proj = (n: string) =>
      tf.reshape(
        linear(h, this.p(`h${l}.attn.w${n}`) as tf.Tensor2D, this.p(`h${l}.attn.b${n}`) as tf.Tensor1D),
        [B, T, c.nHeads, dh],
      ) as tf.Tensor4D;
    return [proj('q'), proj('k'), proj('v')];
  }

  /** Causal self-attention over whole sequences; mask [T, T] additive. */
  private attention(l: number, h: tf.Tensor, mask: tf.Tensor2D): tf.Tensor {
    const c = this.config;
    const [B, T] = h.shape;
    const H = c.nHeads;
    const dh = c.dModel / H;
    const [q, k, v] = this.qkv(l, h);
    const qh = tf.reshape(tf.transpose(q, [0, 2, 1, 3]), [B * H, T, dh]);
    const kT = tf.reshape(tf.transpose(k, [0, 2, 3, 1]), [B * H, dh, T]);
    const vh = tf.reshape(tf.transpose(v, [0, 2, 1, 3]), [B * H, T, dh]);
    const scores = tf.add(tf.mul(tf.matMul(qh, kT), 1 / Math.sqrt(dh)), mask); // [B*H, T, T]
    const out = tf.matMul(tf.softmax(scores), vh); // [B*H, T, dh]
    const merged = tf.reshape(tf.transpose(tf.reshape(out, [B, H, T, dh]), [0, 2, 1, 3]), [B, T, c.dModel]);
    return linear(merged, this.p(`h${l}.attn.wo`) as tf.Tensor2D, this.p(`h${l}.attn.bo`) as tf.Tensor1D);
  }

  /** Attention of a chunk of new tokens against given keys/values (used by KVCache). */
  attendCached(l: number, q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor4D): tf.Tensor {
    // q [A, C, H, dh]; k [A, H, L, dh]; v [A, H, L, dh]; mask [A, 1, C, L] additive. q k^T with
    // transposeB: the same products in the same order as with k stored transposed.
    const c = this.config;
    const [A, C, H, dh] = q.shape;
    const L = k.shape[2];
    const qh = tf.reshape(tf.transpose(q, [0, 2, 1, 3]), [A * H, C, dh]);
    const scores = tf.add(
      tf.reshape(tf.mul(tf.matMul(qh, tf.reshape(k, [A * H, L, dh]), false, true), 1 / Math.sqrt(dh)), [
        A,
        H,
        C,
        L,
      ]),
      mask,
    );
    const p = tf.reshape(tf.softmax(scores), [A * H, C, L]);
    const out = tf.matMul(p, tf.reshape(v, [A * H, L, dh])); // [A*H, C, dh]
    const merged = tf.reshape(tf.transpose(tf.reshape(out, [A, H, C, dh]), [0, 2, 1, 3]), [A, C, c.dModel]);
    return linear(merged, this.p(`h${l}.attn.wo`) as tf.Tensor2D, this.p(`h${l}.attn.bo`) as tf.Tensor1D);
  }

  mlpBlock(l: number, x: tf.Tensor): tf.Tensor {
    return this.mlp(l, x);
  }
}

let nextId = 0;

const maskCache = new Map<number, Float32Array>();

/** Additive causal mask [T, T]: 0 on and below the diagonal, -1e9 above. */
function causalMask(T: number): tf.Tensor2D {
  let m = maskCache.get(T);
  if (!m) {
    m = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -1e9;
    maskCache.set(T, m);
  }
  return tf.tensor2d(m, [T, T]);
}

/** A critic: a copy of the policy's transformer with a scalar value head (the chapter's `make_critic`). */
export function makeCritic(policy: TinyAgent, seed = 1): TinyAgent {
  const config = { ...policy.config, valueHead: true };
  const values = policy.snapshot();
  const init = new Rng(seed);
  const w = new Float32Array(config.dModel);
  for (let i = 0; i < w.length; i++) w[i] = (init.float() * 2 - 1) * 0.01;
  values.set('value.w', w);
  values.set('value.b', new Float32Array(1));
  return new TinyAgent(config, values);
}
