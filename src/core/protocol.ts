/**
 * The message protocol between the extension host and the trainer child process
 * (`dist/trainer.js`, started with `child_process.fork`). Every message is a `{type, ...}` object
 * checked at the boundary by `parseHostMessage` / `parseTrainerMessage`: a message that does not
 * match its type is dropped (and logged) by the receiver, never acted on.
 *
 *   host -> trainer   start {id, job}   cancel {id}   shutdown
 *   trainer -> host   ready {backend, pid}   log {id?, text}   progress {id, step, total, message}
 *                     runCreated {id, dir}   done {id, result}   failed {id, message, unavailable}
 *                     cancelled {id}
 *
 * A job kind maps to one core function in the trainer (`src/trainer/jobs.ts`).
 */
import { type TrajectoryJSON, validateTrajectoryJSON } from './gym/trajectory-json.js';
import { isMaskBug, type MaskBug, type MaskCheckResult } from './rl/mask-check.js';

export const SCRIPTED_POLICIES = ['oracle', 'uninformed', 'malformed', 'blind'] as const;
export type ScriptedPolicyName = (typeof SCRIPTED_POLICIES)[number];
export const TASK_SPLITS = ['train', 'heldout', 'all'] as const;
export type TaskSplit = (typeof TASK_SPLITS)[number];

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
}

/** Sample episodes from a model: the shipped base (`from: "base"`) or a run's checkpoint folder. */
export interface SampleModelJob {
  kind: 'sampleModel';
  runsDir: string;
  from: string;
  episodes: number;
  seed: number;
}

export type Job = SampleScriptedJob | MaskCheckJob | TrainJob | RecipeJob | SampleModelJob;
export type JobKind = Job['kind'];
export const JOB_KINDS: readonly JobKind[] = [
  'sampleScripted',
  'maskCheck',
  'train',
  'recipe',
  'sampleModel',
];

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
}
export type JobResult = JobResults[JobKind];

export type HostMessage =
  | { type: 'start'; id: string; job: Job }
  | { type: 'cancel'; id: string }
  | { type: 'shutdown' };

export type TrainerMessage =
  | { type: 'ready'; backend: string; pid: number }
  | { type: 'log'; id?: string; text: string }
  | { type: 'progress'; id: string; step: number; total: number; message: string }
  | { type: 'runCreated'; id: string; dir: string }
  | { type: 'done'; id: string; result: JobResult }
  | { type: 'failed'; id: string; message: string; unavailable: boolean }
  | { type: 'cancelled'; id: string };

/** A parse outcome: the typed message, or why it was rejected. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
const isInt = (x: unknown, min = 0): x is number => Number.isInteger(x) && (x as number) >= min;
const isNumArray = (x: unknown): x is number[] =>
  Array.isArray(x) && x.every((v) => typeof v === 'number' && Number.isFinite(v));

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

/** Check a message from the trainer (in the host). */
export function parseTrainerMessage(x: unknown): Parsed<TrainerMessage> {
  return wrap(() => {
    need(isObj(x), 'message must be an object');
    switch (x.type) {
      case 'ready':
        need(isStr(x.backend) && isInt(x.pid), 'ready.backend/pid');
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
        need(isObj(x.result), 'done.result');
        if ('runDir' in x.result) checkRunResult(x.result);
        else checkMaskCheckResult(x.result);
        break;
      case 'failed':
        need(isStr(x.id) && isStr(x.message) && typeof x.unavailable === 'boolean', 'failed fields');
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
