/**
 * RLConfig: the chapter's training configuration, as validated JSON (a schema: an unknown key or a
 * bad value is an error that names it, and suggests the closest key for a typo).
 */
import * as v from 'valibot';
import { type ContextPolicy, ContextPolicySchema } from '../context/policy.js';
import { makeReward, type RewardSpec, RewardSpecSchema } from '../gym/rewards.js';
import { bool, int, num, oneOf, parseOrThrow, show, strict } from '../schema.js';

/** How the loss averages over tokens (see rl/loss.ts `aggregate`). */
export const LOSS_MODES = ['token_mean', 'seq_mean_token_mean'] as const;
export type LossMode = (typeof LOSS_MODES)[number];

export interface RLConfig {
  /** Turn budget per episode. */
  maxTurns: number;
  reward: RewardSpec;
  /** Adam learning rate of the policy. */
  lr: number;
  /**
   * Tasks per training step; each is repeated groupSize times, so a step samples promptsPerStep x
   * groupSize episodes. The default, 20, is every training task at every step (160 episodes).
   */
  promptsPerStep: number;
  groupSize: number;
  temperature: number;
  maxEdits: number;
  /** PPO clip range of the probability ratio. */
  clip: number;
  lossMode: LossMode;
  /** Passes over each step's batch. */
  epochs: number;
  /** Episodes per gradient step (the batch is split into minibatches). */
  minibatchSize: number;
  /** Global gradient-norm clip (0 disables). */
  maxGradNorm: number;
  /**
   * Early stop of a step's update once the approximate KL to the sampling policy exceeds 1.5 x this
   * (CleanRL's target_kl; 0 disables): it keeps one unlucky step from moving the tiny policy far.
   */
  targetKl: number;
  /** The learning rate ramps up linearly over the first warmupSteps training steps (0: none). */
  warmupSteps: number;
  seed: number;
  /** Exercise 4: observations end with the turns left. */
  showBudget: boolean;
  /** What each call sees (section 12.4): the full history by default. */
  contextPolicy: ContextPolicy;
  /**
   * Each minibatch's gradient is computed as this many parts of about equal tokens, one per thread
   * (this one and workers - 1 worker threads), and the parts' gradients are added in order. The
   * results depend on this number, not on the machine: a run is deterministic for a given value,
   * and 1 and 2 agree to float rounding. 1: one part, no worker thread.
   */
  workers: number;
}

export const DEFAULT_RL_CONFIG: RLConfig = {
  maxTurns: 6,
  reward: makeReward('hidden'),
  lr: 1e-3,
  promptsPerStep: 20,
  groupSize: 8,
  temperature: 1,
  maxEdits: 1,
  clip: 0.2,
  lossMode: 'token_mean',
  epochs: 2,
  minibatchSize: 32,
  maxGradNorm: 1,
  targetKl: 0,
  warmupSteps: 3,
  seed: 0,
  showBudget: false,
  contextPolicy: { kind: 'full' },
  workers: 1,
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Upper bounds that keep a run inside a laptop's memory and time: a step samples promptsPerStep x
 * groupSize episodes (at most MAX_EPISODES_PER_STEP), seeds are 32-bit.
 */
export const MAX_EPISODES_PER_STEP = 4096;
export const MAX_SEED = 2 ** 32 - 1;
/** Gradient parts (threads) per minibatch. */
export const MAX_WORKERS = 8;

const D = DEFAULT_RL_CONFIG;

/** RLConfig as JSON: every key optional (its default), nothing else allowed, each value in range. */
export const RLConfigSchema = v.pipe(
  strict({
    maxTurns: v.optional(int(1, 64), D.maxTurns),
    reward: v.optional(RewardSpecSchema, () => ({ ...D.reward })),
    lr: v.optional(num(0, 1, { min: true, max: true }), D.lr),
    promptsPerStep: v.optional(int(1, 1024), D.promptsPerStep),
    groupSize: v.optional(
      v.pipe(
        v.number((i) => `expected an integer from 2 to 256 (a group needs a baseline), got ${show(i.input)}`),
        v.check(
          (x) => Number.isInteger(x) && x >= 2 && x <= 256,
          (i) => `expected an integer from 2 to 256 (a group needs a baseline), got ${show(i.input)}`,
        ),
      ),
      D.groupSize,
    ),
    temperature: v.optional(num(0, 10, { min: true }), D.temperature),
    maxEdits: v.optional(int(0, 64), D.maxEdits),
    clip: v.optional(num(0, 1, { min: true, max: true }), D.clip),
    lossMode: v.optional(oneOf(LOSS_MODES), D.lossMode),
    epochs: v.optional(int(1, 16), D.epochs),
    minibatchSize: v.optional(int(1, MAX_EPISODES_PER_STEP), D.minibatchSize),
    maxGradNorm: v.optional(num(0, 1e6), D.maxGradNorm),
    targetKl: v.optional(num(0, 10), D.targetKl),
    warmupSteps: v.optional(int(0, 100_000), D.warmupSteps),
    seed: v.optional(int(0, MAX_SEED), D.seed),
    showBudget: v.optional(bool(), D.showBudget),
    contextPolicy: v.optional(ContextPolicySchema, () => ({ ...D.contextPolicy })),
    workers: v.optional(int(1, MAX_WORKERS), D.workers),
  }),
  v.check(
    (c) => c.promptsPerStep * c.groupSize <= MAX_EPISODES_PER_STEP,
    (i) => {
      const c = i.input as { promptsPerStep: number; groupSize: number };
      return `promptsPerStep x groupSize is ${c.promptsPerStep * c.groupSize} episodes per step; at most ${MAX_EPISODES_PER_STEP}`;
    },
  ),
);

/**
 * Build an RLConfig from defaults and overrides (a parsed JSON object). Throws a ConfigError that
 * names the bad key or value (`config.contextPolicy.k: expected an integer from 0 to 64, got -1`).
 * `where` prefixes messages (for example a file name).
 */
export function makeRLConfig(overrides: unknown = {}, where = 'config'): RLConfig {
  return parseOrThrow(RLConfigSchema, overrides, where, ConfigError) as RLConfig;
}

/** The environment options of a config. */
export function envOptions(cfg: RLConfig) {
  return { maxTurns: cfg.maxTurns, reward: cfg.reward, maxEdits: cfg.maxEdits, showBudget: cfg.showBudget };
}
