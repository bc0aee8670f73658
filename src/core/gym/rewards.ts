/**
 * Episode rewards. A reward is a JSON value (`RewardSpec`), so that configs and run files can
 * carry it; `rewardOf(spec, info)` turns an episode's info into its return.
 */

/** How an episode ended. `invalid` is used by EarlyStopEnv. */
export type StopReason = 'submitted' | 'max_turns' | 'truncated' | 'invalid';

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

const NUMERIC_REWARD_KEYS = ['stepPenalty', 'wrongSubmit', 'invalidPenalty', 'unsubmitted'] as const;

/** Throws an error naming the field when a reward spec is malformed. */
export function validateReward(spec: unknown, where = 'reward'): RewardSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new Error(`${where} must be an object like {"kind": "hidden", "stepPenalty": 0.05}`);
  const s = spec as Record<string, unknown>;
  const allowed = ['kind', ...NUMERIC_REWARD_KEYS];
  for (const key of Object.keys(s))
    if (!allowed.includes(key))
      throw new Error(`${where}.${key} is not a reward option (allowed: ${allowed.join(', ')})`);
  if (s.kind !== undefined && s.kind !== 'hidden')
    throw new Error(`${where}.kind must be "hidden" (the default), got ${JSON.stringify(s.kind)}`);
  for (const key of NUMERIC_REWARD_KEYS)
    if (s[key] !== undefined && (typeof s[key] !== 'number' || !Number.isFinite(s[key])))
      throw new Error(`${where}.${key} must be a finite number, got ${JSON.stringify(s[key])}`);
  return {
    kind: 'hidden',
    stepPenalty: (s.stepPenalty as number) ?? 0,
    wrongSubmit: (s.wrongSubmit as number) ?? 0,
    invalidPenalty: (s.invalidPenalty as number) ?? 0,
    unsubmitted: (s.unsubmitted as number) ?? 0,
  };
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
