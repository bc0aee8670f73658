/**
 * The BugFix environment: it takes one call's text at a time and answers with an observation.
 *
 * Calls look like `<call> read </call>`, `<call> edit fix_comparison </call>`, `<call> test </call>`,
 * `<call> submit </call>`. A malformed call, an unknown tool or operation, and an edit beyond the
 * budget get an error observation and use up a turn (`n_invalid` counts them).
 */

import { parseCall } from './grammar.js';
import { type EpisodeInfo, makeReward, type RewardSpec, rewardOf, type StopReason } from './rewards.js';
import { applyOp, compactSource, isSingleTurn, type Op, passes, runCase, type Task } from './tasks.js';
import { Tokenizer } from './tokenizer.js';

export { type ParsedCall, parseCall } from './grammar.js';

export interface StepResult {
  /** The tool's output (without the `<obs>` template tokens); empty when the episode is done. */
  obs: string;
  /** The episode's return when done, else 0. */
  reward: number;
  done: boolean;
  /** Set when done. */
  info: EpisodeInfo | null;
}

/** What the sampler needs of an environment. */
export interface Env {
  readonly maxTurns: number;
  readonly reward: RewardSpec;
  /** Start an episode; returns the prompt text. */
  reset(task: Task): string;
  /** Take one call's text. */
  step(actionText: string): StepResult;
  /** End the episode from outside (the next call cannot fit in the context). */
  finish(stop: StopReason): StepResult;
  readonly done: boolean;
}

export interface EnvOptions {
  maxTurns?: number;
  reward?: RewardSpec;
  maxEdits?: number;
  /** Exercise 4: end every observation with `turns left N`. */
  showBudget?: boolean;
  /** Section 12.7 (a): cap each tool output at this many tokens (head and tail kept, `...` between). */
  obsCap?: number;
}

/** The marker `capObservation` puts where it cut an observation (a tool word of the vocabulary). */
export const OBS_CUT_MARKER = '...';

/**
 * An observation of at most maxTokens tokens: unchanged when it fits, else its first
 * ceil((maxTokens-1)/2) and last floor((maxTokens-1)/2) tokens with `marker` between.
 */
export function capObservation(obsTokens: readonly string[], maxTokens: number): string[];
export function capObservation<T>(obsTokens: readonly T[], maxTokens: number, marker: T): T[];
export function capObservation<T>(obsTokens: readonly T[], maxTokens: number, marker?: T): T[] {
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new Error(`obsCap must be a positive integer, got ${maxTokens}`);
  if (obsTokens.length <= maxTokens) return obsTokens.slice();
  const head = Math.ceil((maxTokens - 1) / 2);
  const tail = Math.floor((maxTokens - 1) / 2);
  const mark = (marker ?? OBS_CUT_MARKER) as T;
  return [...obsTokens.slice(0, head), mark, ...obsTokens.slice(obsTokens.length - tail)];
}

/** The default environment: `maxEdits` edits at most (edits beyond it are refused with an error). */
export class EditBudgetEnv implements Env {
  readonly maxTurns: number;
  readonly reward: RewardSpec;
  readonly maxEdits: number;
  readonly showBudget: boolean;
  /** Cap on each tool output in tokens (null: no cap). The budget suffix is added after capping. */
  readonly obsCap: number | null;
  done = true;
  task: Task | null = null;
  code = '';
  nTurns = 0;
  nInvalid = 0;
  reads = 0;
  tests = 0;
  edits = 0;
  editOp: Op | null = null;

  constructor(
    maxTurns = 6,
    reward: RewardSpec = makeReward(),
    maxEdits = 1,
    opts: { showBudget?: boolean; obsCap?: number } = {},
  ) {
    if (!Number.isInteger(maxTurns) || maxTurns < 1)
      throw new Error(`maxTurns must be a positive integer, got ${maxTurns}`);
    if (!Number.isInteger(maxEdits) || maxEdits < 0)
      throw new Error(`maxEdits must be an integer >= 0, got ${maxEdits}`);
    this.maxTurns = maxTurns;
    this.reward = reward;
    this.maxEdits = maxEdits;
    this.showBudget = opts.showBudget ?? false;
    this.obsCap = opts.obsCap ?? null;
    if (this.obsCap !== null) capObservation([], this.obsCap); // validates
  }

  reset(task: Task): string {
    this.task = task;
    this.code = task.source;
    this.done = false;
    this.nTurns = this.nInvalid = this.reads = this.tests = this.edits = 0;
    this.editOp = null;
    return task.issue;
  }

  step(actionText: string): StepResult {
    if (this.done || !this.task) throw new Error('step() on a finished episode: call reset(task) first');
    this.nTurns++;
    const call = parseCall(actionText);
    let obs: string;
    if (!call.ok) {
      this.nInvalid++;
      obs = `error ${call.error}`;
    } else {
      switch (call.tool) {
        case 'read':
          this.reads++;
          obs = compactSource(this.code);
          break;
        case 'test':
          this.tests++;
          obs = runCase(this.code, this.task.visible) ? 'PASS' : 'FAIL';
          break;
        case 'edit':
          if (this.edits >= this.maxEdits) {
            this.nInvalid++;
            obs = 'error edit budget';
          } else {
            this.edits++;
            this.editOp = call.op as Op;
            this.code = applyOp(this.code, call.op as Op);
            obs = 'ok';
          }
          break;
        case 'submit':
          return this.end(true, 'submitted');
      }
    }
    if (this.nTurns >= this.maxTurns) return this.end(false, 'max_turns');
    if (this.obsCap !== null) obs = capObservation(Tokenizer.split(obs), this.obsCap).join(' ');
    if (this.showBudget)
      obs += ` turns left ${String(this.maxTurns - this.nTurns)
        .split('')
        .join(' ')}`;
    return { obs, reward: 0, done: false, info: null };
  }

  finish(stop: StopReason): StepResult {
    if (this.done) throw new Error('finish() on a finished episode');
    return this.end(false, stop);
  }

  /** The info of the episode as it stands, ended with `submitted` (the chapter's `final_info`). */
  finalInfo(submitted: boolean, stop: StopReason = submitted ? 'submitted' : 'max_turns'): EpisodeInfo {
    const task = this.task as Task;
    return {
      submitted,
      hidden_pass: submitted && passes(this.code, task.hidden),
      stop,
      n_invalid: this.nInvalid,
      n_turns: this.nTurns,
      reads: this.reads,
      tests: this.tests,
      edits: this.edits,
      edit_op: this.editOp,
      task_id: task.id,
      single_turn: isSingleTurn(task),
    };
  }

  protected end(submitted: boolean, stop: StopReason): StepResult {
    this.done = true;
    const info = this.finalInfo(submitted, stop);
    return { obs: '', reward: rewardOf(this.reward, info), done: true, info };
  }
}

/** The environment the chapter's `make_env(cfg)` builds. */
export function makeEnv(
  cfg: {
    maxTurns?: number;
    reward?: RewardSpec;
    maxEdits?: number;
    showBudget?: boolean;
    obsCap?: number;
  } = {},
): Env {
  return new EditBudgetEnv(cfg.maxTurns ?? 6, cfg.reward ?? makeReward(), cfg.maxEdits ?? 1, {
    showBudget: cfg.showBudget,
    obsCap: cfg.obsCap,
  });
}

/**
 * An environment wrapper that appends each finished episode's info to `log` (the chapter's
 * `LoggedEnv`), so that statistics the trainer does not keep can be read per step afterwards.
 */
export class LoggedEnv implements Env {
  constructor(
    readonly inner: Env,
    readonly log: EpisodeInfo[],
  ) {}
  get maxTurns() {
    return this.inner.maxTurns;
  }
  get reward() {
    return this.inner.reward;
  }
  get done() {
    return this.inner.done;
  }
  reset(task: Task): string {
    return this.inner.reset(task);
  }
  step(actionText: string): StepResult {
    return this.record(this.inner.step(actionText));
  }
  finish(stop: StopReason): StepResult {
    return this.record(this.inner.finish(stop));
  }
  private record(r: StepResult): StepResult {
    if (r.done && r.info) this.log.push(r.info);
    return r;
  }
}

/**
 * Split a LoggedEnv log into training steps, using the number of episodes each history entry
 * sampled (`history[k].episodes`). Returns one list of infos per step.
 */
export function logByStep(
  history: readonly { episodes: number }[],
  log: readonly EpisodeInfo[],
): EpisodeInfo[][] {
  const out: EpisodeInfo[][] = [];
  let at = 0;
  for (const h of history) {
    out.push(log.slice(at, at + h.episodes));
    at += h.episodes;
  }
  if (at !== log.length)
    throw new Error(
      `the log holds ${log.length} episodes but the history accounts for ${at}: was the log shared?`,
    );
  return out;
}
