/**
 * A compute worker thread (started by `tf/workers.ts`): its own TF.js backend and its own copy of
 * the model, sent the current weights with every job. It answers gradient jobs (`grad-pool.ts`)
 * and KV-cache sampling steps (`model/kv-split.ts`) on its MessagePort, then raises the shared flag
 * so that the caller, waiting synchronously with Atomics.wait, wakes.
 */
import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'node:worker_threads';
import { packParameters, unpackParameters } from '../model/flat-params.js';
import { KVCache } from '../model/kv-cache.js';
import type { KvJob, KvReply } from '../model/kv-split.js';
import { type ModelConfig, TinyAgent } from '../model/tinyagent.js';
import { type BackendPreference, initBackend } from '../tf/backend.js';
import { setFastKernels } from '../tf/fast-kernels.js';
import type { GradJob, GradReply } from './grad-protocol.js';
import { pgGradients } from './policy-gradient.js';

const { port, signal, backend } = workerData as {
  port: MessagePort;
  signal: Int32Array;
  backend: BackendPreference;
};

type Reply = GradReply | KvReply | { kind: 'ready'; backend: string } | { kind: 'error'; message: string };

function reply(msg: Reply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(msg, transfer);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

let model: TinyAgent | null = null;
let modelKey = '';
/** The split caches this worker holds a block of, by id, each with its own copy of its model. */
const caches = new Map<number, KVCache>();

/** The worker's model with these weights. */
function withWeights(config: ModelConfig, weights: Float32Array): TinyAgent {
  const key = JSON.stringify(config);
  const values = unpackParameters(config, weights);
  if (!model || key !== modelKey) {
    model?.dispose();
    model = new TinyAgent(config, values);
    modelKey = key;
  } else model.load(values);
  return model;
}

function gradient(job: GradJob): void {
  const m = withWeights(job.config, job.weights);
  setFastKernels(job.fastKernels);
  const r = pgGradients(m, job.rows, job.opts);
  const grads = packParameters(job.config, (name) => r.grads[m.p(name).name].dataSync() as Float32Array);
  for (const g of Object.values(r.grads)) g.dispose();
  reply({ kind: 'grad', grads, loss: r.loss, clipped: r.clipped, kl: r.kl, ent: r.ent }, [
    grads.buffer as ArrayBuffer,
  ]);
}

function kv(job: KvJob): void {
  if (job.kind === 'kv-close') {
    const cache = caches.get(job.id);
    cache?.close();
    cache?.model.dispose();
    caches.delete(job.id);
    return; // no answer
  }
  if (job.kind === 'kv-open') {
    caches.set(job.id, new KVCache(new TinyAgent(job.config, unpackParameters(job.config, job.weights))));
    setFastKernels(job.fastKernels);
    reply({ kind: 'kv-open' });
    return;
  }
  const cache = caches.get(job.id);
  if (!cache) throw new Error(`a KV step for cache ${job.id}, which this worker does not hold`);
  for (const r of job.reset) cache.reset(r);
  const logits = cache.step(job.rows, job.chunks, job.pad);
  reply({ kind: 'kv-step', logits }, [logits.buffer as ArrayBuffer]);
}

async function main(): Promise<void> {
  try {
    const info = await initBackend(backend);
    reply({ kind: 'ready', backend: info.detail });
  } catch (e) {
    reply({ kind: 'error', message: `the worker's backend did not start: ${(e as Error).message}` });
    return;
  }
  port.on('message', (job: GradJob | KvJob) => {
    try {
      if (job.kind === 'grad') gradient(job);
      else kv(job);
    } catch (e) {
      reply({ kind: 'error', message: (e as Error).message });
    }
  });
}

void main();
