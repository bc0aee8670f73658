/**
 * The training loop (the chapter's `train_rl`): sample a step, compute advantages, update, record.
 * Each completed step is handed to `opts.record` with everything needed to persist it (the run
 * files are written by src/core/runs, which passes a recorder), then to `opts.onStep`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { collate, type Trajectory } from '../gym/episode.js';
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { Rng } from '../rng.js';
import { groupAdvantages } from './advantages.js';
import type { RLConfig } from './config.js';
import {
  type BehaviorStats,
  behaviorStats,
  defaultEnvFactory,
  type EnvFactory,
  rlUpdate,
  sampleStep,
  type UpdateStats,
} from './grpo.js';

/** Advantages of a step's episodes: one per episode or one per predicted position. */
export type AdvantageFn = (trajs: Trajectory[], cfg: RLConfig) => (number | number[])[];

/** `groupAdvantages` of the episodes' rewards as an AdvantageFn: GRPO's advantage, trainRl's default. */
export const groupAdvantageFn: AdvantageFn = (trajs, cfg) =>
  groupAdvantages(
    trajs.map((t) => t.reward),
    cfg.groupSize,
  );

/** One line of a run's history: the step, its episode count, behaviour and update statistics. */
export type StepRecord = { step: number; episodes: number; [stat: string]: number } & BehaviorStats &
  UpdateStats & { sample_s: number; update_s: number; lr: number };

export interface TrainOptions {
  envFactory?: EnvFactory;
  advantages?: AdvantageFn;
  /** Persist a completed step (runs/ writes the run files with it); called before onStep. */
  record?: (done: CompletedStep) => void;
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

/** A completed step and the training state after it: what a recorder needs to persist the step. */
export interface CompletedStep {
  step: number;
  rec: StepRecord;
  trajs: Trajectory[];
  /** The advantages the update used: one per episode or one per predicted position. */
  advantages: (number | number[])[];
  /** The step's config (cfgAt's, or the run's). */
  stepCfg: RLConfig;
  /** The run's config. */
  cfg: RLConfig;
  policy: TinyAgent;
  optimizer: tf.Optimizer;
  rng: Rng;
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
    const adv = (opts.advantages ?? groupAdvantageFn)(trajs, c);
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
    opts.record?.({ step, rec, trajs, advantages: adv, stepCfg: c, cfg, policy, optimizer: opt, rng });
    opts.onStep?.(rec, trajs);
    // Let the event loop breathe (messages, cancellation) between steps.
    await new Promise((r) => setImmediate(r));
    if (opts.shouldStop?.()) break;
  }
  if (!opts.optimizer) opt.dispose();
  return history;
}
