/**
 * A KV cache whose rows are split across threads: the sampler's rows are cut into `parts`
 * contiguous blocks, this thread keeps the first block's keys and values and each worker thread
 * (tf/workers.ts) one of the others. A tick sends each worker its rows' new tokens, computes this
 * thread's rows meanwhile, and gathers the logits in the caller's row order.
 *
 * Every part pads its rows to the whole tick's chunk and key lengths, so a row's attention sees
 * exactly the inputs it would in one batch: the logits are bit for bit those of one `KVCache`
 * (the tests check it), and sampling gives the same episodes with any number of threads.
 */
import { fastKernelsActive } from '../tf/fast-kernels.js';
import { type ComputeWorker, closeComputeWorkers, computeWorkers } from '../tf/workers.js';
import { flatWeights } from './flat-params.js';
import { KVCache, type KVPad } from './kv-cache.js';
import type { ModelConfig, TinyAgent } from './tinyagent.js';

/** Each split cache has an id: a worker holds one cache per id until `kv-close` (which has no answer). */
export type KvJob =
  | { kind: 'kv-open'; id: number; config: ModelConfig; weights: Float32Array; fastKernels: boolean }
  | { kind: 'kv-step'; id: number; rows: number[]; chunks: number[][]; reset: number[]; pad: KVPad }
  | { kind: 'kv-close'; id: number };

export type KvReply = { kind: 'kv-open' } | { kind: 'kv-step'; logits: Float32Array };

/** What the sampler needs of a cache. */
export interface TokenCache {
  reset(r: number): void;
  step(rows: readonly number[], chunks: readonly (readonly number[])[]): Float32Array;
  /** Free what the cache holds (in other threads too); it is not used after. */
  close(): void;
}

let nextId = 1;

function expect<T extends { kind: string }>(w: ComputeWorker, kind: T['kind']): T {
  const r = w.receive<T>();
  if (r.kind !== kind) {
    closeComputeWorkers(); // the other workers may hold answers nobody will read: start afresh
    throw new Error(`a sampling worker failed: ${'message' in r ? r.message : r.kind}`);
  }
  return r as T;
}

/** Rows per thread below which a split does not pay for its messages. */
const MIN_ROWS_PER_THREAD = 8;

/**
 * A cache for `nRows` rows on up to `threads` threads (at least 8 rows each); a plain `KVCache` on
 * one thread, or when no worker thread is available.
 */
export function makeTokenCache(model: TinyAgent, nRows: number, threads: number): TokenCache {
  const parts = Math.min(threads, Math.floor(nRows / MIN_ROWS_PER_THREAD));
  const workers = parts > 1 ? computeWorkers(parts - 1) : [];
  return workers.length ? new SplitKVCache(model, nRows, workers) : new KVCache(model);
}

class SplitKVCache implements TokenCache {
  private readonly id = nextId++;
  private readonly local: KVCache;
  /** First row of each part, and the end. */
  private readonly bounds: number[];
  private readonly length: number[];
  private readonly resets: number[][];

  constructor(
    private readonly model: TinyAgent,
    nRows: number,
    private readonly workers: ComputeWorker[],
  ) {
    const parts = workers.length + 1;
    this.bounds = Array.from({ length: parts + 1 }, (_, p) => Math.round((p * nRows) / parts));
    this.length = new Array(nRows).fill(0);
    this.resets = workers.map(() => []);
    this.local = new KVCache(model);
    const weights = flatWeights(model);
    const open: KvJob = {
      kind: 'kv-open',
      id: this.id,
      config: model.config,
      weights,
      fastKernels: fastKernelsActive(),
    };
    for (const w of workers) w.send(open);
    for (const w of workers) expect(w, 'kv-open');
  }

  private partOf(r: number): number {
    let p = 0;
    while (r >= this.bounds[p + 1]) p++;
    return p;
  }

  close(): void {
    for (const w of this.workers) w.post({ kind: 'kv-close', id: this.id } satisfies KvJob);
  }

  reset(r: number): void {
    if (r < 0 || r >= this.length.length) throw new Error(`KV cache: no row ${r}`);
    this.length[r] = 0;
    const p = this.partOf(r);
    if (p === 0) this.local.reset(r);
    else this.resets[p - 1].push(r - this.bounds[p]);
  }

  step(rows: readonly number[], chunks: readonly (readonly number[])[]): Float32Array {
    const V = this.model.config.vocabSize;
    const pad: KVPad = {
      C: Math.max(...chunks.map((x) => x.length)),
      L: Math.max(...rows.map((r, i) => this.length[r] + chunks[i].length)),
    };
    const parts = this.workers.length + 1;
    const mine: number[][] = Array.from({ length: parts }, () => []); // positions in `rows`
    rows.forEach((r, i) => {
      mine[this.partOf(r)].push(i);
    });
    const asked: number[] = [];
    for (let p = 1; p < parts; p++) {
      if (mine[p].length === 0) continue;
      const job: KvJob = {
        kind: 'kv-step',
        id: this.id,
        rows: mine[p].map((i) => rows[i] - this.bounds[p]),
        chunks: mine[p].map((i) => [...chunks[i]]),
        reset: this.resets[p - 1].splice(0),
        pad,
      };
      this.workers[p - 1].send(job);
      asked.push(p);
    }
    const out = new Float32Array(rows.length * V);
    const put = (p: number, logits: Float32Array) => {
      mine[p].forEach((i, a) => {
        out.set(logits.subarray(a * V, (a + 1) * V), i * V);
      });
    };
    if (mine[0].length)
      put(
        0,
        this.local.step(
          mine[0].map((i) => rows[i]),
          mine[0].map((i) => chunks[i]),
          pad,
        ),
      );
    for (const p of asked)
      put(p, expect<Extract<KvReply, { kind: 'kv-step' }>>(this.workers[p - 1], 'kv-step').logits);
    rows.forEach((r, i) => {
      this.length[r] += chunks[i].length;
    });
    return out;
  }
}
