/**
 * RLConfig: the chapter's training configuration, as validated JSON. An unknown key or a bad value
 * is an error that names it (and suggests the closest key for a typo).
 */
import { type ContextPolicy, parseContextPolicy } from '../context/policy.js';
import { makeReward, type RewardSpec, validateReward } from '../gym/rewards.js';
import { suggest } from '../suggest.js';
import type { LossMode } from './loss.js';

export interface RLConfig {
  /** Turn budget per episode. */
  maxTurns: number;
  reward: RewardSpec;
  /** Adam learning rate of the policy. */
  lr: number;
  /**
   * Tasks per training step; each is repeated groupSize times. The default, 20, is every training
   * task at every step (160 episodes): with 16, reading (neutral for the base until its edits
   * become informed) drifted away in 2 of 5 seeds before it paid; with 20, in none of 4.
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
};

export class ConfigError extends Error {}

const RULES: Record<keyof RLConfig, (v: unknown) => string | null> = {
  maxTurns: (v) =>
    Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 64 ? null : 'an integer from 1 to 64',
  reward: () => null,
  contextPolicy: () => null,
  lr: (v) => (typeof v === 'number' && v > 0 && v < 1 ? null : 'a number in (0, 1)'),
  promptsPerStep: (v) => (Number.isInteger(v) && (v as number) >= 1 ? null : 'a positive integer'),
  groupSize: (v) =>
    Number.isInteger(v) && (v as number) >= 2 ? null : 'an integer >= 2 (a group needs a baseline)',
  temperature: (v) => (typeof v === 'number' && v > 0 && v <= 10 ? null : 'a number in (0, 10]'),
  maxEdits: (v) => (Number.isInteger(v) && (v as number) >= 0 ? null : 'an integer >= 0'),
  clip: (v) => (typeof v === 'number' && v > 0 && v < 1 ? null : 'a number in (0, 1)'),
  lossMode: (v) =>
    v === 'token_mean' || v === 'seq_mean_token_mean' ? null : '"token_mean" or "seq_mean_token_mean"',
  epochs: (v) =>
    Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 16 ? null : 'an integer from 1 to 16',
  minibatchSize: (v) => (Number.isInteger(v) && (v as number) >= 1 ? null : 'a positive integer'),
  maxGradNorm: (v) => (typeof v === 'number' && v >= 0 ? null : 'a number >= 0 (0 disables clipping)'),
  targetKl: (v) => (typeof v === 'number' && v >= 0 ? null : 'a number >= 0 (0 disables the early stop)'),
  warmupSteps: (v) => (Number.isInteger(v) && (v as number) >= 0 ? null : 'an integer >= 0'),
  seed: (v) => (Number.isInteger(v) && (v as number) >= 0 ? null : 'an integer >= 0'),
  showBudget: (v) => (typeof v === 'boolean' ? null : 'true or false'),
};

/**
 * Build an RLConfig from defaults and overrides (a parsed JSON object). Throws a ConfigError that
 * names the bad key or value. `where` prefixes messages (for example a file name).
 */
export function makeRLConfig(overrides: unknown = {}, where = 'config'): RLConfig {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))
    throw new ConfigError(`${where} must be a JSON object of RLConfig fields`);
  const o = overrides as Record<string, unknown>;
  const keys = Object.keys(DEFAULT_RL_CONFIG);
  for (const k of Object.keys(o))
    if (!keys.includes(k)) {
      const hint = suggest(k, keys);
      throw new ConfigError(
        `${where}: unknown key "${k}"${hint ? ` (did you mean "${hint}"?)` : ''}; known keys: ${keys.join(', ')}`,
      );
    }
  const out = { ...DEFAULT_RL_CONFIG } as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'contextPolicy') {
      try {
        out.contextPolicy = parseContextPolicy(v, `${where}.contextPolicy`);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
      continue;
    }
    if (k === 'reward') {
      try {
        out.reward = validateReward(v, `${where}.reward`);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
      continue;
    }
    const problem = RULES[k as keyof RLConfig](v);
    if (problem) throw new ConfigError(`${where}.${k} must be ${problem}, got ${JSON.stringify(v)}`);
    out[k] = v;
  }
  return out as unknown as RLConfig;
}

/** The environment options of a config. */
export function envOptions(cfg: RLConfig) {
  return { maxTurns: cfg.maxTurns, reward: cfg.reward, maxEdits: cfg.maxEdits, showBudget: cfg.showBudget };
}
