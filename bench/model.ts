/**
 * Model benchmark: prints medians (ms) of the TinyAgent forward, forward + backward + Adam, KV-cached
 * sampling, and episodes per second on the real gym, on the backend in use, with ratios to the
 * PyTorch figures measured on this machine kind (shared/PERF-NOTES.md). Not a test: the machines
 * are shared and noisy, so compare ratios from one run.
 *
 *   npm run bench            (add -- --reps 7 for more repetitions)
 */
import * as os from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import {
  buildTokenizer,
  defaultModelConfig,
  initBackend,
  KVCache,
  loadCheckpoint,
  makeEnv,
  makeRLConfig,
  makeTasks,
  Rng,
  randomizeNames,
  rolloutBatch,
  TinyAgent,
  trainRl,
} from '../src/core/index.js';
import { baseCheckpointDir } from '../src/core/paths.js';

/** PyTorch 1.13 + OpenBLAS, 2 threads, same model and shapes (PERF-NOTES.md, first pass). */
const PYTORCH_MS = { forward: 312, train: 838, sample: 335 };

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1]) || 5;

function median(f: () => void, n = reps): number {
  f(); // warm-up (kernel compilation, allocation)
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    f();
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return ts[Math.floor(n / 2)];
}

async function main() {
  const info = await initBackend();
  const tok = buildTokenizer(makeTasks('all'));
  const model = TinyAgent.create(defaultModelConfig(tok.size), 0);
  console.log(
    `load average ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} cores (the figures inflate with load)`,
  );
  console.log(
    `backend: ${info.detail}; TinyAgent ${model.numParamsWithoutPositions} parameters (+${model.numParams - model.numParamsWithoutPositions} positions); ${reps} repetitions, medians`,
  );
  const B = 64;
  const T = 128;
  const rng = new Rng(1);
  const ids = tf.tensor2d(
    Array.from({ length: B * T }, () => rng.int(tok.size)),
    [B, T],
    'int32',
  );
  const forward = median(() => tf.tidy(() => void model.logits(ids).dataSync()));
  const opt = tf.train.adam(1e-3);
  const vars = model.variables();
  const train = median(() =>
    tf.tidy(() => {
      const { value, grads } = tf.variableGrads(
        () => tf.neg(tf.mean(tf.logSoftmax(model.logits(ids)))) as tf.Scalar,
        vars,
      );
      opt.applyGradients(grads as unknown as Record<string, tf.Variable>);
      value.dataSync();
    }),
  );
  // Sampling with the KV cache: 64 sequences, a 40-token prompt, then 60 new tokens one at a time.
  const sample = median(() => {
    const cache = new KVCache(model);
    const rows = Array.from({ length: B }, (_, i) => i);
    let chunks = rows.map(() => Array.from({ length: 40 }, () => rng.int(tok.size)));
    for (let t = 0; t < 60; t++) {
      const logits = cache.step(rows, chunks);
      chunks = rows.map((r) => [logits[r * tok.size] > 0 ? 1 : 2]);
    }
  });
  const row = (name: string, ms: number, ref: number) =>
    console.log(
      `${name.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms   PyTorch ${String(ref).padStart(4)} ms   ratio ${(ms / ref).toFixed(2)}x`,
    );
  row(`forward [${B}, ${T}]`, forward, PYTORCH_MS.forward);
  row(`forward + backward + Adam [${B}, ${T}]`, train, PYTORCH_MS.train);
  row(`sample ${B} x (40 prompt + 60 new), KV cache`, sample, PYTORCH_MS.sample);
  // The real gym: episodes sampled per second by the shipped base, 128 at a time.
  const base = loadCheckpoint(baseCheckpointDir(), tok);
  const tasks = makeTasks('train');
  let n = 0;
  let tokens = 0;
  const gym = median(() => {
    const names = new Rng(2);
    const batch = Array.from({ length: 128 }, (_, i) => randomizeNames(tasks[i % tasks.length], names));
    const trajs = rolloutBatch(
      base,
      batch.map(() => makeEnv()),
      batch,
      tok,
      new Rng(3),
    );
    n = trajs.length;
    tokens = trajs.reduce((a, t) => a + t.ids.length, 0) / n;
  }, 3);
  console.log(
    `${`gym: 128 episodes of the base (${tokens.toFixed(0)} tokens)`.padEnd(44)} ${gym.toFixed(0).padStart(6)} ms   ${((n / gym) * 1000).toFixed(0)} episodes/s`,
  );
  // One GRPO step and a whole run's estimate on the default config (16 prompts x 8).
  const policy = base.clone();
  const hist = await trainRl(policy, tasks, tok, makeRLConfig({ seed: 0 }), 3);
  const s = hist.map((h) => h.sample_s).sort((a, b) => a - b)[1];
  const u = hist.map((h) => h.update_s).sort((a, b) => a - b)[1];
  console.log(
    `GRPO step, default config (128 episodes): sampling ${s.toFixed(2)} s + update ${u.toFixed(2)} s; 40 steps about ${(40 * (s + u)).toFixed(0)} s`,
  );
  console.log(
    "(the first steps of a run are the base agent's: later steps sample shorter or longer episodes)",
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
