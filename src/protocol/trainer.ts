/**
 * The message protocol between the extension host and the trainer child process
 * (`dist/trainer.js`, started with `child_process.fork`). Every message is a `{type, ...}` object
 * checked at the boundary by `parseHostMessage` / `parseTrainerMessage`: a message that does not
 * match its type is dropped (and logged) by the receiver, never acted on.
 *
 *   host -> trainer   start {id, job}   cancel {id}   shutdown
 *   trainer -> host   ready {backend, pid, jobs, recipes}   log {id?, text}
 *                     progress {id, step, total, message}   runCreated {id, dir}
 *                     done {id, kind, result}   failed {id, message}   cancelled {id}
 *
 * A job kind maps to one core function in the trainer (`src/trainer/jobs.ts`).
 */
import { type ContextPolicy, parseContextPolicy } from '../core/context/policy.js';
import {
  SCRIPTED_POLICIES,
  type ScriptedPolicyName,
  TASK_SPLITS,
  type TaskSplit,
} from '../core/gym/names.js';
import { type TrajectoryJSON, validateTrajectoryJSON } from '../core/gym/trajectory-json.js';
import type { CallRow } from '../core/rl/advantages.js';
import { isMaskBug, type MaskBug } from '../core/rl/mask-bugs.js';
import type { MaskCheckResult } from '../core/rl/mask-check.js';

/** Sample episodes with a scripted policy into a new run folder under `runsDir`. */
export interface SampleScriptedJob {
  kind: 'sampleScripted';
  runsDir: string;
  policy: ScriptedPolicyName;
  split: TaskSplit;
  /** Episodes in all. */
  episodes: number;
  /** Episodes per appended batch (a batch is one "step" of a sample run). */
  batch: number;
  seed: number;
  maxTurns: number;
  /** Run folder name (default: derived from the policy and the time). */
  name?: string;
}

/** The gradient-vs-policy mask check of one episode (src/core/rl/mask-check.ts). */
export interface MaskCheckJob {
  kind: 'maskCheck';
  episode: TrajectoryJSON;
  bug: MaskBug;
  seed: number;
  /** The model whose logits the loss is taken of (`base` or a checkpoint/run folder); seeded random logits without one. */
  model?: string;
}

/** GRPO training with a config (an RLConfig, validated by the trainer). */
export interface TrainJob {
  kind: 'train';
  runsDir: string;
  config: Record<string, unknown>;
  name?: string;
}

/** One of the chapter's recipes. */
export interface RecipeJob {
  kind: 'recipe';
  runsDir: string;
  recipe: string;
  seed?: number;
  /** Training steps per arm (default: the recipe's, 40). */
  steps?: number;
  /** The reduced form (few steps and episodes). */
  smoke?: boolean;
}

/** Sample episodes from a model: the shipped base (`from: "base"`) or a run's checkpoint folder. */
export interface SampleModelJob {
  kind: 'sampleModel';
  runsDir: string;
  from: string;
  episodes: number;
  seed: number;
}

/**
 * Per-call credit of one episode (figure 12.1): rewards, the critic's values, TD errors and the
 * outcome, token-GAE and turn-GAE advantages. Without a critic, the outcome advantage alone.
 */
export interface CreditTableJob {
  kind: 'creditTable';
  episode: TrajectoryJSON;
  /** The run the episode comes from (its config gives the reward), if any. */
  runDir: string | null;
  /** The policy (`base` or a folder) for current log-probs; null for none. */
  model: string | null;
  /** A critic checkpoint folder (a run's checkpoints/critic); null for none. */
  critic: string | null;
  /** The episode's outcome (GRPO) advantage, when the host knows it (else from the episode JSON). */
  outcome: number | null;
  gamma?: number;
  lam?: number;
}

/** Resample an episode's (renamed) task with each call seeing the history under a context policy. */
export interface RerunJob {
  kind: 'rerun';
  episode: TrajectoryJSON;
  runDir: string | null;
  /** `base` or a checkpoint/run folder. */
  model: string;
  policy: ContextPolicy;
  /** Episodes to sample on the task (the first is shown). */
  n: number;
  seed: number;
}

/** Evaluate a model on the held-out tasks under each context policy (the columns of figure 12.3). */
export interface EvalContextJob {
  kind: 'evalContext';
  runDir: string | null;
  model: string;
  policies: ContextPolicy[];
  /** Episodes per held-out task. */
  perTask: number;
  seed: number;
}

/** Retrain from the base with every call seeing the history under a context policy. */
export interface RetrainJob {
  kind: 'retrain';
  runsDir: string;
  /** The run whose config is reused (null: defaults). */
  runDir: string | null;
  policy: ContextPolicy;
  steps: number;
  name?: string;
}

export type Job =
  | SampleScriptedJob
  | MaskCheckJob
  | TrainJob
  | RecipeJob
  | SampleModelJob
  | CreditTableJob
  | RerunJob
  | EvalContextJob
  | RetrainJob;
export type JobKind = Job['kind'];
export const JOB_KINDS: readonly JobKind[] = [
  'sampleScripted',
  'maskCheck',
  'train',
  'recipe',
  'sampleModel',
  'creditTable',
  'rerun',
  'evalContext',
  'retrain',
];

/** What the creditTable job returns. */
export interface CreditResult {
  /** One row per call (figure 12.1); without a critic only k, text, start, end, reward and advOutcome are meaningful. */
  calls: CallRow[];
  hasCritic: boolean;
  /** Why some columns are missing, or where the numbers come from. */
  note: string;
  /** [T-1] the token-level advantage per position (token GAE with a critic, else the outcome advantage on the mask). */
  tokenAdvantages: number[];
  /** [T-1] the critic's values, with a critic. */
  values: number[] | null;
  /** [T-1] log-probs of the episode's tokens under the model now, with a model. */
  curLogps: number[] | null;
  stepPenalty: number;
  gamma: number;
  lam: number;
}

/** Behaviour statistics of a batch (pass_rate, reads, tests, edits, turns, reward, ...). */
export type Stats = Record<string, number>;

export interface RerunResult {
  policy: ContextPolicy;
  model: string;
  episodes: TrajectoryJSON[];
  stats: Stats;
}

export interface EvalContextResult {
  model: string;
  /** Episodes per policy. */
  episodes: number;
  rows: { policy: ContextPolicy; stats: Stats }[];
}

/** A recipe as the trainer lists it. */
export interface RecipeInfo {
  name: string;
  section: string;
  title: string;
  trains: boolean;
}

/** What a run-writing job returns. */
export interface RunResult {
  runDir: string;
  steps: number;
  episodes: number;
  /** False when the job stopped early on a cancel (completed steps are on disk). */
  complete: boolean;
}

export interface JobResults {
  sampleScripted: RunResult;
  maskCheck: MaskCheckResult;
  train: RunResult;
  recipe: RunResult;
  sampleModel: RunResult;
  creditTable: CreditResult;
  rerun: RerunResult;
  evalContext: EvalContextResult;
  retrain: RunResult;
}
export type JobResult = JobResults[JobKind];

export type HostMessage =
  | { type: 'start'; id: string; job: Job }
  | { type: 'cancel'; id: string }
  | { type: 'shutdown' };

export type TrainerMessage =
  | { type: 'ready'; backend: string; pid: number; jobs: JobKind[]; recipes: RecipeInfo[] }
  | { type: 'log'; id?: string; text: string }
  | { type: 'progress'; id: string; step: number; total: number; message: string }
  | { type: 'runCreated'; id: string; dir: string }
  | { type: 'done'; id: string; kind: JobKind; result: JobResult }
  | { type: 'failed'; id: string; message: string }
  | { type: 'cancelled'; id: string };

/** A parse outcome: the typed message, or why it was rejected. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
const isInt = (x: unknown, min = 0): x is number => Number.isInteger(x) && (x as number) >= min;
const isNumArray = (x: unknown): x is number[] =>
  Array.isArray(x) && x.every((v) => typeof v === 'number' && Number.isFinite(v));
const isNum = (x: unknown): x is number => typeof x === 'number' && !Number.isNaN(x);
const isModelRef = (x: unknown): x is string => isStr(x) && x.length > 0 && x.length < 4096;
const isDirOrNull = (x: unknown) => x === null || (isStr(x) && x.length > 0);

class Invalid extends Error {}
function need(cond: boolean, what: string): asserts cond {
  if (!cond) throw new Invalid(what);
}
function wrap<T>(f: () => T): Parsed<T> {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof Invalid || /^not a trajectory/.test((e as Error).message))
      return { ok: false, error: (e as Error).message };
    throw e;
  }
}

/** Check a job description; errors name the bad field. */
export function checkJob(x: unknown): Job {
  need(isObj(x), 'job must be an object');
  const j = x as Obj;
  const optName = () => need(j.name === undefined || (isStr(j.name) && /^[\w.-]+$/.test(j.name)), 'job.name');
  switch (j.kind) {
    case 'sampleScripted':
      need(isStr(j.runsDir) && j.runsDir.length > 0, 'job.runsDir must be a folder');
      need((SCRIPTED_POLICIES as readonly unknown[]).includes(j.policy), 'job.policy');
      need((TASK_SPLITS as readonly unknown[]).includes(j.split), 'job.split');
      need(isInt(j.episodes, 1) && j.episodes <= 100_000, 'job.episodes must be 1 to 100000');
      need(isInt(j.batch, 1), 'job.batch must be a positive integer');
      need(isInt(j.seed), 'job.seed must be a non-negative integer');
      need(isInt(j.maxTurns, 1) && j.maxTurns <= 64, 'job.maxTurns must be 1 to 64');
      optName();
      break;
    case 'maskCheck':
      validateTrajectoryJSON(j.episode);
      need(isMaskBug(j.bug), 'job.bug');
      need(isInt(j.seed), 'job.seed');
      need(j.model === undefined || isModelRef(j.model), 'job.model');
      break;
    case 'train':
      need(isStr(j.runsDir), 'job.runsDir');
      need(isObj(j.config), 'job.config must be an object');
      optName();
      break;
    case 'recipe':
      need(isStr(j.runsDir), 'job.runsDir');
      need(isStr(j.recipe) && j.recipe.length > 0, 'job.recipe');
      need(j.seed === undefined || isInt(j.seed), 'job.seed');
      need(j.steps === undefined || (isInt(j.steps, 1) && j.steps <= 10_000), 'job.steps');
      need(j.smoke === undefined || typeof j.smoke === 'boolean', 'job.smoke');
      break;
    case 'creditTable':
      validateTrajectoryJSON(j.episode);
      need(isDirOrNull(j.runDir), 'job.runDir');
      need(j.model === null || isModelRef(j.model), 'job.model');
      need(j.critic === null || isModelRef(j.critic), 'job.critic');
      need(j.outcome === null || isNum(j.outcome), 'job.outcome');
      for (const k of ['gamma', 'lam'] as const)
        need(j[k] === undefined || (isNum(j[k]) && j[k] >= 0 && j[k] <= 1), `job.${k} must be in [0, 1]`);
      break;
    case 'rerun':
      validateTrajectoryJSON(j.episode);
      need(isDirOrNull(j.runDir), 'job.runDir');
      need(isModelRef(j.model), 'job.model');
      j.policy = parseContextPolicy(j.policy, 'job.policy');
      need(isInt(j.n, 1) && j.n <= 256, 'job.n must be 1 to 256');
      need(isInt(j.seed), 'job.seed');
      break;
    case 'evalContext':
      need(isDirOrNull(j.runDir), 'job.runDir');
      need(isModelRef(j.model), 'job.model');
      need(
        Array.isArray(j.policies) && j.policies.length >= 1 && j.policies.length <= 8,
        'job.policies must be 1 to 8 policies',
      );
      j.policies = (j.policies as unknown[]).map((p, i) => parseContextPolicy(p, `job.policies[${i}]`));
      need(isInt(j.perTask, 1) && j.perTask <= 64, 'job.perTask must be 1 to 64');
      need(isInt(j.seed), 'job.seed');
      break;
    case 'retrain':
      need(isStr(j.runsDir) && j.runsDir.length > 0, 'job.runsDir');
      need(isDirOrNull(j.runDir), 'job.runDir');
      j.policy = parseContextPolicy(j.policy, 'job.policy');
      need(isInt(j.steps, 1) && j.steps <= 10_000, 'job.steps must be 1 to 10000');
      optName();
      break;
    case 'sampleModel':
      need(isStr(j.runsDir), 'job.runsDir');
      need(isStr(j.from) && j.from.length > 0, 'job.from');
      need(isInt(j.episodes, 1), 'job.episodes');
      need(isInt(j.seed), 'job.seed');
      break;
    default:
      throw new Invalid(`job.kind ${JSON.stringify(j.kind)} is not one of ${JOB_KINDS.join(', ')}`);
  }
  return j as unknown as Job;
}

/** Check a message from the host (in the trainer). */
export function parseHostMessage(x: unknown): Parsed<HostMessage> {
  return wrap(() => {
    need(isObj(x), 'message must be an object');
    switch (x.type) {
      case 'start':
        need(isStr(x.id), 'start.id');
        checkJob(x.job);
        break;
      case 'cancel':
        need(isStr(x.id), 'cancel.id');
        break;
      case 'shutdown':
        break;
      default:
        throw new Invalid(`unknown message type ${JSON.stringify(x.type)}`);
    }
    return x as unknown as HostMessage;
  });
}

/** Check a mask-check result (shapes consistent). */
export function checkMaskCheckResult(x: unknown): MaskCheckResult {
  need(isObj(x), 'result must be an object');
  need(isMaskBug(x.bug), 'result.bug');
  const arrays = ['lossMask', 'gradMagnitude', 'hasGradient', 'policyOwned', 'cut', 'flags'] as const;
  for (const k of arrays) need(isNumArray(x[k]), `result.${k} must be numbers`);
  const P = (x.lossMask as number[]).length;
  for (const k of arrays) need((x[k] as number[]).length === P, `result.${k} must have ${P} entries`);
  need(
    Array.isArray(x.byOwner) &&
      x.byOwner.length === 4 &&
      x.byOwner.every(
        (r) =>
          isObj(r) &&
          isStr(r.owner) &&
          ['positions', 'policyOwned', 'withGradient', 'flags'].every((k) => isInt(r[k])),
      ),
    'result.byOwner must have 4 rows of counts',
  );
  need(isInt(x.totalFlags), 'result.totalFlags');
  need(typeof x.loss === 'number', 'result.loss');
  return x as unknown as MaskCheckResult;
}

function checkRunResult(x: unknown): RunResult {
  need(isObj(x), 'result must be an object');
  need(isStr(x.runDir), 'result.runDir');
  need(isInt(x.steps) && isInt(x.episodes), 'result.steps/episodes');
  need(typeof x.complete === 'boolean', 'result.complete');
  return x as unknown as RunResult;
}

const CALL_ROW_NUMBERS = [
  'k',
  'start',
  'end',
  'reward',
  'valueStart',
  'valueNext',
  'tdError',
  'advOutcome',
  'advToken',
  'advTokenSpread',
  'advTurn',
] as const;

/** Check a creditTable result (shapes consistent; numbers finite). */
export function checkCreditResult(x: unknown): CreditResult {
  need(isObj(x), 'result must be an object');
  need(Array.isArray(x.calls), 'result.calls must be an array');
  for (const [i, r] of (x.calls as unknown[]).entries()) {
    need(isObj(r) && isStr(r.text), `result.calls[${i}].text`);
    for (const k of CALL_ROW_NUMBERS)
      need(typeof r[k] === 'number' && Number.isFinite(r[k]), `result.calls[${i}].${k} must be a number`);
  }
  need(typeof x.hasCritic === 'boolean', 'result.hasCritic');
  need(isStr(x.note), 'result.note');
  need(isNumArray(x.tokenAdvantages), 'result.tokenAdvantages must be numbers');
  const P = (x.tokenAdvantages as number[]).length;
  for (const k of ['values', 'curLogps'] as const)
    need(
      x[k] === null || (isNumArray(x[k]) && (x[k] as number[]).length === P),
      `result.${k} must be ${P} numbers or null`,
    );
  for (const k of ['stepPenalty', 'gamma', 'lam'] as const) need(isNum(x[k]), `result.${k}`);
  return x as unknown as CreditResult;
}

const isStats = (x: unknown): x is Stats => isObj(x) && Object.values(x).every((v) => typeof v === 'number');

/** Check a rerun result. */
export function checkRerunResult(x: unknown): RerunResult {
  need(isObj(x), 'result must be an object');
  x.policy = parseContextPolicy(x.policy, 'result.policy');
  need(isStr(x.model), 'result.model');
  need(Array.isArray(x.episodes) && x.episodes.length >= 1, 'result.episodes must be a non-empty array');
  for (const e of x.episodes as unknown[]) validateTrajectoryJSON(e);
  need(isStats(x.stats), 'result.stats must be numbers');
  return x as unknown as RerunResult;
}

/** Check an evalContext result. */
export function checkEvalContextResult(x: unknown): EvalContextResult {
  need(isObj(x), 'result must be an object');
  need(isStr(x.model), 'result.model');
  need(isInt(x.episodes), 'result.episodes');
  need(Array.isArray(x.rows), 'result.rows must be an array');
  for (const [i, r] of (x.rows as unknown[]).entries()) {
    need(isObj(r), `result.rows[${i}]`);
    r.policy = parseContextPolicy(r.policy, `result.rows[${i}].policy`);
    need(isStats(r.stats), `result.rows[${i}].stats must be numbers`);
  }
  return x as unknown as EvalContextResult;
}

const RESULT_CHECKS: Record<JobKind, (x: unknown) => unknown> = {
  sampleScripted: checkRunResult,
  maskCheck: checkMaskCheckResult,
  train: checkRunResult,
  recipe: checkRunResult,
  sampleModel: checkRunResult,
  creditTable: checkCreditResult,
  rerun: checkRerunResult,
  evalContext: checkEvalContextResult,
  retrain: checkRunResult,
};

const isRecipeInfo = (r: unknown) =>
  isObj(r) && isStr(r.name) && isStr(r.section) && isStr(r.title) && typeof r.trains === 'boolean';

/** Check a message from the trainer (in the host). */
export function parseTrainerMessage(x: unknown): Parsed<TrainerMessage> {
  return wrap(() => {
    need(isObj(x), 'message must be an object');
    switch (x.type) {
      case 'ready':
        need(isStr(x.backend) && isInt(x.pid), 'ready.backend/pid');
        need(
          Array.isArray(x.jobs) && x.jobs.every((k) => (JOB_KINDS as readonly unknown[]).includes(k)),
          'ready.jobs must be job kinds',
        );
        need(Array.isArray(x.recipes) && x.recipes.every(isRecipeInfo), 'ready.recipes');
        break;
      case 'log':
        need(x.id === undefined || isStr(x.id), 'log.id');
        need(isStr(x.text), 'log.text');
        break;
      case 'progress':
        need(isStr(x.id) && isInt(x.step) && isInt(x.total) && isStr(x.message), 'progress fields');
        break;
      case 'runCreated':
        need(isStr(x.id) && isStr(x.dir), 'runCreated fields');
        break;
      case 'done':
        need(isStr(x.id), 'done.id');
        need((JOB_KINDS as readonly unknown[]).includes(x.kind), 'done.kind');
        need(isObj(x.result), 'done.result');
        RESULT_CHECKS[x.kind as JobKind](x.result);
        break;
      case 'failed':
        need(isStr(x.id) && isStr(x.message), 'failed fields');
        break;
      case 'cancelled':
        need(isStr(x.id), 'cancelled.id');
        break;
      default:
        throw new Invalid(`unknown message type ${JSON.stringify(x.type)}`);
    }
    return x as unknown as TrainerMessage;
  });
}
