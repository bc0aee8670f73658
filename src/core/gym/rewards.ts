/**
 * Episode rewards. A reward is a JSON value (`RewardSpec`), so that configs and run files can
 * carry it; `rewardOf(spec, info)` turns an episode's info into its return.
 */
import * as v from 'valibot';
import { num, parseOrThrow, show, strict } from '../schema.js';

/** How an episode ended. `invalid` is used by EarlyStopEnv. */
/** How an episode ended. */
export const STOP_REASONS = ['submitted', 'max_turns', 'truncated', 'invalid'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** What an episode reports when it ends (keys as in the chapter, since they are data). */
export interface EpisodeInfo {
  submitted: boolean;
  hidden_pass: boolean;
  stop: StopReason;
  n_invalid: number;
  n_turns: number;
  reads: number;
  tests: number;
  edits: number;
  /** The operation of the accepted edit, if any. */
  edit_op: string | null;
  /** The task's id (of the unrenamed task). */
  task_id: string;
  /** True when the episode's prompt carried the source (a single-turn task). */
  single_turn: boolean;
}

export interface RewardSpec {
  kind: 'hidden';
  /** Subtracted once per call. */
  stepPenalty: number;
  /** The verdict of a submission that fails the hidden test (0 by default; the chapter also uses -1). */
  wrongSubmit: number;
  /** Subtracted once per invalid call (malformed, unknown tool or op, edit beyond the budget). */
  invalidPenalty: number;
  /**
   * The verdict of an episode that ends without a submission (turn budget, context, early stop):
   * 0 by default; section 12.7's option (a) makes it at least as bad as a failed submission.
   */
  unsubmitted: number;
}

export interface RewardOptions {
  stepPenalty?: number;
  wrongSubmit?: number;
  invalidPenalty?: number;
  unsubmitted?: number;
}

/** The chapter's `make_reward('hidden', ...)`. */
export function makeReward(kind: 'hidden' = 'hidden', opts: RewardOptions = {}): RewardSpec {
  const spec: RewardSpec = {
    kind,
    stepPenalty: opts.stepPenalty ?? 0,
    wrongSubmit: opts.wrongSubmit ?? 0,
    invalidPenalty: opts.invalidPenalty ?? 0,
    unsubmitted: opts.unsubmitted ?? 0,
  };
  validateReward(spec);
  return spec;
}

/** The largest magnitude of a reward term: returns stay within a few units, so no update overflows. */
export const MAX_REWARD_TERM = 10;

const term = () => v.optional(num(-MAX_REWARD_TERM, MAX_REWARD_TERM), 0);

/** A reward spec as JSON: every key optional (0 by default), nothing else allowed. */
export const RewardSpecSchema = strict(
  {
    kind: v.optional(
      v.literal('hidden', (i) => `expected "hidden" (the only reward kind), got ${show(i.input)}`),
      'hidden',
    ),
    stepPenalty: term(),
    wrongSubmit: term(),
    invalidPenalty: term(),
    unsubmitted: term(),
  },
  'an object like {"kind": "hidden", "stepPenalty": 0.05}',
);

/** A validated RewardSpec; throws an error that names the bad field. */
export function validateReward(spec: unknown, where = 'reward'): RewardSpec {
  return parseOrThrow(RewardSpecSchema, spec, where);
}

/** The hidden-test verdict of an episode: 1 if submitted and passing, `wrongSubmit` if submitted and failing, `unsubmitted` (0) if not submitted. */
export function verdictOf(
  spec: Pick<RewardSpec, 'wrongSubmit' | 'unsubmitted'>,
  info: Pick<EpisodeInfo, 'submitted' | 'hidden_pass'>,
): number {
  if (!info.submitted) return spec.unsubmitted;
  return info.hidden_pass ? 1 : spec.wrongSubmit;
}

/** The episode's return: verdict - stepPenalty * calls - invalidPenalty * invalid calls. */
export function rewardOf(spec: RewardSpec, info: EpisodeInfo): number {
  return verdictOf(spec, info) - spec.stepPenalty * info.n_turns - spec.invalidPenalty * info.n_invalid;
}
