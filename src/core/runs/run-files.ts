/**
 * Run files: a run is a folder of documented, append-only files that survive a crash.
 *
 *   config.json      what was run: {"format": 1, "kind", "name", "created", "config", "backend"?, ...}
 *   history.jsonl    one line per completed training step (appended and flushed as the step ends)
 *   episodes.jsonl   trajectory JSON lines (src/core/gym/trajectory-json.ts), each with its "step"
 *   checkpoints/     model checkpoints (step-NNNN/ and latest/)
 *   summary.json     written once at the end (evaluation tables, timings)
 *
 * A run killed mid-step reopens with every completed step intact: a truncated last line is
 * reported as a warning and skipped, not fatal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type TrajectoryJSON, validateTrajectoryJSON } from '../gym/trajectory-json.js';

export const RUN_FORMAT = 1;

export interface RunMeta {
  format: number;
  kind: 'train' | 'sample' | 'recipe' | 'eval';
  name: string;
  created: string;
  /** The validated config the run was made with (an RLConfig for training). */
  config: Record<string, unknown>;
  /** TF.js backend that ran it. */
  backend?: string;
  /** What the run started from (a checkpoint path or `base`). */
  from?: string;
  /** Recipe name and arm, for recipe runs. */
  recipe?: string;
  arm?: string;
  seed?: number;
}

/** One line of history.jsonl: the step index, how many episodes it sampled, its statistics. */
export interface HistoryEntry {
  step: number;
  episodes: number;
  [stat: string]: number | string | boolean | null;
}

export interface RunData {
  dir: string;
  meta: RunMeta;
  history: HistoryEntry[];
  summary: Record<string, unknown> | null;
  /** Problems found while reading (a truncated last line, a corrupt line), each with its place. */
  warnings: string[];
}

function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  fs.renameSync(tmp, file);
}

/** Append lines and flush them to disk before returning. */
function appendLines(file: string, values: readonly unknown[]): void {
  if (values.length === 0) return;
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, values.map((v) => `${JSON.stringify(v)}\n`).join(''));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Create a run folder and its config.json. Refuses to overwrite an existing run. */
export function createRun(
  dir: string,
  meta: Omit<RunMeta, 'format' | 'created'> & { created?: string },
): RunMeta {
  if (fs.existsSync(path.join(dir, 'config.json')))
    throw new Error(`${dir} already holds a run (config.json exists): pick another name or resume it`);
  fs.mkdirSync(dir, { recursive: true });
  const full: RunMeta = { format: RUN_FORMAT, created: meta.created ?? new Date().toISOString(), ...meta };
  writeJsonAtomic(path.join(dir, 'config.json'), full);
  return full;
}

export function appendHistory(dir: string, entry: HistoryEntry): void {
  appendLines(path.join(dir, 'history.jsonl'), [entry]);
}

export function appendEpisodes(dir: string, episodes: readonly TrajectoryJSON[]): void {
  appendLines(path.join(dir, 'episodes.jsonl'), episodes);
}

export function writeSummary(dir: string, summary: Record<string, unknown>): void {
  writeJsonAtomic(path.join(dir, 'summary.json'), summary);
}

/**
 * Parse a JSON-lines file. A last line without its newline that does not parse is a crash
 * mid-write: reported and skipped. A corrupt line elsewhere is reported and skipped too.
 */
export function readJsonl<T>(file: string, check: (x: unknown) => T, warnings: string[]): T[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const out: T[] = [];
  const name = path.basename(file);
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const last = i === lines.length - 1;
    try {
      out.push(check(JSON.parse(line)));
    } catch (e) {
      warnings.push(
        last
          ? `${name}: the last line (${i + 1}) is incomplete (the run stopped mid-write); skipped`
          : `${name}: line ${i + 1} is corrupt (${(e as Error).message}); skipped`,
      );
    }
  });
  return out;
}

function checkHistory(x: unknown): HistoryEntry {
  const o = x as HistoryEntry;
  if (typeof o !== 'object' || o === null || typeof o.step !== 'number' || typeof o.episodes !== 'number')
    throw new Error('a history line needs "step" and "episodes"');
  return o;
}

export function readMeta(dir: string): RunMeta {
  const file = path.join(dir, 'config.json');
  if (!fs.existsSync(file)) throw new Error(`${dir} is not a run: it has no config.json`);
  let meta: RunMeta;
  try {
    meta = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}): the run cannot be opened`);
  }
  if (meta.format !== RUN_FORMAT)
    throw new Error(`${file} has run format ${meta.format}; this version reads format ${RUN_FORMAT}`);
  return meta;
}

/** Read a run's config, history and summary (episodes are read separately: they can be large). */
export function readRun(dir: string): RunData {
  const warnings: string[] = [];
  const meta = readMeta(dir);
  const history = readJsonl(path.join(dir, 'history.jsonl'), checkHistory, warnings);
  // Steps must be 0, 1, 2, ... : a repeated step (a resumed run that re-ran it) keeps the later one.
  const byStep = new Map<number, HistoryEntry>();
  for (const h of history) byStep.set(h.step, h);
  const ordered = [...byStep.values()].sort((a, b) => a.step - b.step);
  let summary: Record<string, unknown> | null = null;
  const sfile = path.join(dir, 'summary.json');
  if (fs.existsSync(sfile)) {
    try {
      summary = JSON.parse(fs.readFileSync(sfile, 'utf8'));
    } catch (e) {
      warnings.push(`summary.json is not valid JSON (${(e as Error).message}); ignored`);
    }
  }
  return { dir, meta, history: ordered, summary, warnings };
}

/** Read a run's episodes, optionally only those of some steps. */
export function readEpisodes(
  dir: string,
  opts: { step?: number; warnings?: string[] } = {},
): TrajectoryJSON[] {
  const warnings = opts.warnings ?? [];
  const lines = readJsonl(path.join(dir, 'episodes.jsonl'), validateTrajectoryJSON, warnings);
  // A step re-run after a crash (a resumed run) appends its episodes again: the later copy wins.
  const byKey = new Map<string, TrajectoryJSON>();
  lines.forEach((e, i) => {
    const key = e.step !== undefined && e.index !== undefined ? `${e.step}:${e.index}` : `line ${i}`;
    byKey.delete(key);
    byKey.set(key, e);
  });
  const all = [...byKey.values()].sort(
    (a, b) => (a.step ?? 0) - (b.step ?? 0) || (a.index ?? 0) - (b.index ?? 0),
  );
  return opts.step === undefined ? all : all.filter((e) => e.step === opts.step);
}

/** The run folders directly under `root` (folders with a config.json), newest first. */
export function listRuns(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, d.name, 'config.json')))
    .map((d) => path.join(root, d.name))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
}

/** The number of the last completed step (-1 when none), from history.jsonl. */
export function lastCompletedStep(dir: string): number {
  const { history } = readRun(dir);
  return history.length ? history[history.length - 1].step : -1;
}
