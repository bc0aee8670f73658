/**
 * Model benchmark: the TinyAgent forward, forward + backward + Adam and KV-cached sampling on the
 * TF.js backend in use, side by side with the PyTorch reference (`bench/torch_reference.py`, same
 * shape, same workloads) run on this machine in the same run, the two sides interleaved so that the
 * machine's load affects both. Then the figures users feel: gym episodes per second and a GRPO step
 * of the default config (optionally the main job end to end).
 *
 * Ratios come only from this run: no figure measured elsewhere is used. Without a Python that can
 * import torch, the TF.js figures are printed and no ratio is.
 *
 *   npm run bench                              (5 interleaved rounds)
 *   npm run bench -- --reps 3 --quick          (3 rounds, shorter user-facing part)
 *
 * Options: --reps N (rounds: each times every workload once on each side), --quick, --no-torch,
 * --python PATH, --torch-script PATH, --torch-threads 1,2, --grpo-steps N, --main-job (the README's
 * main job, `node dist/cli.js train --steps 40`, end to end from the built dist; --main-job-steps N
 * to try it shorter), --recipes (every recipe once from the built CLI, one seed, its full steps,
 * and the total; an hour or more), --recipes-only (just that), --recipe-steps N (shorter, to try the
 * flag), --no-levers.
 *
 * Levers: each TF.js workload also runs with the wasm backend's own kernels in the same rounds
 * (Episode Lab's SIMD kernels bypassed), so their gain is a ratio measured here, not elsewhere.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import {
  aggregateDenominator,
  baseCheckpointDir,
  buildTokenizer,
  computeDetail,
  defaultModelConfig,
  defaultThreads,
  initBackend,
  KVCache,
  loadCheckpoint,
  makeEnv,
  makeRLConfig,
  makeTasks,
  makeTokenCache,
  type PgRows,
  pgGradients,
  Rng,
  randomizeNames,
  rolloutBatch,
  sampleNext,
  selectedLogProbs,
  splitPgGradients,
  TinyAgent,
  type TokenCache,
  trainRl,
} from '../src/core/index.js';
import { fastKernelsActive, setFastKernels } from '../src/core/tf/fast-kernels.js';

const repoRoot = path.resolve(__dirname, '..');

const { values: argv } = parseArgs({
  options: {
    reps: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'no-torch': { type: 'boolean', default: false },
    python: { type: 'string' },
    'torch-script': { type: 'string' },
    'torch-threads': { type: 'string', default: '1,2' },
    'grpo-steps': { type: 'string' },
    'main-job': { type: 'boolean', default: false },
    'main-job-steps': { type: 'string' },
    recipes: { type: 'boolean', default: false },
    'recipes-only': { type: 'boolean', default: false },
    'recipe-steps': { type: 'string' },
    'no-levers': { type: 'boolean', default: false },
  },
});
const quick = argv.quick;
const rounds = Math.max(1, Number(argv.reps) || (quick ? 3 : 5));
const torchThreads = argv['torch-threads']
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
/** GRPO steps to run: the first (warm-up, base behaviour) is reported but not in the median. */
const grpoSteps = Math.max(2, Number(argv['grpo-steps']) || (quick ? 2 : 4));
/** The README's main job is 40 steps (and the held-out evaluation); fewer only to try the flag. */
const mainSteps = Math.max(1, Number(argv['main-job-steps']) || 40);

// ---------------------------------------------------------------------------------------------
// Workloads, keyed like torch_reference.py's RESULT.

const B = 64;
const T = 128;
/** The reference's vocabulary (torch_reference.py: V = 128), so both sides have the same shapes. */
const REF_VOCAB = 128;
const PROMPT = 40;
const NEW = 60;
/** The reference's workloads (its RESULT keys). */
const TORCH_KEYS = ['a_forward_64x128', 'b_train_step_64x128', 'c_sample_kvcache_64x(40+60)'] as const;
type TorchKey = (typeof TORCH_KEYS)[number];
/**
 * TF.js workloads, each compared with one of the reference's. The `rl_` rows are the training step
 * as `rlUpdate` takes it (the clipped loss with its diagnostics, rows of T + 1 tokens for T predicted
 * positions) in one part and in two (RLConfig.workers = 2: a worker thread computes half).
 */
const WORKLOADS = [
  { key: 'a_forward_64x128', torch: 'a_forward_64x128', label: `forward [${B}, ${T}]` },
  {
    key: 'b_train_step_64x128',
    torch: 'b_train_step_64x128',
    label: `forward + backward + Adam [${B}, ${T}]`,
  },
  { key: 'rl_1', torch: 'b_train_step_64x128', label: `  as rlUpdate, workers=1` },
  { key: 'rl_2', torch: 'b_train_step_64x128', label: `  as rlUpdate, workers=2 (2 threads)` },
  {
    key: 'c_sample_kvcache_64x(40+60)',
    torch: 'c_sample_kvcache_64x(40+60)',
    label: `sample ${B} x (${PROMPT} + ${NEW}), KV cache`,
  },
  { key: 'kv_2', torch: 'c_sample_kvcache_64x(40+60)', label: '  on 2 threads (rows split)' },
] as const;
type Key = (typeof WORKLOADS)[number]['key'];
type Runs = Record<Key, number[]>;
type TorchRuns = Record<TorchKey, number[]>;
const emptyRuns = (): Runs => ({
  a_forward_64x128: [],
  b_train_step_64x128: [],
  rl_1: [],
  rl_2: [],
  'c_sample_kvcache_64x(40+60)': [],
  kv_2: [],
});
const emptyTorchRuns = (): TorchRuns => ({
  a_forward_64x128: [],
  b_train_step_64x128: [],
  'c_sample_kvcache_64x(40+60)': [],
});

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const min = (xs: readonly number[]) => Math.min(...xs);
const time = (f: () => void) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

// ---------------------------------------------------------------------------------------------
// The PyTorch side: found, then run as a child process once per round and thread count.

interface Torch {
  python: string;
  script: string;
  version: string;
  blas: string;
}

/** A Python that imports torch and the reference script, or why not. */
function findTorch(): { torch: Torch | null; why: string } {
  const script = path.resolve(argv['torch-script'] ?? path.join(__dirname, 'torch_reference.py'));
  if (!fs.existsSync(script)) return { torch: null, why: `the reference script ${script} is missing` };
  const candidates = argv.python ? [argv.python] : [...new Set(['python3', '/usr/bin/python3'])];
  const tried: string[] = [];
  for (const python of candidates) {
    const r = spawnSync(python, ['-c', 'import sys, torch; print(torch.__version__, sys.executable)'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status === 0) {
      const [version, exe] = r.stdout.trim().split(/\s+/);
      return { torch: { python: exe || python, script, version, blas: blasLibrary() }, why: '' };
    }
    const err = r.error ? r.error.message : (r.stderr.trim().split('\n').pop() ?? `exit ${r.status}`);
    tried.push(`${python}: ${err}`);
  }
  return { torch: null, why: tried.join('; ') };
}

/** Debian's PyTorch uses whichever libblas.so.3 is selected (reference BLAS is 4 to 8 times slower). */
function blasLibrary(): string {
  for (const lib of ['/usr/lib/x86_64-linux-gnu/libblas.so.3', '/usr/lib/aarch64-linux-gnu/libblas.so.3'])
    if (fs.existsSync(lib)) {
      const real = fs.realpathSync(lib);
      return `${real}${/openblas/.test(real) ? '' : ' (not OpenBLAS: PyTorch from Debian is slow with it)'}`;
    }
  return 'libblas.so.3 not found (a pip-installed PyTorch bundles its own BLAS)';
}

/** One block of the reference: each workload timed once after warm-up, in a fresh process. */
function runTorch(t: Torch, threads: number): { runs: TorchRuns; info: Record<string, unknown> } {
  const args = [t.script, '--threads', String(threads), '--runs', '1,1,0,1', '--warm', '2'];
  args.push('--only', 'fwd,train,kv');
  const r = spawnSync(t.python, args, {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: '1' },
    timeout: 15 * 60_000,
  });
  const line = r.stdout
    ?.split('\n')
    .reverse()
    .find((l) => l.startsWith('RESULT '));
  if (r.status !== 0 || !line)
    throw new Error(
      `${t.python} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr?.trim().split('\n').slice(-3).join(' | ')}`,
    );
  const res = JSON.parse(line.slice('RESULT '.length)) as {
    info: Record<string, unknown>;
    results: Record<string, { runs_ms: number[] }>;
  };
  const runs = emptyTorchRuns();
  for (const key of TORCH_KEYS) {
    const got = res.results[key];
    if (!got) throw new Error(`the reference printed no ${key}`);
    runs[key].push(...got.runs_ms);
  }
  return { runs, info: res.info };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const info = await initBackend();
  if (argv['recipes-only']) {
    const cpus = os.cpus();
    console.log(
      `Episode Lab recipe timings, ${new Date().toISOString()}; ${cpus.length} cores (${cpus[0]?.model ?? 'unknown CPU'}), node ${process.version}; load average ${load()}; backend ${info.detail}; sampling on ${defaultThreads()} threads`,
    );
    recipes();
    return;
  }
  const tok = buildTokenizer(makeTasks('all'));
  // The side-by-side model has the reference's shape (the shipped tokenizer has a few tokens fewer).
  const V = REF_VOCAB;
  const model = TinyAgent.create(defaultModelConfig(V), 0);
  const cpus = os.cpus();
  console.log(`Episode Lab model benchmark, ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown CPU'}), node ${process.version}; load average ${load()} (1, 5, 15 min)`,
  );
  console.log(
    `TF.js ${tf.version_core}, backend ${info.detail}; TinyAgent ${model.numParamsWithoutPositions} parameters (+${model.numParams - model.numParamsWithoutPositions} positions), vocabulary ${V} as in the reference (the shipped model's: ${tok.size})`,
  );

  const { torch, why } = argv['no-torch'] ? { torch: null, why: '--no-torch' } : findTorch();
  if (torch)
    console.log(
      `PyTorch ${torch.version} (${torch.python} ${path.relative(repoRoot, torch.script)}, OPENBLAS_NUM_THREADS=1, --threads ${torchThreads.join(' and ')}); BLAS ${torch.blas}`,
    );
  else
    console.log(
      `no PyTorch on this machine: no ratio (${why}).\n  To compare: apt-get install -y python3-torch libopenblas0-pthread (Debian), or --python PATH to a Python with torch.`,
    );

  // Inputs as in torch_reference.py: random ids and targets, 70 % mask, advantages in [-1, 1),
  // old log-probs -log V; the clipped policy-gradient loss averaged over the mask.
  const rng = new Rng(42);
  const ids = tf.tensor2d(
    Array.from({ length: B * T }, () => rng.int(V)),
    [B, T],
    'int32',
  );
  const targets = tf.tensor2d(
    Array.from({ length: B * T }, () => rng.int(V)),
    [B, T],
    'int32',
  );
  const mask = tf.tensor2d(
    Array.from({ length: B * T }, () => (rng.float() < 0.7 ? 1 : 0)),
    [B, T],
  );
  const adv = tf.tensor2d(
    Array.from({ length: B }, () => rng.float() * 2 - 1),
    [B, 1],
  );
  const oldLogp = tf.fill([B, T], -Math.log(V));
  const opt = tf.train.adam(1e-3);
  const vars = model.variables();
  const prompts = Array.from({ length: B }, () => Array.from({ length: PROMPT }, () => rng.int(V)));
  const sampler = new Rng(7);

  // The same inputs as rows for rlUpdate's gradient: T + 1 tokens, targets the next tokens.
  const idRows = ids.arraySync() as number[][];
  const targetRows = targets.arraySync() as number[][];
  const maskRows = mask.arraySync() as number[][];
  const advRows = (adv.arraySync() as number[][]).map(([a]) => new Array<number>(T).fill(a));
  const rows: PgRows = {
    ids: idRows.map((r, i) => [...r, targetRows[i][T - 1]]),
    mask: maskRows,
    old: maskRows.map(() => new Array<number>(T).fill(-Math.log(V))),
    adv: advRows,
    T: T + 1,
  };
  const pg = {
    temperature: 1,
    clip: 0.2,
    lossMode: 'token_mean' as const,
    denominator: aggregateDenominator(maskRows, 'token_mean'),
  };
  const rlOpt = tf.train.adam(1e-3);
  const rlStep = (workers: number) => {
    const r =
      workers > 1
        ? splitPgGradients(model, rows, new Array<number>(B).fill(T + 1), workers, pg)
        : pgGradients(model, rows, { ...pg, denominator: undefined });
    (rlOpt as tf.Optimizer).applyGradients(r.grads);
    tf.dispose(Object.values(r.grads));
  };
  const workersDetail = computeDetail(2);
  const sampleWith = (cache: TokenCache) => {
    const rows = prompts.map((_, i) => i);
    let chunks: number[][] = prompts;
    for (let t = 0; t < NEW; t++) {
      const logits = cache.step(rows, chunks);
      chunks = rows.map((r) => [sampleNext(logits, r * V, V, 1, sampler).id]);
    }
    cache.close();
  };

  const tfjs: Record<Key, () => void> = {
    a_forward_64x128: () => tf.tidy(() => void model.logits(ids).dataSync()),
    b_train_step_64x128: () =>
      tf.tidy(() => {
        const { value, grads } = tf.variableGrads(() => {
          const lp = selectedLogProbs(model.logits(ids), targets);
          const ratio = tf.exp(tf.sub(lp, oldLogp));
          const surr = tf.minimum(tf.mul(ratio, adv), tf.mul(tf.clipByValue(ratio, 0.8, 1.2), adv));
          return tf.neg(tf.div(tf.sum(tf.mul(surr, mask)), tf.add(tf.sum(mask), 1e-8))) as tf.Scalar;
        }, vars);
        opt.applyGradients(grads as unknown as Record<string, tf.Variable>);
        value.dataSync();
      }),
    rl_1: () => rlStep(1),
    rl_2: () => rlStep(2),
    // 64 sequences: the 40-token prompt, then 59 single tokens, each next token sampled (60 new).
    'c_sample_kvcache_64x(40+60)': () => sampleWith(new KVCache(model)),
    kv_2: () => sampleWith(makeTokenCache(model, B, 2)),
  };

  // Interleaved rounds: TF.js, PyTorch per thread count; every other round in reverse order.
  const tfRuns = emptyRuns();
  /** The same workloads with the backend's own kernels (the SIMD kernels bypassed). */
  const levers = !argv['no-levers'] && fastKernelsActive();
  const slowRuns = emptyRuns();
  const torchRuns = new Map(torchThreads.map((n) => [n, emptyTorchRuns()]));
  const torchInfo = new Map<number, Record<string, unknown>>();
  let torchError = '';
  const loads: number[] = [];
  for (const w of WORKLOADS) tfjs[w.key](); // warm-up (kernel set-up, allocation)
  for (let round = 0; round < rounds; round++) {
    const blocks: (() => void)[] = [
      () => {
        loads.push(os.loadavg()[0]);
        for (const w of WORKLOADS) tfRuns[w.key].push(time(tfjs[w.key]));
      },
    ];
    if (levers)
      blocks.push(() => {
        loads.push(os.loadavg()[0]);
        setFastKernels(false);
        try {
          for (const w of WORKLOADS) slowRuns[w.key].push(time(tfjs[w.key]));
        } finally {
          setFastKernels(true);
        }
      });
    if (torch)
      for (const n of torchThreads)
        blocks.push(() => {
          if (torchError) return;
          loads.push(os.loadavg()[0]);
          try {
            const r = runTorch(torch, n);
            torchInfo.set(n, r.info);
            for (const key of TORCH_KEYS) torchRuns.get(n)![key].push(...r.runs[key]);
          } catch (e) {
            torchError = (e as Error).message;
          }
        });
    for (const block of round % 2 ? blocks.reverse() : blocks) block();
    process.stderr.write(`round ${round + 1}/${rounds} done (load ${os.loadavg()[0].toFixed(2)})\n`);
  }
  if (torchError) console.log(`the PyTorch reference failed, no ratio: ${torchError}`);
  const haveTorch = torch && !torchError;
  for (const [n, i] of torchInfo) {
    if (i.threads !== n) console.log(`note: PyTorch asked for ${n} threads ran with ${i.threads}`);
    if (i.n_params_excl_pos !== model.numParamsWithoutPositions)
      console.log(
        `note: the reference has ${i.n_params_excl_pos} parameters without positions, TinyAgent ${model.numParamsWithoutPositions}: not the same shape`,
      );
  }

  const ms = (x: number) => x.toFixed(0).padStart(6);
  const ratio = (x: number) => `${x.toFixed(2)}x`.padStart(7);
  console.log(
    `\n${rounds} interleaved rounds, milliseconds (median and min over the rounds); 1-min load average during the blocks ${min(loads).toFixed(2)} to ${Math.max(...loads).toFixed(2)}`,
  );
  const head = [`${'workload'.padEnd(40)}`, `${'TF.js'.padStart(6)} ${'(min)'.padStart(6)}`];
  if (levers) head.push(`${'backend k.'.padStart(10)} ${'gain'.padStart(7)}`);
  if (haveTorch) {
    for (const n of torchThreads) head.push(`${`PT ${n}t`.padStart(6)} ${'(min)'.padStart(6)}`);
    head.push(`${'TF.js/PyTorch'.padStart(15)} ${'(min)'.padStart(7)}`);
  }
  console.log(head.join('   '));
  for (const w of WORKLOADS) {
    const tr = tfRuns[w.key];
    const cells = [w.label.padEnd(40), `${ms(median(tr))} ${ms(min(tr))}`];
    if (levers)
      cells.push(
        `${ms(median(slowRuns[w.key])).padStart(10)} ${ratio(median(slowRuns[w.key]) / median(tr))}`,
      );
    if (haveTorch) {
      let bestMed = Number.POSITIVE_INFINITY;
      let bestMin = Number.POSITIVE_INFINITY;
      for (const n of torchThreads) {
        const pr = torchRuns.get(n)![w.torch];
        cells.push(`${ms(median(pr))} ${ms(min(pr))}`);
        bestMed = Math.min(bestMed, median(pr));
        bestMin = Math.min(bestMin, min(pr));
      }
      cells.push(`${ratio(median(tr) / bestMed).padStart(15)} ${ratio(min(tr) / bestMin)}`);
    }
    console.log(cells.join('   '));
  }
  console.log(
    `as rlUpdate: the training step the way rlUpdate takes it (clipped loss, entropy and KL diagnostics, ${T + 1}-token rows); workers=2: ${workersDetail}; its gain over workers=1: ${ratio(median(tfRuns.rl_1) / median(tfRuns.rl_2)).trim()}. Sampling on 2 threads: its gain over one ${ratio(median(tfRuns['c_sample_kvcache_64x(40+60)']) / median(tfRuns.kv_2)).trim()} (the same tokens). Medians.`,
  );
  if (levers)
    console.log(
      'backend k.: the same workload with the wasm backend’s own kernels (Episode Lab’s SIMD BatchMatMul, Sum, Transpose and Identity off), in the same rounds; gain: its median over TF.js’s.',
    );
  if (haveTorch)
    console.log(
      'PT nt: PyTorch with n intra-op threads. Ratios divide by the better PyTorch (the lower median; the lower min).',
    );
  else console.log(`no PyTorch on this machine: no ratio. Backend ${info.name}.`);
  tf.dispose([ids, targets, mask, adv, oldLogp]);
  model.dispose();

  // ---------------------------------------------------------------------------------------------
  // What users feel.
  console.log('\nuser-facing (TF.js only)');
  // The real gym: episodes sampled per second by the shipped base, 128 at a time.
  const base = loadCheckpoint(baseCheckpointDir(), tok);
  const tasks = makeTasks('train');
  let n = 0;
  let tokens = 0;
  const gymOnce = () => {
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
  };
  gymOnce(); // warm-up
  const gymTimes = Array.from({ length: quick ? 1 : 3 }, () => time(gymOnce));
  const gym = median(gymTimes);
  console.log(
    `gym: 128 episodes of the base (${tokens.toFixed(0)} tokens each): ${gym.toFixed(0)} ms, ${((n / gym) * 1000).toFixed(0)} episodes/s`,
  );

  // GRPO steps of the default config from the shipped base; the first step is not in the median.
  const grpo = async (overrides: Record<string, unknown> = {}, threads?: string) => {
    const cfg = makeRLConfig({ seed: 0, ...overrides });
    const before = process.env.EPISODE_LAB_THREADS;
    if (threads !== undefined) process.env.EPISODE_LAB_THREADS = threads;
    const policy = base.clone();
    const t0 = performance.now();
    try {
      const hist = await trainRl(policy, tasks, tok, cfg, grpoSteps);
      const later = hist.slice(1);
      return {
        cfg,
        hist,
        wall: (performance.now() - t0) / 1000,
        s: median(later.map((h) => h.sample_s)),
        u: median(later.map((h) => h.update_s)),
      };
    } finally {
      policy.dispose();
      if (before === undefined) delete process.env.EPISODE_LAB_THREADS;
      else process.env.EPISODE_LAB_THREADS = before;
    }
  };
  type Grpo = Awaited<ReturnType<typeof grpo>>;
  const sameHistory = (a: Grpo, b: Grpo) =>
    a.hist.every((h, i) => h.loss === b.hist[i].loss && h.pass_rate === b.hist[i].pass_rate);
  const g = await grpo();
  const cfg = g.cfg;
  const steps = g.hist.map((h) => `${(h.sample_s + h.update_s).toFixed(1)}`).join(', ');
  const secs = (r: Grpo) =>
    `sampling ${r.s.toFixed(2)} s + update ${r.u.toFixed(2)} s = ${(r.s + r.u).toFixed(2)} s`;
  console.log(
    `GRPO step, default config (${cfg.promptsPerStep} prompts x ${cfg.groupSize} = ${g.hist[1].episodes} episodes sampled + the update, ${cfg.epochs} epochs of minibatches of ${cfg.minibatchSize}; sampling on ${defaultThreads()} threads, workers=${cfg.workers}):` +
      `\n  ${secs(g)} (${grpoSteps > 2 ? `median of steps 2 to ${grpoSteps}` : 'step 2'}; every step: ${steps} s; ${g.wall.toFixed(1)} s in all)` +
      `\n  40 steps at that pace: about ${(40 * (g.s + g.u)).toFixed(0)} s (the base's episodes; later steps sample other lengths)`,
  );
  const one = await grpo({}, '1');
  console.log(
    `  on one thread (EPISODE_LAB_THREADS=1): ${secs(one)}; the threads' gain ${(one.s / g.s).toFixed(2)}x sampling, ${((one.s + one.u) / (g.s + g.u)).toFixed(2)}x the step;` +
      ` the same history: ${sameHistory(g, one) ? 'yes, loss and pass rate equal at every step' : 'NO (a bug: threads must not change results)'}`,
  );
  const two = await grpo({ workers: 2 });
  console.log(
    `  with workers=2 (each minibatch's gradient in 2 parts): ${secs(two)}; its gain ${(g.u / two.u).toFixed(2)}x the update, ${((one.s + one.u) / (two.s + two.u)).toFixed(2)}x the step over one thread;` +
      ` the history equal to float rounding: ${two.hist.every((h, i) => Math.abs(h.loss - g.hist[i].loss) < 1e-3 && Math.abs(h.pass_rate - g.hist[i].pass_rate) < 0.05) ? 'yes' : 'no (tokens sampled differently: a near tie)'}`,
  );
  if (levers) {
    setFastKernels(false);
    const slow = await grpo().finally(() => setFastKernels(true));
    console.log(
      `  with the backend's own kernels: ${secs(slow)};` +
        ` the SIMD kernels' gain ${(slow.s / g.s).toFixed(2)}x sampling, ${(slow.u / g.u).toFixed(2)}x update, ${((slow.s + slow.u) / (g.s + g.u)).toFixed(2)}x the step;` +
        ` the same history: ${sameHistory(g, slow) ? 'yes, loss and pass rate equal at every step' : 'NO (a bug: the kernel must not change results)'}`,
    );
  }

  if (argv['main-job']) mainJob();
  else
    console.log('main job (node dist/cli.js train --steps 40) end to end: not run (add --main-job; minutes)');
  if (argv.recipes) recipes();
  else console.log('recipes: not run (add --recipes: every recipe once, one seed; an hour or more)');
  console.log(`\nload average at the end ${load()}; ${cpus.length} cores; backend ${info.detail}`);
}

/**
 * Every recipe once from the built CLI (one seed, its own steps: 40 per training arm unless
 * --recipe-steps), one after the other, each timed end to end, and the total.
 */
function recipes(): void {
  const cli = path.join(repoRoot, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) {
    console.log('recipes: dist/cli.js is missing (npm run build first)');
    return;
  }
  const list = spawnSync(process.execPath, [cli, 'recipe', '--list'], { encoding: 'utf8' });
  const names = list.stdout
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0])
    .filter(Boolean);
  const steps = argv['recipe-steps'] ? ['--steps', String(Number(argv['recipe-steps']))] : [];
  const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'episode-lab-recipes-'));
  console.log(
    `recipes, one seed (0), ${steps.length ? `${steps[1]} steps per arm` : 'their own steps (40 per training arm)'}, one after the other:`,
  );
  let total = 0;
  try {
    for (const name of names) {
      const t0 = performance.now();
      const r = spawnSync(
        process.execPath,
        [cli, 'recipe', name, '--quiet', '--seed', '0', ...steps, '--dir', path.join(runs, name)],
        { encoding: 'utf8', maxBuffer: 64 << 20 },
      );
      const secs = (performance.now() - t0) / 1000;
      total += secs;
      console.log(
        `  ${name.padEnd(20)} ${secs.toFixed(0).padStart(6)} s${r.status === 0 ? '' : `  FAILED (exit ${r.status}): ${r.stderr.trim().split('\n').pop()}`}   load ${load()}`,
      );
    }
  } finally {
    fs.rmSync(runs, { recursive: true, force: true });
  }
  console.log(`  ${'total'.padEnd(20)} ${total.toFixed(0).padStart(6)} s (${(total / 60).toFixed(1)} min)`);
}

/** The README's main job end to end, from the built CLI, with its run folder in a temporary dir. */
function mainJob(): void {
  const cli = path.join(repoRoot, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) {
    console.log('main job: dist/cli.js is missing (npm run build first)');
    return;
  }
  // As the README runs it; then on one thread (as before the threads); then with workers=2.
  const variants: { label: string; extra: string[]; env?: Record<string, string> }[] = [
    { label: '', extra: [] },
    { label: ' on one thread (EPISODE_LAB_THREADS=1)', extra: [], env: { EPISODE_LAB_THREADS: '1' } },
    { label: ' workers=2', extra: ['workers=2'] },
  ];
  for (const v of variants) {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), 'episode-lab-bench-'));
    try {
      const t0 = performance.now();
      const r = spawnSync(
        process.execPath,
        [cli, 'train', '--steps', String(mainSteps), '--runs-dir', runs, ...v.extra],
        { encoding: 'utf8', cwd: runs, maxBuffer: 64 << 20, env: { ...process.env, ...v.env } },
      );
      const secs = (performance.now() - t0) / 1000;
      if (r.status !== 0) {
        console.log(
          `main job${v.label} failed (exit ${r.status}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
        );
        continue;
      }
      const last = r.stdout.trim().split('\n').slice(-2).join(' | ');
      console.log(
        `main job${v.label} (node dist/cli.js train --steps ${mainSteps}${v.extra.map((x) => ` ${x}`).join('')}, the built dist of ${fs.statSync(cli).mtime.toISOString()}): ${secs.toFixed(0)} s end to end; ${last}`,
      );
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
