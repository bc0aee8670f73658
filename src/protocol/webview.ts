/**
 * Messages between the extension host and its webviews (the inspector and the training
 * dashboard), checked on both sides: a message that does not match its type is dropped and
 * logged, never acted on.
 *
 * Inspector:
 *   host -> webview   show {episode, title, backend?, source?}
 *                     maskResult {requestId, result}   maskError {requestId, message}
 *                     creditResult {requestId, result}   rerunResult {requestId, result}
 *                     evalResult {requestId, label, result}   retrainDone {requestId, run, label, steps, complete}
 *                     jobProgress {requestId, message}   jobError {requestId, op, message}
 *   webview -> host   ready   maskCheck {requestId, bug}   credit {requestId}
 *                     rerun {requestId, policy, n}   evaluate {requestId, policies, model}
 *                     retrain {requestId, policy, steps}   cancelJob {requestId, op}   openDashboard
 *                     walk {direction}   browse {query}   pin   focusTree   openBeside   dumpNav {direction, rule}
 * Dashboard:
 *   host -> webview   runs {roots, runs, tables, notes}   exported {file}
 *   webview -> host   ready   exportSvg {name, svg}
 *
 * The inspector's saved state (`getState`/`setState`, and what the panel serializer restores
 * after a window reload) is an `InspectorState`; the dashboard's is a `DashboardState`.
 */
import * as v from 'valibot';
import { COLUMNS, type Column, type EpisodeTable } from '../core/browse/table.js';
import { type ContextPolicy, ContextPolicySchema } from '../core/context/policy.js';
import type { DumpFileSummary, DumpView } from '../core/dumps/view.js';
import { type TrajectoryJSON, TrajectoryJSONSchema } from '../core/gym/trajectory-json.js';
import { MASK_BUGS, type MaskBug } from '../core/rl/mask-bugs.js';
import type { MaskCheckResult } from '../core/rl/mask-check.js';
import {
  anyText,
  bool,
  finite,
  int,
  list,
  oneOf,
  parse,
  show,
  strict,
  strings,
  text,
} from '../core/schema.js';
import {
  type CreditResult,
  CreditResultSchema,
  DumpFileSummarySchema,
  DumpViewSchema,
  EpisodeTableSchema,
  type EvalContextResult,
  EvalContextResultSchema,
  MAX_EVAL_POLICIES,
  MAX_PATH,
  MAX_RERUN_EPISODES,
  MAX_RETRAIN_STEPS,
  MAX_TABLE_ROWS,
  MaskCheckResultSchema,
  messageName,
  type RerunResult,
  RerunResultSchema,
  type Result,
} from './trainer.js';

/** Where the shown episode comes from, as the webview needs it. */
export interface SourceInfo {
  /** The run's folder name (null: no run). */
  run: string | null;
  /** The run's folder (to find it again after a window reload). */
  dir: string | null;
  /** The model that reruns, re-evaluations and the mask check use, as a label (null: none, a scripted run). */
  model: string | null;
  /** True when the run has a critic (checkpoints/critic): every credit column can be computed. */
  critic: boolean;
  /** The run's context policy (full unless its config names one). */
  contextPolicy: ContextPolicy;
  /** Null when retraining with a context policy is available, else why not. */
  retrainUnavailable: string | null;
}

export type AnalysisOp = 'credit' | 'rerun' | 'evaluate' | 'retrain';
export const ANALYSIS_OPS = ['credit', 'rerun', 'evaluate', 'retrain'] as const;

export type ToWebview =
  | { type: 'show'; episode: TrajectoryJSON; title: string; backend?: string; source?: SourceInfo }
  | { type: 'maskResult'; requestId: number; result: MaskCheckResult; backend: string }
  | { type: 'maskError'; requestId: number; message: string }
  | { type: 'creditResult'; requestId: number; result: CreditResult }
  | { type: 'rerunResult'; requestId: number; result: RerunResult }
  | { type: 'evalResult'; requestId: number; label: string; result: EvalContextResult }
  /** A retraining ended: `complete` false when it was cancelled after `steps` steps (kept on disk). */
  | { type: 'retrainDone'; requestId: number; run: string; label: string; steps: number; complete: boolean }
  | { type: 'jobProgress'; requestId: number; message: string }
  | { type: 'jobError'; requestId: number; op: AnalysisOp; message: string }
  | {
      type: 'showDump';
      title: string;
      summary: DumpFileSummary;
      view: DumpView;
      /** Which sample of the record (a prime-rl record holds one per branch), of how many. */
      sample: number;
      samples: number;
    };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'maskCheck'; requestId: number; bug: MaskBug }
  | { type: 'credit'; requestId: number }
  | { type: 'rerun'; requestId: number; policy: ContextPolicy; n: number }
  | { type: 'evaluate'; requestId: number; policies: ContextPolicy[]; model: 'run' | 'retrained' }
  | { type: 'retrain'; requestId: number; policy: ContextPolicy; steps: number }
  /** Stop an analysis this inspector started (at its next step boundary). */
  | { type: 'cancelJob'; requestId: number; op: AnalysisOp }
  | { type: 'openDashboard' }
  /** Show the previous or next record with findings (of one rule, or any) of the dump file shown. */
  | { type: 'dumpNav'; direction: -1 | 1; rule: string | null }
  /** Show the previous or next row of the episode table's filtered order. */
  | { type: 'walk'; direction: -1 | 1 }
  /** Open this run's episode table with a query (this episode's group, its task across steps). */
  | { type: 'browse'; query: string }
  /** Give the keyboard back to the run explorer (Escape). */
  | { type: 'focusTree' }
  /** Open a second inspector beside this one on the same episode (to compare side by side). */
  | { type: 'openBeside' };

export interface InspectorState {
  episode: TrajectoryJSON;
  title: string;
  bug: MaskBug;
  source?: SourceInfo;
  /** The context policy in the editor. */
  policy?: ContextPolicy;
  /** The call whose view the strip shows (null: the whole episode). */
  call?: number | null;
  /** An episode pinned to compare others with. */
  pinned?: { episode: TrajectoryJSON; title: string };
}

/** One training curve's data: a run's per-step statistics. */
export interface RunSeries {
  /** The run folder (an id). */
  id: string;
  /** Its name in the legend. */
  name: string;
  /** Runs with the same group (the seeds of one arm) are drawn as mean ± sd. */
  group: string;
  /** True while a job writes it. */
  live: boolean;
  steps: number[];
  /** Per metric, one value per step (NaN-free: a missing value is null). */
  metrics: Record<string, (number | null)[]>;
  /** The held-out result of a finished run (summary.json), by metric; null when not evaluated. */
  heldout?: Record<string, number> | null;
}

/** A recipe table (recipe.json), with the spread over seeds when aggregated. */
export interface TableData {
  title: string;
  columns: string[];
  rows: (string | number)[][];
  digits?: number[];
  spread?: (number | null)[][];
  /** Where it comes from (the recipe folder). */
  source: string;
}

export type ToDashboard =
  | { type: 'runs'; roots: string[]; runs: RunSeries[]; tables: TableData[]; notes: string[] }
  | { type: 'exported'; file: string };

export type FromDashboard = { type: 'ready' } | { type: 'exportSvg'; name: string; svg: string };

export interface DashboardState {
  /** The folders shown (runs or recipe folders). */
  roots: string[];
  /** The curves' smoothing weight (one of SMOOTHING; 0: raw). */
  smoothing?: number;
}

/** The per-step metrics of figure 12.2, in the dashboard's order. */
export const CURVE_METRICS = ['pass_rate', 'reads', 'tests', 'edits', 'turns', 'reward'] as const;

/**
 * The optimisation diagnostics history.jsonl may hold (a chart each when a run has it): the loss,
 * the PPO ratio's approx KL and clip fraction, the entropy, the gradient norm, invalid calls per
 * turn, and a critic's value loss and explained variance.
 */
export const DIAGNOSTIC_METRICS = [
  'loss',
  'approx_kl',
  'entropy',
  'clip_frac',
  'grad_norm',
  'invalid_per_turn',
  'value_loss',
  'explained_variance',
] as const;

/** Smoothing weights the dashboard offers (an exponential moving average, as TensorBoard's). */
export const SMOOTHING = [0, 0.6, 0.9] as const;

/** A short label of a context policy (`keep_obs=1`). */
export function policyLabel(p: ContextPolicy): string {
  switch (p.kind) {
    case 'full':
      return 'full';
    case 'keepObs':
      return `keep_obs=${p.k}`;
    case 'truncateOldest':
      return `truncate ${p.maxTokens}`;
    case 'summarize':
      return 'summarize';
  }
}

const RequestId = int(0, Number.MAX_SAFE_INTEGER);
const Label = anyText(400);
const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

export const SourceInfoSchema = strict({
  run: v.nullable(anyText(MAX_PATH)),
  dir: v.nullable(anyText(MAX_PATH)),
  model: v.nullable(anyText(MAX_PATH)),
  critic: bool(),
  contextPolicy: ContextPolicySchema,
  retrainUnavailable: v.nullable(anyText(400)),
});

const ToWebviewSchema = v.variant(
  'type',
  [
    v.strictObject({
      type: v.literal('show'),
      episode: TrajectoryJSONSchema,
      title: Label,
      backend: v.optional(Label),
      source: v.optional(SourceInfoSchema),
    }),
    v.strictObject({
      type: v.literal('maskResult'),
      requestId: RequestId,
      result: MaskCheckResultSchema,
      backend: Label,
    }),
    v.strictObject({ type: v.literal('maskError'), requestId: RequestId, message: anyText() }),
    v.strictObject({ type: v.literal('creditResult'), requestId: RequestId, result: CreditResultSchema }),
    v.strictObject({ type: v.literal('rerunResult'), requestId: RequestId, result: RerunResultSchema }),
    v.strictObject({
      type: v.literal('evalResult'),
      requestId: RequestId,
      label: Label,
      result: EvalContextResultSchema,
    }),
    v.strictObject({
      type: v.literal('retrainDone'),
      requestId: RequestId,
      run: Label,
      label: Label,
      steps: int(0, MAX_RETRAIN_STEPS),
      complete: bool(),
    }),
    v.strictObject({
      type: v.literal('showDump'),
      title: Label,
      summary: DumpFileSummarySchema,
      view: DumpViewSchema,
      sample: int(0, 1000),
      samples: int(1, 1000),
    }),
    v.strictObject({ type: v.literal('jobProgress'), requestId: RequestId, message: anyText(10_000) }),
    v.strictObject({
      type: v.literal('jobError'),
      requestId: RequestId,
      op: oneOf(ANALYSIS_OPS),
      message: anyText(),
    }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

const FromWebviewSchema = v.variant(
  'type',
  [
    v.strictObject({ type: v.literal('ready') }),
    v.strictObject({ type: v.literal('maskCheck'), requestId: RequestId, bug: oneOf(MASK_BUGS) }),
    v.strictObject({ type: v.literal('credit'), requestId: RequestId }),
    v.strictObject({
      type: v.literal('rerun'),
      requestId: RequestId,
      policy: ContextPolicySchema,
      n: int(1, MAX_RERUN_EPISODES),
    }),
    v.strictObject({
      type: v.literal('evaluate'),
      requestId: RequestId,
      policies: list(ContextPolicySchema, 1, MAX_EVAL_POLICIES),
      model: oneOf(['run', 'retrained'] as const),
    }),
    v.strictObject({
      type: v.literal('retrain'),
      requestId: RequestId,
      policy: ContextPolicySchema,
      steps: int(1, MAX_RETRAIN_STEPS),
    }),
    v.strictObject({ type: v.literal('cancelJob'), requestId: RequestId, op: oneOf(ANALYSIS_OPS) }),
    v.strictObject({ type: v.literal('openDashboard') }),
    v.strictObject({ type: v.literal('walk'), direction: v.picklist([-1, 1], 'expected -1 or 1') }),
    v.strictObject({ type: v.literal('browse'), query: anyText(2000) }),
    v.strictObject({ type: v.literal('focusTree') }),
    v.strictObject({ type: v.literal('openBeside') }),
    v.strictObject({
      type: v.literal('dumpNav'),
      direction: v.picklist([-1, 1], 'expected -1 or 1'),
      rule: v.nullable(text(40)),
    }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

const InspectorStateSchema = strict({
  episode: TrajectoryJSONSchema,
  title: Label,
  bug: oneOf(MASK_BUGS),
  source: v.optional(SourceInfoSchema),
  policy: v.optional(ContextPolicySchema),
  call: v.optional(v.nullable(int(0, 10_000))),
  pinned: v.optional(strict({ episode: TrajectoryJSONSchema, title: Label })),
});

const NullableNumbers = v.custom<(number | null)[]>(
  (x) => Array.isArray(x) && x.every((n) => n === null || (typeof n === 'number' && Number.isFinite(n))),
  'expected numbers or null',
);

const RunSeriesSchema = v.pipe(
  strict({
    id: anyText(MAX_PATH),
    name: anyText(MAX_PATH),
    group: anyText(MAX_PATH),
    live: bool(),
    steps: v.custom<number[]>(
      (x) => Array.isArray(x) && x.length <= 1_000_000 && x.every((n) => Number.isInteger(n)),
      'expected integers',
    ),
    metrics: v.record(v.string(), NullableNumbers),
    heldout: v.optional(v.nullable(v.record(v.string(), finite()))),
  }),
  v.check(
    (r) => Object.values(r.metrics).every((m) => m.length === r.steps.length),
    'expected one number or null per step in every metric',
  ),
);

const Cell = v.union([v.string(), finite(), v.null()], 'expected a string, a number or null');
const TableSchema = strict({
  title: anyText(1000),
  columns: list(anyText(1000), 0, 200),
  rows: list(list(Cell, 0, 200), 0, 10_000),
  digits: v.optional(list(int(0, 12), 0, 200)),
  spread: v.optional(list(list(v.nullable(finite()), 0, 200), 0, 10_000)),
  source: anyText(MAX_PATH),
});

const ToDashboardSchema = v.variant(
  'type',
  [
    v.strictObject({
      type: v.literal('runs'),
      roots: list(anyText(MAX_PATH), 0, 1000),
      runs: list(RunSeriesSchema, 0, 1000),
      tables: list(TableSchema, 0, 1000),
      notes: list(anyText(10_000), 0, 1000),
    }),
    v.strictObject({ type: v.literal('exported'), file: anyText(MAX_PATH) }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

/** The largest SVG the dashboard may hand to the host for saving. */
export const MAX_SVG_BYTES = 5_000_000;

/**
 * Active content in an SVG: a script or foreign element, an event-handler attribute inside a tag,
 * or a javascript: URL. (Text that merely contains `on...=` is not an attribute.)
 */
export function svgActiveContent(svg: string): string | null {
  if (/<\s*(script|foreignObject|iframe|object|embed)\b/i.test(svg)) return 'a script or foreign element';
  if (/<[^>]*\son[a-z]+\s*=/i.test(svg)) return 'an event-handler attribute';
  if (/(?:href|src)\s*=\s*["']?\s*(?:javascript|data\s*:\s*text\/html)/i.test(svg))
    return 'a javascript: URL';
  return null;
}

const FromDashboardSchema = v.variant(
  'type',
  [
    v.strictObject({ type: v.literal('ready') }),
    v.strictObject({
      type: v.literal('exportSvg'),
      name: v.pipe(
        v.string(),
        v.regex(/^[\w. -]{1,80}$/, 'expected a file name of letters, digits, ".", "_", "-" or spaces'),
      ),
      svg: v.pipe(
        v.string(),
        v.maxLength(MAX_SVG_BYTES, 'expected an <svg> document under 5 MB'),
        v.startsWith('<svg', 'expected an <svg> document'),
        v.check(
          (x) => svgActiveContent(x) === null,
          (i) => `must not carry ${svgActiveContent(String(i.input))}`,
        ),
      ),
    }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

const DashboardStateSchema = strict({
  roots: list(anyText(MAX_PATH), 0, 1000),
  smoothing: v.optional(v.picklist(SMOOTHING, `expected one of ${SMOOTHING.join(', ')}`)),
});

/** Parse a message by its schema, prefixed by its type; never throws. */
function parseMessage<T>(schema: v.GenericSchema, x: unknown): Result<T> {
  if (!isObject(x)) return { ok: false, error: 'message: expected an object' };
  return parse(schema, x, messageName(x)) as Result<T>;
}

/** Check a message arriving in the inspector webview. */
export function parseToWebview(x: unknown): Result<ToWebview> {
  return parseMessage<ToWebview>(ToWebviewSchema, x);
}

/** Check a message arriving in the extension host from the inspector webview. */
export function parseFromWebview(x: unknown): Result<FromWebview> {
  return parseMessage<FromWebview>(FromWebviewSchema, x);
}

/** Check saved webview state (from getState or the serializer); null when unusable. */
export function parseInspectorState(x: unknown): InspectorState | null {
  const r = parse(InspectorStateSchema, x, 'state');
  return r.ok ? (r.value as unknown as InspectorState) : null;
}

/** Check a message arriving in the dashboard webview. */
export function parseToDashboard(x: unknown): Result<ToDashboard> {
  return parseMessage<ToDashboard>(ToDashboardSchema, x);
}

/** Check a message arriving in the extension host from the dashboard webview. */
export function parseFromDashboard(x: unknown): Result<FromDashboard> {
  return parseMessage<FromDashboard>(FromDashboardSchema, x);
}

/** Check saved dashboard state; null when unusable. */
export function parseDashboardState(x: unknown): DashboardState | null {
  const r = parse(DashboardStateSchema, x, 'state');
  return r.ok ? r.value : null;
}

// ---------------------------------------------------------------------------------------------
// The episode table
//   host -> webview   table {title, source, table}   selected {key}
//   webview -> host   ready   open {key, list}   list {keys}
// ---------------------------------------------------------------------------------------------

/** What a table lists: a run's episodes or a dump file's records. */
export interface TableSource {
  kind: 'run' | 'file';
  /** The run folder or the file. */
  id: string;
}

const TableSourceSchema = strict({ kind: oneOf(['run', 'file'] as const), id: anyText(MAX_PATH) });

export type ToTable =
  | {
      type: 'table';
      title: string;
      source: TableSource;
      table: EpisodeTable;
      notes: string[];
      /** A query to apply (an inspector's "this group" or "this task across steps"). */
      query?: string;
    }
  | { type: 'selected'; key: string };

export type FromTable =
  | { type: 'ready' }
  /** Open a row in the inspector; `list` is the filtered, sorted order to walk with next/previous. */
  | { type: 'open'; key: string; list: string[] }
  | { type: 'list'; keys: string[] }
  /** Give the keyboard back to the run explorer (Escape). */
  | { type: 'focusTree' }
  /** Open a second inspector beside this one on the same episode (to compare side by side). */
  | { type: 'openBeside' };

/** What the table keeps across a reload. */
export interface TableState {
  source: TableSource;
  query: string;
  sort: { column: Column; descending: boolean } | null;
  selected: string | null;
}

const Keys = strings(MAX_TABLE_ROWS);

const ToTableSchema = v.variant(
  'type',
  [
    v.strictObject({
      type: v.literal('table'),
      title: Label,
      source: TableSourceSchema,
      table: EpisodeTableSchema,
      notes: list(anyText(10_000), 0, 50),
      query: v.optional(anyText(2000)),
    }),
    v.strictObject({ type: v.literal('selected'), key: anyText(200) }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

const FromTableSchema = v.variant(
  'type',
  [
    v.strictObject({ type: v.literal('ready') }),
    v.strictObject({ type: v.literal('open'), key: anyText(200), list: Keys }),
    v.strictObject({ type: v.literal('list'), keys: Keys }),
    v.strictObject({ type: v.literal('focusTree') }),
    v.strictObject({ type: v.literal('openBeside') }),
  ],
  (i) => `unknown message type ${show(i.input)}`,
);

const TableStateSchema = strict({
  source: TableSourceSchema,
  query: anyText(2000),
  sort: v.nullable(strict({ column: oneOf(COLUMNS), descending: bool() })),
  selected: v.nullable(anyText(200)),
});

/** Check a message arriving in the episode table webview. */
export function parseToTable(x: unknown): Result<ToTable> {
  return parseMessage<ToTable>(ToTableSchema, x);
}

/** Check a message arriving in the host from the episode table webview. */
export function parseFromTable(x: unknown): Result<FromTable> {
  return parseMessage<FromTable>(FromTableSchema, x);
}

/** Check the table's saved state; null when unusable. */
export function parseTableState(x: unknown): TableState | null {
  const r = parse(TableStateSchema, x, 'state');
  return r.ok ? (r.value as TableState) : null;
}
