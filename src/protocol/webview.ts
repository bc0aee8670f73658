/**
 * Messages between the extension host and its webviews (the inspector and the training
 * dashboard), checked on both sides: a message that does not match its type is dropped and
 * logged, never acted on.
 *
 * Inspector:
 *   host -> webview   show {episode, title, backend?, source?}
 *                     maskResult {requestId, result}   maskError {requestId, message}
 *                     creditResult {requestId, result}   rerunResult {requestId, result}
 *                     evalResult {requestId, label, result}   retrainDone {requestId, run, label}
 *                     jobProgress {requestId, message}   jobError {requestId, op, message}
 *   webview -> host   ready   maskCheck {requestId, bug}   credit {requestId}
 *                     rerun {requestId, policy, n}   evaluate {requestId, policies, model}
 *                     retrain {requestId, policy, steps}   openDashboard
 * Dashboard:
 *   host -> webview   runs {roots, runs, tables, notes}   exported {file}
 *   webview -> host   ready   exportSvg {name, svg}
 *
 * The inspector's saved state (`getState`/`setState`, and what the panel serializer restores
 * after a window reload) is an `InspectorState`; the dashboard's is a `DashboardState`.
 */
import { type ContextPolicy, parseContextPolicy } from '../core/context/policy.js';
import { type TrajectoryJSON, validateTrajectoryJSON } from '../core/gym/trajectory-json.js';
import { isMaskBug, type MaskBug } from '../core/rl/mask-bugs.js';
import type { MaskCheckResult } from '../core/rl/mask-check.js';
import {
  type CreditResult,
  checkCreditResult,
  checkEvalContextResult,
  checkMaskCheckResult,
  checkRerunResult,
  type EvalContextResult,
  type Parsed,
  type RerunResult,
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
export const ANALYSIS_OPS: readonly AnalysisOp[] = ['credit', 'rerun', 'evaluate', 'retrain'];

export type ToWebview =
  | { type: 'show'; episode: TrajectoryJSON; title: string; backend?: string; source?: SourceInfo }
  | { type: 'maskResult'; requestId: number; result: MaskCheckResult; backend: string }
  | { type: 'maskError'; requestId: number; message: string }
  | { type: 'creditResult'; requestId: number; result: CreditResult }
  | { type: 'rerunResult'; requestId: number; result: RerunResult }
  | { type: 'evalResult'; requestId: number; label: string; result: EvalContextResult }
  | { type: 'retrainDone'; requestId: number; run: string; label: string }
  | { type: 'jobProgress'; requestId: number; message: string }
  | { type: 'jobError'; requestId: number; op: AnalysisOp; message: string };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'maskCheck'; requestId: number; bug: MaskBug }
  | { type: 'credit'; requestId: number }
  | { type: 'rerun'; requestId: number; policy: ContextPolicy; n: number }
  | { type: 'evaluate'; requestId: number; policies: ContextPolicy[]; model: 'run' | 'retrained' }
  | { type: 'retrain'; requestId: number; policy: ContextPolicy; steps: number }
  | { type: 'openDashboard' };

export interface InspectorState {
  episode: TrajectoryJSON;
  title: string;
  bug: MaskBug;
  source?: SourceInfo;
  /** The context policy in the editor. */
  policy?: ContextPolicy;
  /** The call whose view the strip shows (null: the whole episode). */
  call?: number | null;
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
}

/** The per-step metrics of figure 12.2, in the dashboard's order. */
export const CURVE_METRICS = ['pass_rate', 'reads', 'tests', 'edits', 'turns', 'reward'] as const;

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

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isReq = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;
const isStr = (x: unknown): x is string => typeof x === 'string';

function attempt<T>(f: () => T | string): Parsed<T> {
  try {
    const v = f();
    return typeof v === 'string' ? { ok: false, error: v } : { ok: true, value: v };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** Check a SourceInfo; throws naming the field. */
function checkSource(x: unknown): SourceInfo {
  if (!isObj(x)) throw new Error('show.source must be an object');
  if (x.run !== null && !isStr(x.run)) throw new Error('show.source.run');
  if (x.dir !== null && !isStr(x.dir)) throw new Error('show.source.dir');
  if (x.model !== null && !isStr(x.model)) throw new Error('show.source.model');
  if (typeof x.critic !== 'boolean') throw new Error('show.source.critic');
  x.contextPolicy = parseContextPolicy(x.contextPolicy, 'show.source.contextPolicy');
  if (x.retrainUnavailable !== null && !isStr(x.retrainUnavailable))
    throw new Error('show.source.retrainUnavailable');
  return x as unknown as SourceInfo;
}

/** Check a message arriving in the inspector webview. */
export function parseToWebview(x: unknown): Parsed<ToWebview> {
  return attempt<ToWebview>(() => {
    if (!isObj(x)) return 'message must be an object';
    if (x.type !== 'show' && !isReq(x.requestId)) return `${String(x.type)}.requestId`;
    switch (x.type) {
      case 'show':
        validateTrajectoryJSON(x.episode);
        if (typeof x.title !== 'string') return 'show.title must be a string';
        if (x.backend !== undefined && typeof x.backend !== 'string') return 'show.backend';
        if (x.source !== undefined) checkSource(x.source);
        break;
      case 'maskResult':
        if (typeof x.backend !== 'string') return 'maskResult.backend';
        checkMaskCheckResult(x.result);
        break;
      case 'maskError':
        if (typeof x.message !== 'string') return 'maskError fields';
        break;
      case 'creditResult':
        checkCreditResult(x.result);
        break;
      case 'rerunResult':
        checkRerunResult(x.result);
        break;
      case 'evalResult':
        if (!isStr(x.label)) return 'evalResult.label';
        checkEvalContextResult(x.result);
        break;
      case 'retrainDone':
        if (!isStr(x.run) || !isStr(x.label)) return 'retrainDone fields';
        break;
      case 'jobProgress':
        if (!isStr(x.message)) return 'jobProgress.message';
        break;
      case 'jobError':
        if (!(ANALYSIS_OPS as readonly unknown[]).includes(x.op)) return 'jobError.op';
        if (!isStr(x.message)) return 'jobError.message';
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as ToWebview;
  });
}

/** Check a message arriving in the extension host from the inspector webview. */
export function parseFromWebview(x: unknown): Parsed<FromWebview> {
  return attempt<FromWebview>(() => {
    if (!isObj(x)) return 'message must be an object';
    const needReq = !['ready', 'openDashboard'].includes(x.type as string);
    if (needReq && !isReq(x.requestId)) return `${String(x.type)}.requestId`;
    switch (x.type) {
      case 'ready':
      case 'openDashboard':
      case 'credit':
        break;
      case 'maskCheck':
        if (!isMaskBug(x.bug)) return `maskCheck.bug ${JSON.stringify(x.bug)} is not a known mask bug`;
        break;
      case 'rerun':
        x.policy = parseContextPolicy(x.policy, 'rerun.policy');
        if (!Number.isInteger(x.n) || (x.n as number) < 1 || (x.n as number) > 64)
          return 'rerun.n must be 1 to 64';
        break;
      case 'evaluate':
        if (!Array.isArray(x.policies) || x.policies.length < 1 || x.policies.length > 4)
          return 'evaluate.policies must be 1 to 4 policies';
        x.policies = x.policies.map((p, i) => parseContextPolicy(p, `evaluate.policies[${i}]`));
        if (x.model !== 'run' && x.model !== 'retrained')
          return 'evaluate.model must be "run" or "retrained"';
        break;
      case 'retrain':
        x.policy = parseContextPolicy(x.policy, 'retrain.policy');
        if (!Number.isInteger(x.steps) || (x.steps as number) < 1 || (x.steps as number) > 1000)
          return 'retrain.steps must be 1 to 1000';
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as FromWebview;
  });
}

/** Check saved webview state (from getState or the serializer); null when unusable. */
export function parseInspectorState(x: unknown): InspectorState | null {
  if (!isObj(x) || typeof x.title !== 'string' || !isMaskBug(x.bug)) return null;
  try {
    validateTrajectoryJSON(x.episode);
    if (x.source !== undefined) checkSource(x.source);
    if (x.policy !== undefined) x.policy = parseContextPolicy(x.policy);
  } catch {
    return null;
  }
  if (x.call !== undefined && x.call !== null && !(Number.isInteger(x.call) && (x.call as number) >= 0))
    return null;
  return x as unknown as InspectorState;
}

const isNullableNum = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

function checkRunSeries(r: unknown, i: number): void {
  if (!isObj(r) || !isStr(r.id) || !isStr(r.name) || !isStr(r.group) || typeof r.live !== 'boolean')
    throw new Error(`runs.runs[${i}] needs id, name, group, live`);
  if (!Array.isArray(r.steps) || !r.steps.every((s) => Number.isInteger(s)))
    throw new Error(`runs.runs[${i}].steps must be integers`);
  if (!isObj(r.metrics)) throw new Error(`runs.runs[${i}].metrics`);
  for (const [k, v] of Object.entries(r.metrics))
    if (!Array.isArray(v) || v.length !== r.steps.length || !v.every(isNullableNum))
      throw new Error(`runs.runs[${i}].metrics.${k} must have one number or null per step`);
}

function checkTable(t: unknown, i: number): void {
  if (!isObj(t) || !isStr(t.title) || !isStr(t.source))
    throw new Error(`runs.tables[${i}] needs title, source`);
  if (!Array.isArray(t.columns) || !t.columns.every(isStr)) throw new Error(`runs.tables[${i}].columns`);
  if (
    !Array.isArray(t.rows) ||
    !t.rows.every((r) => Array.isArray(r) && r.every((c) => isStr(c) || typeof c === 'number' || c === null))
  )
    throw new Error(`runs.tables[${i}].rows`);
}

/** Check a message arriving in the dashboard webview. */
export function parseToDashboard(x: unknown): Parsed<ToDashboard> {
  return attempt<ToDashboard>(() => {
    if (!isObj(x)) return 'message must be an object';
    switch (x.type) {
      case 'runs':
        if (!Array.isArray(x.runs)) return 'runs.runs must be an array';
        x.runs.forEach(checkRunSeries);
        if (!Array.isArray(x.tables)) return 'runs.tables must be an array';
        x.tables.forEach(checkTable);
        if (!Array.isArray(x.notes) || !x.notes.every(isStr)) return 'runs.notes';
        if (!Array.isArray(x.roots) || !x.roots.every(isStr)) return 'runs.roots';
        break;
      case 'exported':
        if (!isStr(x.file)) return 'exported.file';
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as ToDashboard;
  });
}

/** The largest SVG the dashboard may hand to the host for saving. */
export const MAX_SVG_BYTES = 5_000_000;

/** Check a message arriving in the extension host from the dashboard webview. */
export function parseFromDashboard(x: unknown): Parsed<FromDashboard> {
  return attempt<FromDashboard>(() => {
    if (!isObj(x)) return 'message must be an object';
    switch (x.type) {
      case 'ready':
        break;
      case 'exportSvg':
        if (!isStr(x.name) || !/^[\w. -]{1,80}$/.test(x.name)) return 'exportSvg.name';
        if (!isStr(x.svg) || !x.svg.startsWith('<svg') || x.svg.length > MAX_SVG_BYTES)
          return 'exportSvg.svg must be an <svg> document under 5 MB';
        if (/<script|\bon\w+\s*=/i.test(x.svg)) return 'exportSvg.svg must not carry scripts';
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as FromDashboard;
  });
}

/** Check saved dashboard state; null when unusable. */
export function parseDashboardState(x: unknown): DashboardState | null {
  if (!isObj(x) || !Array.isArray(x.roots) || !x.roots.every(isStr)) return null;
  return x as unknown as DashboardState;
}
