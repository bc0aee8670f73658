/**
 * Environment variants of sections 12.5 and 12.6: early termination on invalid calls, and one env
 * that serves a batch mixing single-turn and multi-turn tasks. Both are `EditBudgetEnv`s, so they
 * take its options too (`showBudget`, the remaining budget in each observation, exercise 4; and
 * `obsCap`, the observation cap of section 12.7).
 */
import { EditBudgetEnv, type StepResult } from './env.js';
import { makeReward, type RewardSpec } from './rewards.js';
import { isSingleTurn, type Task } from './tasks.js';

export interface VariantOptions {
  showBudget?: boolean;
  obsCap?: number;
}

/**
 * EditBudgetEnv that ends the episode, unsubmitted and with stop `invalid`, as soon as `maxInvalid`
 * calls were invalid (malformed, unknown tool or op, or an edit beyond the budget: everything
 * `n_invalid` counts). A call that both is invalid and spends the last turn ends with `max_turns`,
 * as in the chapter (the base env's ending wins).
 */
export class EarlyStopEnv extends EditBudgetEnv {
  readonly maxInvalid: number;

  constructor(
    maxTurns = 6,
    reward: RewardSpec = makeReward(),
    maxEdits = 1,
    maxInvalid = 1,
    opts: VariantOptions = {},
  ) {
    super(maxTurns, reward, maxEdits, opts);
    if (!Number.isInteger(maxInvalid) || maxInvalid < 1)
      throw new Error(`maxInvalid must be a positive integer, got ${maxInvalid}`);
    this.maxInvalid = maxInvalid;
  }

  override step(actionText: string): StepResult {
    const r = super.step(actionText);
    if (r.done || this.nInvalid < this.maxInvalid) return r;
    return this.end(false, 'invalid');
  }
}

/**
 * EditBudgetEnv that ends single-turn tasks (`isSingleTurn`: the prompt carries the source) after
 * their first call, whatever it is, and grades them as submitted; other tasks run normally. The env
 * decides per task at `reset`, so one factory serves a mixed batch.
 */
export class MixedTurnEnv extends EditBudgetEnv {
  /** True while the current episode is a single-turn task. */
  single = false;

  constructor(maxTurns = 6, reward: RewardSpec = makeReward(), maxEdits = 1, opts: VariantOptions = {}) {
    super(maxTurns, reward, maxEdits, opts);
  }

  override reset(task: Task): string {
    this.single = isSingleTurn(task);
    return super.reset(task);
  }

  override step(actionText: string): StepResult {
    const r = super.step(actionText);
    if (r.done || !this.single) return r;
    return this.end(true, 'submitted');
  }
}
