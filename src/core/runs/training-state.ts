/**
 * Persisting training steps: the recorder that appends a completed step to the run files, and the
 * training state (weights, Adam's moments, the generator) that lets a killed run resume bit for bit.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import type { Trajectory } from '../gym/episode.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { toTrajectoryJSON } from '../gym/trajectory-json.js';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.js';
import type { TinyAgent } from '../model/tinyagent.js';
import type { RLConfig } from '../rl/config.js';
import type { CompletedStep } from '../rl/train.js';
import type { Rng } from '../rng.js';
import { appendEpisodes, appendHistory } from './run-files.js';

export interface RecorderOptions {
  /** Episodes of each step to store in episodes.jsonl (default: all). */
  saveEpisodes?: number;
  /** Keep a numbered checkpoint every this many steps (the latest state is always kept). */
  checkpointEvery?: number;
}

/**
 * A `trainRl` recorder for the run in `runDir` (created with createRun): per completed step, its
 * episodes, the latest training state, a numbered checkpoint every `checkpointEvery` steps, then
 * its history line.
 */
export function runRecorder(
  runDir: string,
  tok: Tokenizer,
  opts: RecorderOptions = {},
): (done: CompletedStep) => void {
  return ({ step, rec, trajs, advantages, stepCfg, cfg, policy, optimizer, rng }) => {
    const n = Math.min(opts.saveEpisodes ?? trajs.length, trajs.length);
    appendEpisodes(
      runDir,
      trajs.slice(0, n).map((t, i) =>
        toTrajectoryJSON(t, tok, {
          step,
          index: i,
          group: Math.floor(i / stepCfg.groupSize),
          advantages: expandAdvantage(advantages[i], t),
        }),
      ),
    );
    saveTrainingState(path.join(runDir, 'checkpoints', 'latest'), policy, tok, optimizer, rng, step, cfg);
    if (opts.checkpointEvery && (step + 1) % opts.checkpointEvery === 0)
      saveCheckpoint(path.join(runDir, 'checkpoints', `step-${String(step).padStart(4, '0')}`), policy, tok, {
        step,
        seed: cfg.seed,
      });
    appendHistory(runDir, rec);
  };
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

/** True when the run has a saved training state to resume from. */
export function hasTrainingState(runDir: string): boolean {
  return fs.existsSync(path.join(runDir, 'checkpoints', 'latest', 'state.json'));
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
