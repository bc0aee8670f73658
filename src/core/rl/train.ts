/**
 * The training loop (the chapter's `train_rl`): sample a step, compute advantages, update, record.
 * With a run folder, each completed step is appended to the run files and the latest training
 * state (weights, optimizer, generator) is saved, so a killed run resumes where it stopped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { collate, type Trajectory } from '../gym/episode.js';
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { toTrajectoryJSON } from '../gym/trajectory-json.js';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { Rng } from '../rng.js';
import { appendEpisodes, appendHistory, type HistoryEntry } from '../runs/run-files.js';
import type { RLConfig } from './config.js';
import {
  type BehaviorStats,
  behaviorStats,
  computeAdvantages,
  defaultEnvFactory,
  type EnvFactory,
  rlUpdate,
  sampleStep,
  type UpdateStats,
} from './grpo.js';

/** Advantages of a step's episodes: one per episode or one per predicted position. */
export type AdvantageFn = (trajs: Trajectory[], cfg: RLConfig) => (number | number[])[];

export const outcomeAdvantages: AdvantageFn = (trajs, cfg) =>
  computeAdvantages(
    trajs.map((t) => t.reward),
    cfg.groupSize,
  );

export type StepRecord = HistoryEntry &
  BehaviorStats &
  UpdateStats & { sample_s: number; update_s: number; lr: number };

export interface TrainOptions {
  envFactory?: EnvFactory;
  advantages?: AdvantageFn;
  /** Write run files here (the folder must exist with its config.json: see createRun). */
  runDir?: string;
  /** Episodes of each step to store in episodes.jsonl (default: all). */
  saveEpisodes?: number;
  /** Keep a numbered checkpoint every this many steps (the latest state is always kept). */
  checkpointEvery?: number;
  /** Called after each completed step. */
  onStep?: (rec: StepRecord, trajs: Trajectory[]) => void;
  /** Checked between steps; when it returns true the loop stops after the current step. */
  shouldStop?: () => boolean;
  /** Learning rate per step (a schedule), for curricula; default cfg.lr. */
  lrAt?: (step: number) => number;
  /** Config per step (for a budget curriculum); default cfg. */
  cfgAt?: (step: number) => RLConfig;
  /** Index of the first step (for resuming). */
  startStep?: number;
  /** Generator state to resume from. */
  rngState?: number[];
  /** Optimizer to continue with (for resuming); a new Adam otherwise. */
  optimizer?: tf.Optimizer;
  /** Extra statistics to record with each step (for example the critic's loss). */
  stepStats?: () => Record<string, number>;
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Train `policy` in place for `steps` steps; returns the per-step history of behaviour and
 * update statistics. Deterministic for cfg.seed.
 */
export async function trainRl(
  policy: TinyAgent,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  steps: number,
  opts: TrainOptions = {},
): Promise<StepRecord[]> {
  const rng = new Rng(cfg.seed);
  if (opts.rngState) rng.setState(opts.rngState);
  const opt = opts.optimizer ?? tf.train.adam(cfg.lr);
  const history: StepRecord[] = [];
  const start = opts.startStep ?? 0;
  for (let step = start; step < steps; step++) {
    const c = opts.cfgAt?.(step) ?? cfg;
    const factory = opts.envFactory ?? defaultEnvFactory(c);
    const lr = opts.lrAt?.(step) ?? c.lr * Math.min(1, (step + 1) / (c.warmupSteps + 1));
    (opt as unknown as { learningRate: number }).learningRate = lr;
    const t0 = performance.now();
    const { trajs, samples } = sampleStep(policy, factory, tasks, tok, c, rng);
    const t1 = performance.now();
    const adv = (opts.advantages ?? outcomeAdvantages)(trajs, c);
    let upd: UpdateStats;
    if (samples) {
      // Per-call samples (a context policy): each call trains on its own view, with its episode's advantage.
      if (adv.some((a) => Array.isArray(a)))
        throw new Error('per-token advantages need the full context (they are aligned with whole episodes)');
      const batch = collate(
        samples.map((s) => s.traj),
        tok.padId,
      );
      // Minibatches of whole episodes (all their calls): as many gradient steps as the episode update.
      upd = rlUpdate(
        policy,
        opt,
        batch,
        samples.map((s) => adv[s.episode]),
        c,
        rng,
        samples.map((s) => s.episode),
      );
    } else upd = rlUpdate(policy, opt, collate(trajs, tok.padId), adv, c, rng);
    const t2 = performance.now();
    const stats = behaviorStats(trajs);
    const rec = {
      step,
      episodes: trajs.length,
      ...Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, r4(v)])),
      ...Object.fromEntries(Object.entries(upd).map(([k, v]) => [k, r4(v)])),
      sample_s: r4((t1 - t0) / 1000),
      update_s: r4((t2 - t1) / 1000),
      lr,
      ...Object.fromEntries(Object.entries(opts.stepStats?.() ?? {}).map(([k, v]) => [k, r4(v)])),
    } as StepRecord;
    history.push(rec);
    if (opts.runDir) {
      const n = Math.min(opts.saveEpisodes ?? trajs.length, trajs.length);
      appendEpisodes(
        opts.runDir,
        trajs.slice(0, n).map((t, i) =>
          toTrajectoryJSON(t, tok, {
            step,
            index: i,
            group: Math.floor(i / c.groupSize),
            advantages: expandAdvantage(adv[i], t),
          }),
        ),
      );
      saveTrainingState(path.join(opts.runDir, 'checkpoints', 'latest'), policy, tok, opt, rng, step, cfg);
      if (opts.checkpointEvery && (step + 1) % opts.checkpointEvery === 0)
        saveCheckpoint(
          path.join(opts.runDir, 'checkpoints', `step-${String(step).padStart(4, '0')}`),
          policy,
          tok,
          {
            step,
            seed: cfg.seed,
          },
        );
      appendHistory(opts.runDir, rec);
    }
    opts.onStep?.(rec, trajs);
    // Let the event loop breathe (messages, cancellation) between steps.
    await new Promise((r) => setImmediate(r));
    if (opts.shouldStop?.()) break;
  }
  if (!opts.optimizer) opt.dispose();
  return history;
}

/** Advantages per predicted position, zero off the mask (for the trajectory JSON). */
function expandAdvantage(a: number | number[], t: Trajectory): number[] {
  return Array.isArray(a) ? a.map((x, i) => (t.actionMask[i] ? x : 0)) : t.actionMask.map((m) => (m ? a : 0));
}

interface TrainingState {
  step: number;
  rng: number[];
  optimizer: { name: string; shape: number[] }[];
  seed: number;
}

/** Save weights, the optimizer's moments and the generator, replacing the folder atomically. */
export function saveTrainingState(
  dir: string,
  policy: TinyAgent,
  tok: Tokenizer,
  opt: tf.Optimizer,
  rng: Rng,
  step: number,
  cfg: RLConfig,
): void {
  const tmp = `${dir}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  saveCheckpoint(tmp, policy, tok, { step, seed: cfg.seed, kind: 'training-state' });
  const weights = optimizerWeights(opt);
  const total = weights.reduce((n, w) => n + w.values.length, 0);
  const buf = new Float32Array(total);
  let at = 0;
  for (const w of weights) {
    buf.set(w.values, at);
    at += w.values.length;
  }
  fs.writeFileSync(path.join(tmp, 'optimizer.bin'), Buffer.from(buf.buffer));
  const state: TrainingState = {
    step,
    rng: rng.getState(),
    optimizer: weights.map((w) => ({ name: w.name, shape: w.shape })),
    seed: cfg.seed,
  };
  fs.writeFileSync(path.join(tmp, 'state.json'), `${JSON.stringify(state)}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
}

/**
 * Adam's state, read synchronously: its step counters and its moments, which TF.js keeps in the
 * order of the variables passed to applyGradients (the policy's parameter order here).
 */
interface AdamInternals {
  accBeta1: tf.Variable;
  accBeta2: tf.Variable;
  accumulatedFirstMoment: { originalName: string; variable: tf.Variable }[];
  accumulatedSecondMoment: { originalName: string; variable: tf.Variable }[];
}

function optimizerWeights(opt: tf.Optimizer): { name: string; shape: number[]; values: Float32Array }[] {
  const o = opt as unknown as AdamInternals;
  const read = (name: string, v: tf.Variable) => ({
    name,
    shape: v.shape.slice(),
    values: v.dataSync() as Float32Array,
  });
  return [
    read('accBeta1', o.accBeta1),
    read('accBeta2', o.accBeta2),
    ...(o.accumulatedFirstMoment ?? []).map((m, i) => read(`m/${i}`, m.variable)),
    ...(o.accumulatedSecondMoment ?? []).map((m, i) => read(`v/${i}`, m.variable)),
  ];
}

export interface ResumeState {
  policy: TinyAgent;
  optimizer: tf.Optimizer;
  rngState: number[];
  /** The next step to run. */
  startStep: number;
}

/** Load `checkpoints/latest` of a run: weights, Adam's moments and the generator. */
export function loadTrainingState(runDir: string, tok: Tokenizer, cfg: RLConfig): ResumeState {
  const dir = path.join(runDir, 'checkpoints', 'latest');
  if (!fs.existsSync(path.join(dir, 'state.json')))
    throw new Error(
      `${runDir} has no saved training state (checkpoints/latest/state.json): nothing to resume`,
    );
  const policy = loadCheckpoint(dir, tok, { expect: 'policy' });
  const state: TrainingState = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
  const bytes = fs.readFileSync(path.join(dir, 'optimizer.bin'));
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const optimizer = tf.train.adam(cfg.lr);
  const o = optimizer as unknown as AdamInternals;
  const vars = policy.variables();
  o.accumulatedFirstMoment = [];
  o.accumulatedSecondMoment = [];
  let at = 0;
  for (const w of state.optimizer) {
    const n = w.shape.reduce((a, b) => a * b, 1);
    const t = tf.tensor(all.slice(at, at + n), w.shape);
    at += n;
    const [kind, index] = w.name.split('/');
    if (kind === 'accBeta1' || kind === 'accBeta2') {
      o[kind].assign(t);
      t.dispose();
    } else {
      const v = vars[Number(index)];
      if (!v)
        throw new Error(`optimizer state has a moment for parameter ${index}, the model has ${vars.length}`);
      const list = kind === 'm' ? o.accumulatedFirstMoment : o.accumulatedSecondMoment;
      list[Number(index)] = { originalName: `${v.name}/${kind}`, variable: tf.variable(t, false) };
      t.dispose();
    }
  }
  return { policy, optimizer, rngState: state.rng, startStep: state.step + 1 };
}
