/**
 * Lockstep batched sampling with a KV cache: every active episode advances by one sampled token
 * per tick; an episode whose call just ended feeds its last call token and the observation in the
 * same tick. Keys and values live per row in JS memory, so each row keeps exactly its own tokens
 * (no padding holes); each tick builds the attention inputs for the active rows only.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { Env } from '../gym/env.js';
import { Episode, MAX_CALL_TOKENS, makeTrajectory, type Trajectory } from '../gym/episode.js';
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { Rng } from '../rng.js';
import { embed, layerNorm, matmulTransposed } from './layers.js';
import type { TinyAgent } from './tinyagent.js';

/** Per-row key/value storage of one model. */
export class KVCache {
  /**
   * keys[row][layer] and vals[row][layer]: [H][cap][dh], so a head's first L positions are one
   * contiguous run (copied into the step's [A, H, L, dh] tensors with one `set` per row and head).
   */
  private keys: Float32Array[][] = [];
  private vals: Float32Array[][] = [];
  /** The step's key and value buffers, reused from step to step (their contents are uploaded). */
  private kBuf = new Float32Array(0);
  private vBuf = new Float32Array(0);
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

  /** Forget a row's tokens (to reuse it for a new sequence). */
  reset(r: number): void {
    this.row(r);
    this.length[r] = 0;
  }

  /**
   * Feed `chunks[i]` (at least one token) to row `rows[i]`, after its cached tokens. Returns the
   * next-token logits at each row's last new token: [A, V], row-major.
   */
  step(rows: readonly number[], chunks: readonly (readonly number[])[]): Float32Array {
    const m = this.model;
    const c = m.config;
    const A = rows.length;
    const H = c.nHeads;
    const dh = c.dModel / H;
    const cap = c.contextLength;
    rows.forEach((r) => {
      this.row(r);
    });
    const C = Math.max(...chunks.map((x) => x.length));
    const starts = rows.map((r) => this.length[r]);
    const ends = rows.map((_, i) => starts[i] + chunks[i].length);
    if (chunks.some((x) => x.length === 0))
      throw new Error('KVCache.step: every row needs at least one token');
    if (ends.some((e) => e > cap)) throw new Error(`KVCache.step: a row would exceed the context of ${cap}`);
    const L = Math.max(...ends);
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
        const size = A * H * L * dh;
        // wasm copies a tensor's values in; the cpu backend keeps the array: give it fresh ones.
        if (this.kBuf.length < size || tf.getBackend() !== 'wasm') {
          this.kBuf = new Float32Array(size);
          this.vBuf = new Float32Array(size);
        }
        const kb = this.kBuf.subarray(0, size);
        const vb = this.vBuf.subarray(0, size);
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
          // Positions 0 .. n - 1 of each head, then zeros up to L (a shorter row's padding).
          const n = ends[a] * dh;
          for (let hh = 0; hh < H; hh++) {
            const from = hh * cap * dh;
            const to = (a * H + hh) * L * dh;
            kb.set(K.subarray(from, from + n), to);
            vb.set(V.subarray(from, from + n), to);
            kb.fill(0, to + n, to + L * dh);
            vb.fill(0, to + n, to + L * dh);
          }
        }
        const att = m.attendCached(
          l,
          q,
          tf.tensor4d(kb, [A, H, L, dh]),
          tf.tensor4d(vb, [A, H, L, dh]),
          maskT as tf.Tensor4D,
        );
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

/** Sample one id from logits[offset : offset + V] at a temperature; returns the id and its log-prob. */
export function sampleNext(
  logits: Float32Array,
  offset: number,
  V: number,
  temperature: number,
  rng: Rng,
): { id: number; logp: number } {
  const t = temperature > 0 ? temperature : 1;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[offset + i] / t);
  let z = 0;
  for (let i = 0; i < V; i++) z += Math.exp(logits[offset + i] / t - max);
  const logZ = Math.log(z) + max;
  if (temperature <= 0) {
    // greedy
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[offset + i] > logits[offset + best]) best = i;
    return { id: best, logp: logits[offset + best] / t - logZ };
  }
  const u = rng.float() * z;
  let acc = 0;
  for (let i = 0; i < V; i++) {
    acc += Math.exp(logits[offset + i] / t - max);
    if (u < acc) return { id: i, logp: logits[offset + i] / t - logZ };
  }
  return { id: V - 1, logp: logits[offset + V - 1] / t - logZ };
}

export interface RolloutOptions {
  temperature?: number;
  maxLen?: number;
}

/** The tokens a call is generated from (the episode so far, or a context view of it). */
export interface CallView {
  ids: number[];
  owner: number[];
  turn: number[];
}

/** A call as it was sampled: its episode, its index, the view it saw, its tokens and log-probs. */
export interface SampledCall {
  episode: number;
  call: number;
  view: CallView;
  ids: number[];
  logps: number[];
}

/**
 * The lockstep sampler: one episode per (env, task), each advancing one sampled token per tick.
 * `viewOf(episode)` gives the tokens a new call is generated from (default: the whole episode).
 * The KV cache is kept while the new view extends what the row holds and rebuilt otherwise, so the
 * whole-episode view never recomputes anything. Deterministic for the generator's state.
 */
export function lockstepRollout(
  model: TinyAgent,
  envs: readonly Env[],
  tasks: readonly Task[],
  tok: Tokenizer,
  rng: Rng,
  opts: RolloutOptions = {},
  viewOf?: (ep: Episode) => CallView,
): { trajs: Trajectory[]; calls: SampledCall[] } {
  if (envs.length !== tasks.length) throw new Error('rollout: one env per task');
  const temperature = opts.temperature ?? 1;
  const maxLen = Math.min(opts.maxLen ?? model.config.contextLength, model.config.contextLength);
  const V = model.config.vocabSize;
  if (V !== tok.size)
    throw new Error(`the model's vocabulary (${V}) differs from the tokenizer's (${tok.size})`);
  const episodes = tasks.map((t, i) => new Episode(envs[i], t, tok, maxLen));
  const cache = new KVCache(model);
  const held: number[][] = episodes.map(() => []); // what each row's cache holds
  const views: CallView[] = episodes.map(() => ({ ids: [], owner: [], turn: [] }));
  const current = episodes.map(() => ({ ids: [] as number[], logps: [] as number[] }));
  const calls: SampledCall[] = [];
  let active = episodes.map((_, i) => i).filter((i) => !episodes[i].done);
  while (active.length) {
    const chunks = active.map((b) => {
      if (current[b].ids.length > 0) return current[b].ids.slice(-1);
      // A new call starts: fix its view, and reuse the cache if the view extends it.
      const ep = episodes[b];
      const v = viewOf ? viewOf(ep) : { ids: ep.ids.slice(), owner: ep.owner.slice(), turn: ep.turn.slice() };
      views[b] = v;
      const h = held[b];
      if (h.length > v.ids.length || h.some((x, i) => v.ids[i] !== x)) {
        cache.reset(b);
        held[b] = [];
      }
      return v.ids.slice(held[b].length);
    });
    const logits = cache.step(active, chunks);
    active.forEach((b, a) => {
      held[b].push(...chunks[a]);
      const { id, logp } = sampleNext(logits, a * V, V, temperature, rng);
      const call = current[b];
      call.ids.push(id);
      call.logps.push(logp);
      if (id === tok.callEndId || call.ids.length === MAX_CALL_TOKENS) {
        const ep = episodes[b];
        calls.push({ episode: b, call: ep.nCalls, view: views[b], ids: call.ids, logps: call.logps });
        ep.act(call.ids, call.logps);
        current[b] = { ids: [], logps: [] };
      }
    });
    active = active.filter((b) => !episodes[b].done);
  }
  return { trajs: episodes.map(makeTrajectory), calls };
}

/**
 * Sample one episode per (env, task) in lockstep, every call seeing the whole episode so far (the
 * chapter's `rollout_batch`). The same seed gives the same episodes, token for token.
 */
export function rolloutBatch(
  model: TinyAgent,
  envs: readonly Env[],
  tasks: readonly Task[],
  tok: Tokenizer,
  rng: Rng,
  opts: RolloutOptions = {},
): Trajectory[] {
  return lockstepRollout(model, envs, tasks, tok, rng, opts).trajs;
}
