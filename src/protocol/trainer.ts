/**
 * The message protocol between the extension host and the trainer child process
 * (`dist/trainer.js`, started with `child_process.fork`). Every message is a `{type, ...}` object
 * checked at the boundary by a schema (`parseHostMessage` / `parseTrainerMessage`): a message that
 * does not match is dropped (and logged) by the receiver, never acted on, and no parser throws.
 *
 *   host -> trainer   start {id, job}   cancel {id}   shutdown
 *   trainer -> host   ready {backend, pid, jobs, recipes}   log {id?, text}
 *                     progress {id, step, total, message}   runCreated {id, dir}
 *                     done {id, kind, result}   failed {id, message}   cancelled {id}
 *
 * A job kind maps to one core function in the trainer (`src/trainer/jobs.ts`). The limits below are
 * declared once and shared with the webview protocol (webview.ts), which forwards some of them.
 */
import * as v from 'valibot';
import type { EpisodeTable } from '../core/browse/table.js';
import { type ContextPolicy, ContextPolicySchema } from '../core/context/policy.js';
import { DUMP_FORMATS } from '../core/dumps/formats/index.js';
import type { DumpFileSummary, DumpView } from '../core/dumps/view.js';
import {
  SCRIPTED_POLICIES,
  type ScriptedPolicyName,
  TASK_SPLITS,
  type TaskSplit,
} from '../core/gym/names.js';
import {
  MAX_TRAJECTORY_TOKENS,
  type TrajectoryJSON,
  TrajectoryJSONSchema,
} from '../core/gym/trajectory-json.js';
import type { CallRow } from '../core/rl/advantages.js';
import { MAX_SEED } from '../core/rl/config.js';
import { MASK_BUGS, type MaskBug } from '../core/rl/mask-bugs.js';
import type { MaskCheckResult } from '../core/rl/mask-check.js';
import {
  anyText,
  bool,
  finite,
  int,
  list,
  loose,
  num,
  numbers,
  oneOf,
  parse,
  parseOrThrow,
  type Result,
  show,
  strict,
  strictEntries,
  strings,
  text,
} from '../core/schema.js';

export type { Result };

/** Episodes a sampling job may write. */
export const MAX_SAMPLE_EPISODES = 100_000;
/** Episodes per rerun of one task (the webview asks for 16). */
export const MAX_RERUN_EPISODES = 64;
/** Steps of a retraining started from the inspector. */
export const MAX_RETRAIN_STEPS = 1000;
/** Steps of a recipe arm. */
export const MAX_RECIPE_STEPS = 10_000;
/** Context policies evaluated side by side. */
export const MAX_EVAL_POLICIES = 8;
/** Longest path or model reference accepted. */
export const MAX_PATH = 4096;

const Folder = text(MAX_PATH);
const ModelRef = text(MAX_PATH);
const Seed = int(0, MAX_SEED);
/** A run folder name: letters, digits, `.`, `_`, `-`; not `.` or `..` (which would be the runs folder or above it). */
const RunName = v.pipe(
  v.string(),
  v.regex(/^[\w.-]{1,80}$/, 'expected a folder name of 1 to 80 letters, digits, ".", "_" or "-"'),
  v.check((x) => x !== '.' && x !== '..', 'expected a folder name, not "." or ".."'),
);
const Id = text(64);

export const SampleScriptedJobSchema = strictEntries({
  kind: v.literal('sampleScripted'),
  runsDir: Folder,
  policy: oneOf(SCRIPTED_POLICIES),
  split: oneOf(TASK_SPLITS),
  episodes: int(1, MAX_SAMPLE_EPISODES),
  /** Episodes per appended batch (a batch is one "step" of a sample run). */
  batch: int(1, 4096),
  seed: Seed,
  maxTurns: int(1, 64),
  name: v.optional(RunName),
});

export const MaskCheckJobSchema = strictEntries({
  kind: v.literal('maskCheck'),
  episode: TrajectoryJSONSchema,
  bug: oneOf(MASK_BUGS),
  seed: Seed,
  /** The model whose logits the loss is taken of (`base` or a folder); seeded random logits without one. */
  model: v.optional(ModelRef),
});

export const TrainJobSchema = strictEntries({
  kind: v.literal('train'),
  runsDir: Folder,
  /** RLConfig keys plus `steps` and `from`: the trainer validates them with the RLConfig schema. */
  config: loose({}),
  name: v.optional(RunName),
});

export const RecipeJobSchema = strictEntries({
  kind: v.literal('recipe'),
  runsDir: Folder,
  recipe: text(80),
  seed: v.optional(Seed),
  steps: v.optional(int(1, MAX_RECIPE_STEPS)),
  smoke: v.optional(bool()),
});

export const SampleModelJobSchema = strictEntries({
  kind: v.literal('sampleModel'),
  runsDir: Folder,
  from: ModelRef,
  episodes: int(1, MAX_SAMPLE_EPISODES),
  seed: Seed,
  /** Sampling temperature (default 1). */
  temperature: v.optional(num(0, 10, { min: true })),
});

export const CreditTableJobSchema = strictEntries({
  kind: v.literal('creditTable'),
  episode: TrajectoryJSONSchema,
  /** The run the episode comes from (its config gives the reward), if any. */
  runDir: v.nullable(Folder),
  /** The policy (`base` or a folder) for current log-probs; null for none. */
  model: v.nullable(ModelRef),
  /** A critic checkpoint folder (a run's checkpoints/critic); null for none. */
  critic: v.nullable(ModelRef),
  /** The episode's outcome (GRPO) advantage, when the host knows it (else from the episode JSON). */
  outcome: v.nullable(finite()),
  gamma: v.optional(
    v.pipe(
      finite(),
      v.minValue(0, 'expected a number in [0, 1]'),
      v.maxValue(1, 'expected a number in [0, 1]'),
    ),
  ),
  lam: v.optional(
    v.pipe(
      finite(),
      v.minValue(0, 'expected a number in [0, 1]'),
      v.maxValue(1, 'expected a number in [0, 1]'),
    ),
  ),
});

export const RerunJobSchema = strictEntries({
  kind: v.literal('rerun'),
  episode: TrajectoryJSONSchema,
  runDir: v.nullable(Folder),
  /** `base` or a checkpoint/run folder. */
  model: ModelRef,
  policy: ContextPolicySchema,
  /** Episodes to sample on the task (the first is shown). */
  n: int(1, MAX_RERUN_EPISODES),
  seed: Seed,
});

export const EvalContextJobSchema = strictEntries({
  kind: v.literal('evalContext'),
  runDir: v.nullable(Folder),
  model: ModelRef,
  policies: list(ContextPolicySchema, 1, MAX_EVAL_POLICIES),
  /** Episodes per held-out task. */
  perTask: int(1, 64),
  seed: Seed,
});

export const RetrainJobSchema = strictEntries({
  kind: v.literal('retrain'),
  runsDir: Folder,
  /** The run whose config is reused (null: defaults). */
  runDir: v.nullable(Folder),
  policy: ContextPolicySchema,
  steps: int(1, MAX_RETRAIN_STEPS),
  name: v.optional(RunName),
});

export const DumpOpenJobSchema = strictEntries({
  kind: v.literal('dumpOpen'),
  /** A JSONL dump file (NeMo-RL, prime-rl, Episode Lab's own, the token-level JSONL). */
  file: Folder,
  /** A folder with tokenizer.json and tokenizer_config.json; null: one beside the file, or none. */
  tokenizer: v.nullable(Folder),
  format: oneOf(['auto', ...DUMP_FORMATS] as const),
  /** False: only index the file (fast: the first record can be shown at once); true: lint it whole. */
  lint: bool(),
});

export const DumpSampleJobSchema = strictEntries({
  kind: v.literal('dumpSample'),
  file: Folder,
  tokenizer: v.nullable(Folder),
  format: oneOf(DUMP_FORMATS),
  /** The record (0-based JSONL line) and its byte range, from the open job's index. */
  record: int(0, 1e9),
  offset: int(0, Number.MAX_SAFE_INTEGER),
  bytes: int(0, 2 ** 31 - 1),
});

/** The episode table of a run (read in the trainer process: a run can hold 100 000 episodes). */
export const EpisodeTableJobSchema = strictEntries({ kind: v.literal('episodeTable'), runDir: Folder });

export const JOB_KINDS = [
  'sampleScripted',
  'maskCheck',
  'train',
  'recipe',
  'sampleModel',
  'creditTable',
  'rerun',
  'evalContext',
  'retrain',
  'dumpOpen',
  'dumpSample',
  'episodeTable',
] as const;

const JOB_SCHEMAS = [
  SampleScriptedJobSchema,
  MaskCheckJobSchema,
  TrainJobSchema,
  RecipeJobSchema,
  SampleModelJobSchema,
  CreditTableJobSchema,
  RerunJobSchema,
  EvalContextJobSchema,
  RetrainJobSchema,
  DumpOpenJobSchema,
  DumpSampleJobSchema,
  EpisodeTableJobSchema,
] as const;

/** Any job: the `kind` picks the schema. */
export const JobSchema = v.variant('kind', JOB_SCHEMAS, (i) =>
  i.path?.length
    ? `expected one of ${JOB_KINDS.join(', ')}, got ${show(i.input)}`
    : `expected a job object, got ${show(i.input)}`,
);

export type SampleScriptedJob = v.InferOutput<typeof SampleScriptedJobSchema> & {
  policy: ScriptedPolicyName;
  split: TaskSplit;
};
export type MaskCheckJob = Omit<v.InferOutput<typeof MaskCheckJobSchema>, 'episode' | 'bug'> & {
  episode: TrajectoryJSON;
  bug: MaskBug;
};
export type TrainJob = Omit<v.InferOutput<typeof TrainJobSchema>, 'config'> & {
  config: Record<string, unknown>;
};
export type RecipeJob = v.InferOutput<typeof RecipeJobSchema>;
export type SampleModelJob = v.InferOutput<typeof SampleModelJobSchema>;
export type CreditTableJob = Omit<v.InferOutput<typeof CreditTableJobSchema>, 'episode'> & {
  episode: TrajectoryJSON;
};
export type RerunJob = Omit<v.InferOutput<typeof RerunJobSchema>, 'episode' | 'policy'> & {
  episode: TrajectoryJSON;
  policy: ContextPolicy;
};
export type EvalContextJob = Omit<v.InferOutput<typeof EvalContextJobSchema>, 'policies'> & {
  policies: ContextPolicy[];
};
export type RetrainJob = Omit<v.InferOutput<typeof RetrainJobSchema>, 'policy'> & { policy: ContextPolicy };

export type DumpOpenJob = v.InferOutput<typeof DumpOpenJobSchema>;
export type DumpSampleJob = v.InferOutput<typeof DumpSampleJobSchema>;

export type EpisodeTableJob = v.InferOutput<typeof EpisodeTableJobSchema>;

export type Job =
  | EpisodeTableJob
  | DumpOpenJob
  | DumpSampleJob
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
  dumpOpen: DumpFileSummary;
  dumpSample: { views: DumpView[] };
  episodeTable: { table: EpisodeTable; warnings: string[] };
}
export type JobResult = JobResults[JobKind];

const StatsSchema = v.record(v.string(), finite(), 'expected statistics (numbers by name)');

const RunResultSchema = strict({
  runDir: Folder,
  steps: int(0, 1e9),
  episodes: int(0, 1e12),
  complete: bool(),
});

/** Arrays of one result that must all have the length of the first. */
function sameLengths<T>(keys: readonly string[], nullable: readonly string[] = []) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const o = dataset.value as Record<string, unknown[] | null>;
    const n = (o[keys[0]] as unknown[]).length;
    for (const k of [...keys, ...nullable]) {
      const a = o[k];
      if (a !== null && a !== undefined && a.length !== n)
        addIssue({
          message: `expected ${n} entries (as "${keys[0]}"), got ${a.length}`,
          path: [{ type: 'object', origin: 'value', input: o, key: k, value: a }],
        });
    }
  });
}

const MASK_ARRAYS = ['lossMask', 'gradMagnitude', 'hasGradient', 'policyOwned', 'cut', 'flags'] as const;

const MaskCheckResultObject = strict({
  bug: oneOf(MASK_BUGS),
  ...(Object.fromEntries(MASK_ARRAYS.map((k) => [k, numbers()])) as Record<
    (typeof MASK_ARRAYS)[number],
    ReturnType<typeof numbers>
  >),
  byOwner: list(
    strict({
      owner: text(20),
      positions: int(0, 1e9),
      policyOwned: int(0, 1e9),
      withGradient: int(0, 1e9),
      flags: int(0, 1e9),
    }),
    4,
    4,
  ),
  totalFlags: int(0, 1e9),
  loss: v.number(),
});
export const MaskCheckResultSchema = v.pipe(
  MaskCheckResultObject,
  sameLengths<v.InferOutput<typeof MaskCheckResultObject>>(MASK_ARRAYS),
);

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

const CreditResultObject = strict({
  calls: list(
    loose({
      text: anyText(10_000),
      ...(Object.fromEntries(CALL_ROW_NUMBERS.map((k) => [k, finite()])) as Record<
        (typeof CALL_ROW_NUMBERS)[number],
        ReturnType<typeof finite>
      >),
    }),
    0,
    10_000,
  ),
  hasCritic: bool(),
  note: anyText(10_000),
  tokenAdvantages: numbers(),
  values: v.nullable(numbers()),
  curLogps: v.nullable(numbers()),
  stepPenalty: finite(),
  gamma: finite(),
  lam: finite(),
});
export const CreditResultSchema = v.pipe(
  CreditResultObject,
  sameLengths<v.InferOutput<typeof CreditResultObject>>(['tokenAdvantages'], ['values', 'curLogps']),
);

export const RerunResultSchema = strict({
  policy: ContextPolicySchema,
  model: anyText(MAX_PATH),
  episodes: list(TrajectoryJSONSchema, 1, MAX_RERUN_EPISODES),
  stats: StatsSchema,
});

export const EvalContextResultSchema = strict({
  model: anyText(MAX_PATH),
  episodes: int(0, 1e9),
  rows: list(strict({ policy: ContextPolicySchema, stats: StatsSchema }), 0, MAX_EVAL_POLICIES),
});

const NullableNumbers = v.custom<(number | null)[]>(
  (x) =>
    Array.isArray(x) &&
    x.length <= MAX_TRAJECTORY_TOKENS &&
    x.every((n) => n === null || (typeof n === 'number' && Number.isFinite(n))),
  'expected numbers or null',
);

const FindingSchema = strict({
  sample: int(0, 1e9),
  rule: text(40),
  positions: numbers(MAX_TRAJECTORY_TOKENS),
  message: anyText(10_000),
});

export const DumpFileSummarySchema = strict({
  file: Folder,
  format: oneOf(DUMP_FORMATS),
  records: int(0, 1e9),
  offsets: numbers(10_000_000),
  lengths: numbers(10_000_000),
  findingsPerRecord: numbers(10_000_000),
  rules: list(
    strict({
      rule: text(40),
      findings: int(0, 1e12),
      samples: int(0, 1e12),
      summary: anyText(1000),
      from: anyText(1000),
      records: numbers(100_000),
    }),
    0,
    64,
  ),
  rejections: list(anyText(10_000), 0, 100),
  tokenizer: v.nullable(anyText(MAX_PATH)),
  ownerSources: list(text(20), 0, 8),
  notes: list(anyText(10_000), 0, 20),
  cancelled: bool(),
});

export const DumpViewSchema = strict({
  record: int(0, 1e9),
  part: v.nullable(anyText(200)),
  offset: int(0, 1e12),
  tokens: strings(MAX_TRAJECTORY_TOKENS),
  ids: numbers(MAX_TRAJECTORY_TOKENS),
  owner: numbers(MAX_TRAJECTORY_TOKENS),
  turn: numbers(MAX_TRAJECTORY_TOKENS),
  lossMask: numbers(MAX_TRAJECTORY_TOKENS),
  samplerLogprobs: v.nullable(NullableNumbers),
  trainerLogprobs: v.nullable(NullableNumbers),
  advantages: v.nullable(numbers(MAX_TRAJECTORY_TOKENS)),
  reward: v.nullable(finite()),
  step: v.nullable(finite()),
  group: v.nullable(finite()),
  findings: list(FindingSchema, 0, 100_000),
  ownerSource: text(20),
  roles: list(anyText(100), 0, 100_000),
});

const DumpSampleResultSchema = strict({ views: list(DumpViewSchema, 0, 1000) });

/** The most rows a table carries (a run of 625 steps of 160 episodes). */
export const MAX_TABLE_ROWS = 100_000;

const NullableNumberColumn = v.custom<(number | null)[]>(
  (x) =>
    Array.isArray(x) &&
    x.length <= MAX_TABLE_ROWS &&
    x.every((n) => n === null || (typeof n === 'number' && Number.isFinite(n))),
  `expected at most ${MAX_TABLE_ROWS} numbers or null`,
);
const NullableStringColumn = v.custom<(string | null)[]>(
  (x) =>
    Array.isArray(x) &&
    x.length <= MAX_TABLE_ROWS &&
    x.every((s) => s === null || (typeof s === 'string' && s.length < 10_000)),
  `expected at most ${MAX_TABLE_ROWS} strings or null`,
);

export const EpisodeTableSchema = v.pipe(
  strict({
    keys: strings(MAX_TABLE_ROWS),
    step: NullableNumberColumn,
    index: NullableNumberColumn,
    task: NullableStringColumn,
    kind: NullableStringColumn,
    group: NullableNumberColumn,
    pass: NullableNumberColumn,
    reward: NullableNumberColumn,
    advantage: NullableNumberColumn,
    turns: NullableNumberColumn,
    stop: NullableStringColumn,
    invalid: NullableNumberColumn,
    tokens: NullableNumberColumn,
    flags: NullableStringColumn,
    text: strings(MAX_TABLE_ROWS),
  }),
  v.check(
    (t) => Object.values(t).every((c) => (c as unknown[]).length === t.keys.length),
    'expected every column to have one entry per row',
  ),
);

const RESULT_SCHEMAS = {
  sampleScripted: RunResultSchema,
  maskCheck: MaskCheckResultSchema,
  train: RunResultSchema,
  recipe: RunResultSchema,
  sampleModel: RunResultSchema,
  creditTable: CreditResultSchema,
  rerun: RerunResultSchema,
  evalContext: EvalContextResultSchema,
  retrain: RunResultSchema,
  dumpOpen: DumpFileSummarySchema,
  dumpSample: DumpSampleResultSchema,
  episodeTable: strict({ table: EpisodeTableSchema, warnings: list(anyText(10_000), 0, 1000) }),
} as const;

const RecipeInfoSchema = strict({ name: text(80), section: text(40), title: anyText(400), trains: bool() });

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

const HostMessageSchema = v.variant(
  'type',
  [
    v.strictObject({ type: v.literal('start'), id: Id, job: JobSchema }),
    v.strictObject({ type: v.literal('cancel'), id: Id }),
    v.strictObject({ type: v.literal('shutdown') }),
  ],
  (i) => `unknown message type ${JSON.stringify(i.input) ?? '(none)'}`,
);

function doneSchema<K extends JobKind>(kind: K) {
  return v.strictObject({
    type: v.literal('done'),
    id: Id,
    kind: v.literal(kind),
    result: RESULT_SCHEMAS[kind] as v.GenericSchema,
  });
}

/** A done message: its result is checked by the schema of its job kind. */
const DoneSchema = v.variant(
  'kind',
  [
    doneSchema('sampleScripted'),
    doneSchema('maskCheck'),
    doneSchema('train'),
    doneSchema('recipe'),
    doneSchema('sampleModel'),
    doneSchema('creditTable'),
    doneSchema('rerun'),
    doneSchema('evalContext'),
    doneSchema('retrain'),
    doneSchema('dumpOpen'),
    doneSchema('dumpSample'),
    doneSchema('episodeTable'),
  ],
  (i) => `expected a job kind, got ${show(i.input)}`,
);

const TrainerMessageSchema = v.variant(
  'type',
  [
    v.strictObject({
      type: v.literal('ready'),
      backend: anyText(400),
      pid: int(0, 2 ** 31),
      jobs: list(oneOf(JOB_KINDS), 0, JOB_KINDS.length),
      recipes: list(RecipeInfoSchema, 0, 200),
    }),
    v.strictObject({ type: v.literal('log'), id: v.optional(Id), text: anyText() }),
    v.strictObject({
      type: v.literal('progress'),
      id: Id,
      step: int(0, 1e9),
      total: int(0, 1e9),
      message: anyText(10_000),
    }),
    v.strictObject({ type: v.literal('runCreated'), id: Id, dir: Folder }),
    DoneSchema,
    v.strictObject({ type: v.literal('failed'), id: Id, message: anyText() }),
    v.strictObject({ type: v.literal('cancelled'), id: Id }),
  ],
  (i) => `unknown message type ${JSON.stringify(i.input) ?? '(none)'}`,
);

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** What a message's errors are prefixed with: its type when it has a sensible one. */
export const messageName = (x: Record<string, unknown>) =>
  typeof x.type === 'string' && /^\w{1,40}$/.test(x.type) ? x.type : 'message';

/** Check a job description; throws an error that names the bad field (`job.episodes: expected ...`). */
export function checkJob(x: unknown): Job {
  return parseOrThrow(JobSchema, x, 'job') as Job;
}

/** Check a message from the host (in the trainer). Never throws. */
export function parseHostMessage(x: unknown): Result<HostMessage> {
  if (!isObject(x)) return { ok: false, error: 'message: expected an object' };
  return parse(HostMessageSchema, x, messageName(x)) as Result<HostMessage>;
}

/** Check a message from the trainer (in the host). Never throws. */
export function parseTrainerMessage(x: unknown): Result<TrainerMessage> {
  if (!isObject(x)) return { ok: false, error: 'message: expected an object' };
  return parse(TrainerMessageSchema, x, messageName(x)) as Result<TrainerMessage>;
}

/** Check a mask-check result (shapes consistent); throws naming the field. */
export function checkMaskCheckResult(x: unknown): MaskCheckResult {
  return parseOrThrow(MaskCheckResultSchema, x, 'result') as MaskCheckResult;
}

/** Check a creditTable result (shapes consistent; numbers finite); throws naming the field. */
export function checkCreditResult(x: unknown): CreditResult {
  return parseOrThrow(CreditResultSchema, x, 'result') as CreditResult;
}

/** Check a rerun result; throws naming the field. */
export function checkRerunResult(x: unknown): RerunResult {
  return parseOrThrow(RerunResultSchema, x, 'result') as unknown as RerunResult;
}

/** Check an evalContext result; throws naming the field. */
export function checkEvalContextResult(x: unknown): EvalContextResult {
  return parseOrThrow(EvalContextResultSchema, x, 'result') as EvalContextResult;
}
