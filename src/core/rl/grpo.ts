/**
 * GRPO on multi-turn episodes: sample groups of episodes per task, normalise each episode's
 * reward within its group, and take a PPO-clipped policy-gradient step on the action-masked
 * tokens only. Names follow the chapter (`sample_step` -> `sampleStep`, ...).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { ContextPolicy } from '../context/policy.js';
import { type CallSample, contextRolloutBatch } from '../context/rollout.js';
import type { Env } from '../gym/env.js';
import { makeEnv } from '../gym/env.js';
import type { Batch, Trajectory } from '../gym/episode.js';
import { randomizeNames, type Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { rolloutBatch } from '../model/sampler.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { Rng } from '../rng.js';
import { envOptions, type RLConfig } from './config.js';
import { splitPgGradients } from './grad-pool.js';
import { aggregateDenominator } from './loss.js';
import { pgGradients } from './policy-gradient.js';

export type EnvFactory = () => Env;

export function defaultEnvFactory(cfg: RLConfig): EnvFactory {
  return () => makeEnv(envOptions(cfg));
}

/** Episodes (and, under a context policy other than `full`, the per-call samples to train on). */
export interface SampledStep {
  trajs: Trajectory[];
  /** Per-call samples (view + call) tagged with their episode; null under the full context. */
  samples: CallSample[] | null;
}

/**
 * groupSize episodes per task, each group on one renaming of its task (so that the group
 * baseline compares like with like), group after group. Under cfg.contextPolicy other than `full`
 * each call is generated from its own context view, and the per-call samples come back too.
 */
export function sampleGroups(
  policy: TinyAgent,
  envFactory: EnvFactory,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  rng: Rng,
): Trajectory[] {
  return sampleGroupsWithCalls(policy, envFactory, tasks, tok, cfg, rng).trajs;
}

export function sampleGroupsWithCalls(
  policy: TinyAgent,
  envFactory: EnvFactory,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  rng: Rng,
): SampledStep {
  const names = rng.fork();
  const batch: Task[] = [];
  for (const t of tasks) {
    const renamed = randomizeNames(t, names);
    for (let g = 0; g < cfg.groupSize; g++) batch.push(renamed);
  }
  return rolloutWithContext(policy, batch, envFactory, tok, cfg, rng);
}

/** Sample one episode per task under cfg.contextPolicy. */
export function rolloutWithContext(
  policy: TinyAgent,
  tasks: readonly Task[],
  envFactory: EnvFactory,
  tok: Tokenizer,
  cfg: RLConfig,
  rng: Rng,
  contextPolicy: ContextPolicy = cfg.contextPolicy,
): SampledStep {
  const envs = tasks.map(() => envFactory());
  if (contextPolicy.kind === 'full')
    return {
      trajs: rolloutBatch(policy, envs, tasks, tok, rng, { temperature: cfg.temperature }),
      samples: null,
    };
  return contextRolloutBatch(policy, envs, tasks, tok, contextPolicy, rng, { temperature: cfg.temperature });
}

/** One training step's episodes: promptsPerStep tasks drawn without replacement, in groups. */
export function sampleStep(
  policy: TinyAgent,
  envFactory: EnvFactory,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  rng: Rng,
): SampledStep & { tasks: Task[] } {
  const chosen: Task[] = [];
  while (chosen.length < cfg.promptsPerStep)
    chosen.push(...rng.shuffle(tasks).slice(0, cfg.promptsPerStep - chosen.length));
  return { ...sampleGroupsWithCalls(policy, envFactory, chosen, tok, cfg, rng), tasks: chosen };
}

export interface UpdateStats {
  loss: number;
  /** Fraction of masked tokens whose ratio was clipped. */
  clip_frac: number;
  /** Mean of (ratio - 1) - log ratio over masked tokens (an estimate of KL(old || new)). */
  approx_kl: number;
  /** Mean entropy of the policy at masked positions. */
  entropy: number;
  grad_norm: number;
  /** Gradient steps taken. */
  updates: number;
  /** 1 when the update stopped early at the KL target. */
  stopped_early: number;
}

function subBatch(batch: Batch, rows: readonly number[], advantages: readonly (number | number[])[]) {
  const T = Math.max(...rows.map((r) => batch.lengths[r]));
  const cut = (m: number[][], n: number) => rows.map((r) => m[r].slice(0, n));
  const adv = rows.map((r) => {
    const a = advantages[r];
    if (!Array.isArray(a)) return new Array(T - 1).fill(a);
    const row = a.slice(0, T - 1);
    while (row.length < T - 1) row.push(0);
    return row;
  });
  return {
    ids: cut(batch.ids, T),
    mask: cut(batch.actionMask, T - 1),
    old: cut(batch.oldLogps, T - 1),
    adv,
    T,
  };
}

/**
 * One PPO-clipped update on a batch: loss = -min(ratio * A, clip(ratio) * A) on masked tokens,
 * aggregated by cfg.lossMode. `advantages` is one number per episode or one per predicted position.
 * Minibatches are length buckets (episodes sorted by length, chunked, chunks in random order), so
 * short episodes are not padded to the longest one. With `episodeOf` (the episode of each row, for
 * per-call samples under a context policy) a minibatch holds whole episodes: `cfg.minibatchSize`
 * episodes with all their calls, so each step takes as many gradient steps as the whole-episode
 * update and every minibatch mixes all the decisions of its episodes, as the whole-episode one does.
 */
export function rlUpdate(
  policy: TinyAgent,
  opt: tf.Optimizer,
  batch: Batch,
  advantages: readonly (number | number[])[],
  cfg: RLConfig,
  rng: Rng,
  episodeOf?: readonly number[],
): UpdateStats {
  const B = batch.ids.length;
  if (advantages.length !== B) throw new Error(`rlUpdate: ${advantages.length} advantages for ${B} episodes`);
  if (episodeOf && episodeOf.length !== B)
    throw new Error(`rlUpdate: ${episodeOf.length} episode tags for ${B} rows`);
  const groups = episodeGroups(batch.lengths, episodeOf);
  const stats = {
    loss: 0,
    clip_frac: 0,
    approx_kl: 0,
    entropy: 0,
    grad_norm: 0,
    updates: 0,
    stopped_early: 0,
  };
  let tokens = 0;
  let stop = false;
  for (let epoch = 0; epoch < cfg.epochs && !stop; epoch++) {
    const chunks: number[][] = [];
    for (let i = 0; i < groups.length; i += cfg.minibatchSize)
      chunks.push(groups.slice(i, i + cfg.minibatchSize).flat());
    for (const rows of rng.shuffle(chunks)) {
      if (stop) break;
      const mb = subBatch(batch, rows, advantages);
      const nTok = mb.mask.flat().reduce((a, b) => a + b, 0);
      if (nTok === 0) continue;
      const opts = { temperature: cfg.temperature, clip: cfg.clip, lossMode: cfg.lossMode };
      const diag =
        cfg.workers > 1
          ? splitPgGradients(
              policy,
              mb,
              rows.map((r) => batch.lengths[r]),
              cfg.workers,
              { ...opts, denominator: aggregateDenominator(mb.mask, cfg.lossMode) },
            )
          : pgGradients(policy, mb, opts);
      stats.loss += diag.loss * nTok;
      let gradNorm = Number.NaN;
      // The KL of this minibatch measures how far the previous updates of this step have moved the
      // policy: past the target, stop here (this minibatch's gradient is not applied).
      if (cfg.targetKl > 0 && diag.kl / nTok > 1.5 * cfg.targetKl) stop = true;
      else {
        gradNorm = clipGradients(diag.grads, cfg.maxGradNorm);
        opt.applyGradients(diag.grads);
      }
      tf.dispose(Object.values(diag.grads));
      stats.clip_frac += diag.clipped;
      stats.approx_kl += diag.kl;
      stats.entropy += diag.ent;
      tokens += nTok;
      if (stop) {
        stats.stopped_early = 1;
        continue;
      }
      stats.grad_norm += gradNorm * nTok;
      stats.updates++;
    }
  }
  const n = Math.max(tokens, 1);
  return {
    loss: stats.loss / n,
    clip_frac: stats.clip_frac / n,
    approx_kl: stats.approx_kl / n,
    entropy: stats.entropy / n,
    grad_norm: stats.grad_norm / n,
    updates: stats.updates,
    stopped_early: stats.stopped_early,
  };
}

/**
 * Rows grouped by episode (each row its own episode without tags), groups sorted by their longest
 * row, then by first row: the length buckets of `rlUpdate`.
 */
export function episodeGroups(lengths: readonly number[], episodeOf?: readonly number[]): number[][] {
  const byEpisode = new Map<number, number[]>();
  lengths.forEach((_, i) => {
    const e = episodeOf ? episodeOf[i] : i;
    const rows = byEpisode.get(e);
    if (rows) rows.push(i);
    else byEpisode.set(e, [i]);
  });
  const groups = [...byEpisode.values()];
  const longest = (g: number[]) => Math.max(...g.map((i) => lengths[i]));
  return groups.sort((a, b) => longest(a) - longest(b) || a[0] - b[0]);
}

/** Scale gradients in place to a global norm of at most maxNorm (0: no clipping); returns the norm before. */
export function clipGradients(grads: tf.NamedTensorMap, maxNorm: number): number {
  const names = Object.keys(grads);
  const norm = Math.sqrt(tf.tidy(() => tf.addN(names.map((k) => tf.sum(tf.square(grads[k])))).dataSync()[0]));
  if (maxNorm > 0 && norm > maxNorm) {
    const scale = maxNorm / (norm + 1e-6);
    for (const k of names) {
      const g = grads[k];
      grads[k] = tf.mul(g, scale);
      g.dispose();
    }
  }
  return norm;
}

/** The chapter's behaviour statistics of a batch of episodes. */
export interface BehaviorStats {
  pass_rate: number;
  reads: number;
  tests: number;
  edits: number;
  turns: number;
  reward: number;
  submit_rate: number;
  invalid_per_turn: number;
  tokens: number;
  policy_tokens: number;
  truncated: number;
}

export function behaviorStats(trajs: readonly Trajectory[]): BehaviorStats {
  const n = Math.max(trajs.length, 1);
  const sum = (f: (t: Trajectory) => number) => trajs.reduce((a, t) => a + f(t), 0);
  const turns = sum((t) => t.info.n_turns);
  return {
    pass_rate: sum((t) => (t.info.submitted && t.info.hidden_pass ? 1 : 0)) / n,
    reads: sum((t) => t.info.reads) / n,
    tests: sum((t) => t.info.tests) / n,
    edits: sum((t) => t.info.edits) / n,
    turns: turns / n,
    reward: sum((t) => t.reward) / n,
    submit_rate: sum((t) => (t.info.submitted ? 1 : 0)) / n,
    invalid_per_turn: sum((t) => t.info.n_invalid) / Math.max(turns, 1),
    tokens: sum((t) => t.ids.length) / n,
    policy_tokens: sum((t) => t.actionMask.reduce((a, b) => a + b, 0)) / n,
    truncated: sum((t) => (t.info.stop === 'truncated' ? 1 : 0)) / n,
  };
}

export interface EvaluateOptions {
  n?: number;
  seed?: number;
  envFactory?: EnvFactory;
  /** Evaluate under this context policy (default cfg.contextPolicy): the chapter's `evaluate_context`. */
  contextPolicy?: ContextPolicy;
}

/**
 * Behaviour statistics of n episodes per task (renamed, seeded): the chapter's `evaluate`, which
 * `held_out` calls with 16 episodes per held-out task and seed 7; with a context policy, its
 * `evaluate_context`.
 */
export function evaluate(
  policy: TinyAgent,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  opts: EvaluateOptions = {},
): { stats: BehaviorStats; trajs: Trajectory[] } {
  const n = opts.n ?? 16;
  const seed = opts.seed ?? 7;
  const factory = opts.envFactory ?? defaultEnvFactory(cfg);
  const names = new Rng(seed);
  const batch = tasks.flatMap((t) => Array.from({ length: n }, () => randomizeNames(t, names)));
  const { trajs } = rolloutWithContext(
    policy,
    batch,
    factory,
    tok,
    cfg,
    new Rng(seed + 1),
    opts.contextPolicy,
  );
  return { stats: behaviorStats(trajs), trajs };
}
