/**
 * Shared by the recipes of sections 12.5-12.7 and the exercises: train an arm on any task list
 * (the 50/50 mixture of 12.6 is not the training split) and keep its policy in memory so that the
 * recipe can evaluate it under several environments; plus the small statistics those recipes print.
 *
 * Smoke form (ctx.smoke): 4 prompts x 4 episodes per step and 2 evaluation episodes per task, so
 * that every code path runs in seconds.
 */
import * as path from 'node:path';
import type { Trajectory } from '../gym/episode.js';
import { makeTasks, type Task } from '../gym/tasks.js';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { resolveCheckpoint } from '../paths.js';
import { makeRLConfig, type RLConfig } from '../rl/config.js';
import { type BehaviorStats, type EnvFactory, evaluate } from '../rl/grpo.js';
import { type AdvantageFn, type StepRecord, trainRl } from '../rl/train.js';
import { createRun, writeSummary } from '../runs/run-files.js';
import { lateMeans } from '../runs/train-run.js';
import { runRecorder } from '../runs/training-state.js';
import { backendInfo } from '../tf/backend.js';
import { slug } from './train-arms.js';
import type { RecipeContext } from './types.js';

/** An RLConfig for a recipe arm: the seed of the context, the overrides, and the smoke batch size. */
export function armConfig(ctx: Pick<RecipeContext, 'seed' | 'smoke'>, overrides: Partial<RLConfig> = {}) {
  return makeRLConfig({
    seed: ctx.seed,
    ...overrides,
    ...(ctx.smoke ? { promptsPerStep: 4, groupSize: 4 } : {}),
  });
}

/** Episodes per task of an evaluation: the chapter's 16, 2 in the smoke form. */
export const evalEpisodes = (ctx: Pick<RecipeContext, 'smoke'>) => (ctx.smoke ? 2 : 16);

/** The chapter's `held_out` (or any task list): behaviour statistics, 16 episodes per task, seed 7. */
export function evalStats(
  ctx: Pick<RecipeContext, 'smoke' | 'tok'>,
  policy: TinyAgent,
  cfg: RLConfig,
  o: { tasks?: readonly Task[]; envFactory?: EnvFactory } = {},
): BehaviorStats {
  return evaluate(policy, o.tasks ?? makeTasks('heldout'), ctx.tok, cfg, {
    envFactory: o.envFactory,
    n: evalEpisodes(ctx),
  }).stats;
}

/** The shipped RL base (the caller disposes it). */
export function loadBase(ctx: Pick<RecipeContext, 'tok'>, from = 'base'): TinyAgent {
  return loadCheckpoint(resolveCheckpoint(from), ctx.tok, { expect: 'policy' });
}

export interface PolicyArm {
  name: string;
  cfg: RLConfig;
  /** Training tasks (default: the training split). */
  tasks?: readonly Task[];
  envFactory?: EnvFactory;
  advantages?: AdvantageFn;
  cfgAt?: (step: number) => RLConfig;
  /** Checkpoint to start from (default: the shipped base). */
  from?: string;
  /** Called after each step with its episodes (per-step statistics the history does not keep). */
  onStep?: (rec: StepRecord, trajs: Trajectory[]) => void;
}

export interface PolicyArmRun {
  arm: PolicyArm;
  runDir: string;
  history: StepRecord[];
  /** The trained policy: `finishArm` saves nothing more and disposes it. */
  policy: TinyAgent;
  started: number;
}

/**
 * Train one arm for ctx.steps steps into `<recipe folder>/<arm>`; returns its history and the
 * trained policy (the final checkpoint is saved), or null when stopped early.
 */
export async function trainPolicyArm(
  ctx: RecipeContext,
  recipe: string,
  arm: PolicyArm,
): Promise<PolicyArmRun | null> {
  if (ctx.shouldStop()) return null;
  const started = Date.now();
  const runDir = path.join(ctx.dir, slug(arm.name));
  const from = arm.from ?? 'base';
  ctx.log(`${recipe}: training arm "${arm.name}" for ${ctx.steps} steps -> ${runDir}`);
  createRun(runDir, {
    kind: 'train',
    name: path.basename(runDir),
    config: { ...arm.cfg, steps: ctx.steps } as unknown as Record<string, unknown>,
    backend: backendInfo()?.detail,
    from,
    seed: arm.cfg.seed,
    recipe,
    arm: arm.name,
  });
  const policy = loadBase(ctx, from);
  const history = await trainRl(policy, arm.tasks ?? makeTasks('train'), ctx.tok, arm.cfg, ctx.steps, {
    record: runRecorder(runDir, ctx.tok, { checkpointEvery: 10 }),
    envFactory: arm.envFactory,
    advantages: arm.advantages,
    cfgAt: arm.cfgAt,
    onStep: (rec, trajs) => {
      arm.onStep?.(rec, trajs);
      ctx.onStep?.(arm.name, rec, ctx.steps);
    },
    shouldStop: () => ctx.shouldStop(),
  });
  if (history.length < ctx.steps) {
    policy.dispose();
    return null;
  }
  saveCheckpoint(path.join(runDir, 'checkpoints', 'final'), policy, ctx.tok, {
    steps: ctx.steps,
    seed: arm.cfg.seed,
    from,
  });
  return { arm, runDir, history, policy, started };
}

/** Write the arm's summary.json (late means, timings and the recipe's evaluations) and dispose its policy. */
export function finishArm(run: PolicyArmRun, evaluations: Record<string, unknown> = {}): void {
  writeSummary(run.runDir, {
    steps: run.history.length,
    late: lateMeans(run.history, Math.max(0, run.history.length - 10)),
    evaluations,
    seconds: {
      total: (Date.now() - run.started) / 1000,
      sample: run.history.reduce((a, h) => a + h.sample_s, 0),
      update: run.history.reduce((a, h) => a + h.update_s, 0),
    },
    backend: backendInfo()?.detail,
  });
  run.policy.dispose();
}

// ---------------------------------------------------------------------------------------------
// Statistics of the tables
// ---------------------------------------------------------------------------------------------

/** Consecutive windows [from, to) of `width` steps covering `steps` steps (the last may be shorter). */
export function stepWindows(steps: number, width: number): { from: number; to: number; label: string }[] {
  return Array.from({ length: Math.ceil(steps / width) }, (_, w) => {
    const from = w * width;
    const to = Math.min(steps, from + width);
    return { from, to, label: `steps ${from}-${to - 1}` };
  });
}

/** Mean of a per-step statistic over each window. */
export function windowMeansOf(
  history: readonly StepRecord[],
  key: keyof StepRecord,
  width: number,
): number[] {
  return stepWindows(history.length, width).map(({ from, to }) => {
    const xs = history.slice(from, to).map((h) => h[key] as number);
    return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
  });
}

const policyTokens = (t: Pick<Trajectory, 'actionMask'>) => t.actionMask.reduce((a, b) => a + b, 0);
const passed = (t: Pick<Trajectory, 'info'>) => (t.info.submitted && t.info.hidden_pass ? 1 : 0);

export interface ErrorStats {
  episodes: number;
  /** Share of episodes with at least one invalid call. */
  erred: number;
  /** Pass rate of those episodes (NaN when there are none). */
  erredPass: number;
  /** Submit rate of those episodes (NaN when there are none). */
  erredSubmit: number;
  pass: number;
  policyTokens: number;
}

/** Section 12.5: how often episodes err, and how the erring ones end. */
export function errorStats(trajs: readonly Pick<Trajectory, 'info' | 'actionMask'>[]): ErrorStats {
  const n = Math.max(trajs.length, 1);
  const erred = trajs.filter((t) => t.info.n_invalid > 0);
  const m = erred.length;
  return {
    episodes: trajs.length,
    erred: m / n,
    erredPass: m ? erred.reduce((a, t) => a + passed(t), 0) / m : Number.NaN,
    erredSubmit: m ? erred.filter((t) => t.info.submitted).length / m : Number.NaN,
    pass: trajs.reduce((a, t) => a + passed(t), 0) / n,
    policyTokens: trajs.reduce((a, t) => a + policyTokens(t), 0) / n,
  };
}

/** Invalid calls per turn over a set of episode infos: sum n_invalid / sum n_turns (the chapter's rate). */
export function invalidPerTurn(infos: readonly { n_invalid: number; n_turns: number }[]): number {
  const turns = infos.reduce((a, i) => a + i.n_turns, 0);
  return turns ? infos.reduce((a, i) => a + i.n_invalid, 0) / turns : Number.NaN;
}

export interface LossWeightShares {
  /** Share of single-turn episodes. */
  episodes: number;
  /** Their share of the loss weight under token_mean over the whole batch (the chapter's number). */
  tokenMean: number;
  /** Their share under seq_mean_token_mean: every episode weighs the same. */
  seqMean: number;
  /**
   * Their share under token_mean as `rlUpdate` applies it: episodes sorted by length and cut into
   * minibatches of `minibatchSize`, each normalised by its own token count and each one step;
   * the share is the mean over minibatches.
   */
  tokenMeanMinibatch: number;
}

/**
 * Section 12.6: the loss-weight share of single-turn episodes (info.single_turn). Under token_mean
 * an episode weighs in proportion to its policy tokens; under seq_mean_token_mean all weigh alike.
 */
export function lossWeightShares(
  trajs: readonly Pick<Trajectory, 'info' | 'actionMask' | 'ids'>[],
  minibatchSize = 32,
): LossWeightShares {
  const share = (ts: readonly Pick<Trajectory, 'info' | 'actionMask'>[]) => {
    const tokens = ts.reduce((a, t) => a + policyTokens(t), 0);
    const single = ts.filter((t) => t.info.single_turn).reduce((a, t) => a + policyTokens(t), 0);
    return tokens ? single / tokens : Number.NaN;
  };
  const order = trajs.map((_, i) => i).sort((a, b) => trajs[a].ids.length - trajs[b].ids.length || a - b);
  const chunks: number[] = [];
  for (let i = 0; i < order.length; i += minibatchSize)
    chunks.push(share(order.slice(i, i + minibatchSize).map((j) => trajs[j])));
  const n = Math.max(trajs.length, 1);
  return {
    episodes: trajs.filter((t) => t.info.single_turn).length / n,
    tokenMean: share(trajs),
    seqMean: trajs.filter((t) => t.info.single_turn).length / n,
    tokenMeanMinibatch: chunks.reduce((a, b) => a + b, 0) / Math.max(chunks.length, 1),
  };
}

/** Pass rate of the episodes of one format (single-turn or not) among infos; NaN when there are none. */
export function passByFormat(
  infos: readonly { single_turn: boolean; submitted: boolean; hidden_pass: boolean }[],
  single: boolean,
): number {
  const xs = infos.filter((i) => i.single_turn === single);
  return xs.length ? xs.filter((i) => i.submitted && i.hidden_pass).length / xs.length : Number.NaN;
}
