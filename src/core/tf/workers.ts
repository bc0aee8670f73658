/**
 * Compute threads. TF.js's wasm backend runs one thread under Node; to use more cores, work is
 * split across worker threads, each with its own backend (the script `rl/worker.ts`, bundled as
 * dist/worker.js, answers the jobs of `rl/grad-pool.ts` and `model/kv-split.ts`).
 *
 * The callers are synchronous (a sampler tick, a gradient step), so a request is a message on the
 * worker's port and the answer is waited for with Atomics.wait on a flag the worker raises after
 * posting it (the pattern of synckit). Whatever runs on the threads, the callers' results must not
 * depend on it: each job computes exactly what this thread would have computed for the same part.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { backendInfo } from './backend.js';

/** How long one job may take before the worker is given up (a worker that died never answers). */
const JOB_TIMEOUT_MS = 10 * 60_000;
const START_TIMEOUT_MS = 60_000;

/** The worker's script: next to the bundle (dist/worker.js), or the source file under tsx (tests). */
function workerScript(): string | null {
  const candidates = [path.join(__dirname, 'worker.js'), path.join(__dirname, '..', 'rl', 'worker.ts')];
  return candidates.find((f) => fs.existsSync(f)) ?? null;
}

/** What a worker may answer besides a job's own reply. */
export type WorkerFailure = { kind: 'error'; message: string };

export class ComputeWorker {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));

  constructor(script: string, backend: string) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const options = { workerData: { port: port2, signal: this.signal, backend }, transferList: [port2] };
    // Under tsx (tests, the benchmark) the worker registers tsx's loader itself: Node 20 does not
    // pass a parent's loader hooks on to worker threads.
    this.worker = script.endsWith('.ts')
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, { ...options, eval: true })
      : new Worker(script, options);
    // Neither keeps the process alive: a finished run exits without closing the pool.
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', () => {}); // reported through the port, or as a timeout
  }

  /** Ask for one answer (the flag is lowered here: the worker raises it after posting, never before). */
  send(msg: object, transfer: ArrayBuffer[] = []): void {
    Atomics.store(this.signal, 0, 0);
    this.port.postMessage(msg, transfer);
  }

  /** A message that has no answer. */
  post(msg: object): void {
    this.port.postMessage(msg);
  }

  /** Wait for the worker's next answer. */
  receive<T>(timeoutMs = JOB_TIMEOUT_MS): T | WorkerFailure {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = receiveMessageOnPort(this.port);
      if (got) return got.message as T;
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'error', message: `no answer in ${Math.round(timeoutMs / 1000)} s` };
      Atomics.wait(this.signal, 0, 0, Math.min(left, 1000));
    }
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

interface Pool {
  workers: ComputeWorker[];
  /** Why no thread could start (later calls do not try again), or null. */
  failure: string | null;
}

let pool: Pool | null = null;

/** Most threads the sampler uses by default (each worker holds its own backend's memory). */
const MAX_DEFAULT_THREADS = 4;

/**
 * `EPISODE_LAB_THREADS`, when set: the most threads (this one included) any job may use; 1 means
 * this thread only. Anything but a whole number from 1 up is read as 1 (see `threadsSettingProblem`).
 */
function threadCap(): number {
  const env = process.env.EPISODE_LAB_THREADS;
  if (env === undefined || env.trim() === '') return Number.POSITIVE_INFINITY;
  return /^\s*[1-9]\d*\s*$/.test(env) ? Number(env) : 1;
}

/** What is wrong with EPISODE_LAB_THREADS, for the CLI to say, or null. */
export function threadsSettingProblem(): string | null {
  const env = process.env.EPISODE_LAB_THREADS;
  if (env === undefined || env.trim() === '' || /^\s*[1-9]\d*\s*$/.test(env)) return null;
  return `EPISODE_LAB_THREADS=${JSON.stringify(env)} is not a whole number from 1 up: using one thread (unset it to use the machine's cores)`;
}

/**
 * The sampler's threads by default: the machine's cores, at most 4, or EPISODE_LAB_THREADS. (The
 * episodes do not depend on it; the gradient's parts come from RLConfig.workers.)
 */
export function defaultThreads(): number {
  return Math.max(1, Math.min(threadCap(), os.availableParallelism(), MAX_DEFAULT_THREADS));
}

/**
 * Up to `n` worker threads (started on first use; more are added when asked): fewer when
 * EPISODE_LAB_THREADS caps them, none when they cannot start. Callers run the parts that have no
 * worker in this thread.
 */
export function computeWorkers(n: number): ComputeWorker[] {
  const want = Math.min(n, threadCap() - 1);
  if (want <= 0) return [];
  return ensurePool(want).workers.slice(0, want);
}

function ensurePool(n: number): Pool {
  if (pool && (pool.failure || pool.workers.length >= n)) return pool;
  const none = (why: string): Pool => {
    pool = { workers: [], failure: why };
    return pool;
  };
  const script = workerScript();
  if (!script) return none('worker.js not found next to the bundle');
  const backend = backendInfo()?.name ?? 'wasm';
  const workers = pool?.workers ?? [];
  const started: ComputeWorker[] = [];
  for (let i = workers.length; i < n; i++) started.push(new ComputeWorker(script, backend));
  for (const w of started) {
    const r = w.receive<{ kind: 'ready' }>(START_TIMEOUT_MS);
    if (r.kind !== 'ready') {
      for (const s of [...workers, ...started]) s.terminate();
      return none(r.kind === 'error' ? r.message : 'unexpected answer');
    }
  }
  workers.push(...started);
  pool = { workers, failure: null };
  return pool;
}

/** Where `parts` parts of a split job run (for logs and the benchmark). */
export function computeDetail(parts: number): string {
  if (parts <= 1) return 'one part: this thread';
  const n = computeWorkers(parts - 1).length;
  if (n === parts - 1) return `${n} worker thread${n === 1 ? '' : 's'} beside this one`;
  if (pool?.failure) return `no worker threads (${pool.failure}): parts run one after another in this thread`;
  return `${n} worker thread${n === 1 ? '' : 's'} beside this one (EPISODE_LAB_THREADS=${process.env.EPISODE_LAB_THREADS}): the other parts run one after another in this thread`;
}

/** Stop the worker threads (they never keep the process alive; this frees their memory sooner). */
export function closeComputeWorkers(): void {
  for (const w of pool?.workers ?? []) w.terminate();
  pool = null;
}
