/**
 * Run folders: the layout a trainer writes its steps in, the steps found there, and when a step is
 * complete. A step still being written is never complete.
 *
 * Layouts (`detectRunLayout`, in this order of preference; the others found are listed too):
 * - `prime-rl-export`: `token_exports/step_{N}/rank_{R}.jsonl` (or the `token_exports` folder
 *   itself); complete when the step folder holds the empty `STABLE` file prime-rl writes once every
 *   rank has flushed.
 * - `prime-rl-rollouts`: `rollouts/step_{N}/…/traces.jsonl` (or `traces/step_{N}/…`, or the folder of
 *   step folders itself); an `effective/traces.jsonl` beside an `all/traces.jsonl` is left out (it
 *   repeats a subset). The writer appends episodes as they arrive, so a step is complete when its
 *   files are quiet and a later step has started, or when they have been quiet for `appendQuietMs`.
 * - `slime`: `rollout_data/{id}.pt` and `train_data/{id}*.pt`; the id is the step.
 * - `skyrl`: SkyRL's export folder, `dumped_data/global_step_{N}_training_input.pkl` under it (the
 *   folder `dumped_data` itself is `flat`); steps by `stepOfName`, as `flat`.
 * - `nemo-rl`: `train_data_step{N}.jsonl`.
 * - `harbor`: a Harbor job folder, `{trial}/agent/trajectory.json` for each trial; the job is one
 *   step, 0, whose files are its trials' trajectories (a trial without one yet is not listed).
 * - `skyrl-capture`: a skyrl-capture record folder (`manifest.json` beside `committed/`), its
 *   committed trajectory records `committed/<xx>/<id>.json.zst` grouped into steps by the `step`
 *   (else the `step-<N>` label, else 0) of the `<id>.head.json` beside each; a record is listed once
 *   its header is there, as skyrl-capture lists it. A manifest of another `record_version` than 5 is
 *   an error saying so.
 * - `flat`: any dump files (`.jsonl`, `.pkl`, `.pt`) with a step number in the name (`stepOfName`);
 *   several files with one number make one step.
 * Without a marker, a step is complete when every file of it is quiet: not empty, and its size and
 * modification time unchanged across two looks at least `quietMs` apart (a modification time older
 * than `quietMs + mtimeSlackMs` counts as such a look, so a finished run needs no wait).
 *
 * File system access goes through `RunFs` (the node one by default) and time through `now`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fail, ok, type Result } from '../../schema.js';

export const RUN_LAYOUTS = [
  'prime-rl-export',
  'prime-rl-rollouts',
  'slime',
  'skyrl',
  'nemo-rl',
  'harbor',
  'skyrl-capture',
  'flat',
] as const;
export type RunLayoutKind = (typeof RUN_LAYOUTS)[number];

/** A run folder's layout: its kind and the folder its steps are under. */
export interface RunLayout {
  kind: RunLayoutKind;
  /** The folder that holds the step folders or step files. */
  root: string;
  /** Other layouts found in the same folder (a prime-rl output folder has exports and rollouts). */
  others: { kind: RunLayoutKind; root: string }[];
}

/** One step of a run. */
export interface RunStep {
  step: number;
  /** The step's folder (prime-rl), its one file, or the run folder when several loose files make it. */
  path: string;
  /** The step's data files, sorted (ranks by number). */
  files: string[];
  /** True once the step is complete by its layout's rule; never true for a step still being written. */
  complete: boolean;
  /** Why an incomplete step is not complete: no marker yet, or files still changing (or empty). */
  waiting?: 'marker' | 'quiet';
}

/**
 * The files of a step whose samples its figures count (`files` ⊇ result, same order): all of them,
 * except for slime's `--dump-details`, where `rollout_data/{id}.pt` and `train_data/{id}*.pt` hold
 * the same samples (the train dump with the trainer's log-probs and advantages added): when a step
 * has both, its train dumps only. Each file stays its own entry everywhere else.
 */
export function summaryFilesOf(files: readonly string[]): string[] {
  const under = (f: string, dir: string) => path.basename(path.dirname(f)) === dir;
  const train = files.filter((f) => under(f, 'train_data'));
  return train.length && files.some((f) => under(f, 'rollout_data'))
    ? files.filter((f) => !under(f, 'rollout_data'))
    : [...files];
}

/** A file's size and modification time. */
export interface FileLook {
  size: number;
  mtimeMs: number;
}

/** The file system as the run folder reader sees it. */
export interface RunFs {
  /** A folder's entries, sorted by name; [] when it is missing or cannot be read. */
  list(dir: string): Promise<{ name: string; dir: boolean }[]>;
  /** A file's size and modification time; undefined when it is missing or not a file. */
  look(file: string): Promise<FileLook | undefined>;
  /** Whether a path is a folder. */
  isFolder(dir: string): Promise<boolean>;
  /** A small file's text (a header, a manifest); undefined when it is missing or cannot be read. */
  read?(file: string): Promise<string | undefined>;
}

/** The node file system. */
export const nodeRunFs: RunFs = {
  async list(dir) {
    try {
      const entries = await fs.promises.readdir(dir, { withFileTypes: true });
      return entries
        .map((e) => ({ name: e.name, dir: e.isDirectory() }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      return [];
    }
  },
  async look(file) {
    try {
      const s = await fs.promises.stat(file);
      return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : undefined;
    } catch {
      return undefined;
    }
  },
  async isFolder(dir) {
    return (await fs.promises.stat(dir).catch(() => undefined))?.isDirectory() ?? false;
  },
  async read(file) {
    try {
      const st = await fs.promises.stat(file);
      return st.isFile() && st.size <= 1 << 20 ? await fs.promises.readFile(file, 'utf8') : undefined;
    } catch {
      return undefined;
    }
  },
};

export interface RunWatchOptions {
  fs?: RunFs;
  /** The clock, in ms (default Date.now). */
  now?: () => number;
  /** How long a file must stay unchanged to count as written (default 2000 ms). */
  quietMs?: number;
  /** For appended layouts (prime-rl rollouts): how long the last step must stay unchanged (default 60000 ms). */
  appendQuietMs?: number;
  /** How far a file's modification time may lag the write (coarse clocks; default 2000 ms). */
  mtimeSlackMs?: number;
}

export const RUN_WATCH_DEFAULTS = { quietMs: 2000, appendQuietMs: 60_000, mtimeSlackMs: 2000 } as const;

const DUMP_EXT = /\.(jsonl|pkl|pt)$/i;
const STEP_DIR = /^step_(\d+)$/;
const RANK_FILE = /^rank_(\d+)\.jsonl$/;
const NEMO_FILE = /^train_data_step(\d+)\.jsonl$/;
const SLIME_DIRS = ['rollout_data', 'train_data'];
/** SkyRL's `dump_data`: `{export_path}/dumped_data/` (NovaSky-AI/SkyRL @ a9564572, skyrl/train/trainer.py). */
const SKYRL_DIR = 'dumped_data';
/** Where a Harbor trial's agent writes its ATIF trajectory, under the trial folder (TrialPaths.agent_dir). */
const HARBOR_TRAJECTORY = ['agent', 'trajectory.json'] as const;
/**
 * skyrl-capture's record folder (persistence/layout.py, NovaSky-AI/SkyRL skyrl-capture/ @ 5a91f21):
 * `MANIFEST`, `COMMITTED_DIR`, `COMMITTED_SUFFIX`, `HEADER_SUFFIX`, and the record format it
 * reads (`RECORD_FORMAT_VERSION`, version.py; `check_compatible` refuses any other).
 */
const CAPTURE = {
  manifest: 'manifest.json',
  committed: 'committed',
  record: '.json.zst',
  header: '.head.json',
  version: 5,
} as const;

/**
 * The step number in a dump file's name, or null: the number after `step` (`_` or `-` between
 * allowed, any case), else a leading number (`12.pt`, `12_rank0.pt`), else the only number in the
 * name without its extension (`rollout_12.jsonl`).
 */
export function stepOfName(name: string): number | null {
  const stem = name.replace(DUMP_EXT, '');
  const m = /step[_-]?(\d+)/i.exec(stem) ?? /^(\d+)/.exec(stem);
  if (m) return Number(m[1]);
  const runs = stem.match(/\d+/g);
  return runs && runs.length === 1 ? Number(runs[0]) : null;
}

/** Numbered entries sorted by number: `[{n, name}]` for names matching `re` (group 1 the number). */
function numbered(names: readonly string[], re: RegExp): { n: number; name: string }[] {
  const out: { n: number; name: string }[] = [];
  for (const name of names) {
    const m = re.exec(name);
    if (m) out.push({ n: Number(m[1]), name });
  }
  return out.sort((a, b) => a.n - b.n || (a.name < b.name ? -1 : 1));
}

/** The `traces.jsonl` files under a prime-rl step folder (depth ≤ 3), without `effective` copies of `all`. */
async function tracesUnder(dir: string, rfs: RunFs, depth = 3): Promise<string[]> {
  const entries = await rfs.list(dir);
  const out: string[] = [];
  const names = new Set(entries.map((e) => e.name));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (!e.dir && e.name === 'traces.jsonl') out.push(p);
    else if (e.dir && depth > 0 && !(e.name === 'effective' && names.has('all')))
      out.push(...(await tracesUnder(p, rfs, depth - 1)));
  }
  return out;
}

/** Whether a folder holds dump files with a step number in their names (`flat`'s files). */
async function hasStepFiles(dir: string, rfs: RunFs): Promise<boolean> {
  return (await rfs.list(dir)).some((e) => !e.dir && DUMP_EXT.test(e.name) && stepOfName(e.name) !== null);
}

/**
 * The trajectories of a Harbor job folder's trials, `{trial}/agent/trajectory.json`, sorted by
 * trial (`first`: stop at the first found, for detection).
 */
async function harborTrajectories(dir: string, rfs: RunFs, first = false): Promise<string[]> {
  const out: string[] = [];
  for (const e of await rfs.list(dir)) {
    if (!e.dir) continue;
    const file = path.join(dir, e.name, ...HARBOR_TRAJECTORY);
    if (!(await rfs.look(file))) continue;
    out.push(file);
    if (first) break;
  }
  return out;
}

/**
 * The committed records of a skyrl-capture record folder that have their header, sorted by shard
 * and name, each with its header's path (temporary files, named `.<name>.<pid>.<hex>.tmp` by the
 * writer, and other dotfiles left out).
 */
async function captureRecords(dir: string, rfs: RunFs): Promise<{ file: string; head: string }[]> {
  const out: { file: string; head: string }[] = [];
  const committed = path.join(dir, CAPTURE.committed);
  for (const shard of await rfs.list(committed)) {
    if (!shard.dir || shard.name.startsWith('.')) continue;
    const entries = await rfs.list(path.join(committed, shard.name));
    const names = new Set(entries.filter((e) => !e.dir).map((e) => e.name));
    for (const e of entries) {
      if (e.dir || e.name.startsWith('.') || !e.name.endsWith(CAPTURE.record)) continue;
      const head = `${e.name.slice(0, -CAPTURE.record.length)}${CAPTURE.header}`;
      if (!names.has(head)) continue;
      out.push({
        file: path.join(committed, shard.name, e.name),
        head: path.join(committed, shard.name, head),
      });
    }
  }
  return out;
}

/** Steps read from headers, by header path (a trajectory's step is fixed when it is created). */
const headerSteps = new Map<string, number>();

/** The step of a committed record from its header: `step`, else a `step-<N>` label, else 0. */
async function captureStep(head: string, rfs: RunFs): Promise<number> {
  const known = headerSteps.get(head);
  if (known !== undefined) return known;
  const text = await rfs.read?.(head);
  if (text === undefined) return 0;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 0;
  }
  const o = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
  const labels = Array.isArray(o.labels) ? o.labels : [];
  const label = labels
    .map((l) => (typeof l === 'string' ? /^step-(\d{1,9})$/.exec(l)?.[1] : undefined))
    .find((x) => x);
  const step =
    Number.isInteger(o.step) && (o.step as number) >= 0 ? (o.step as number) : label ? Number(label) : 0;
  if (headerSteps.size > 200_000) headerSteps.clear();
  headerSteps.set(head, step);
  return step;
}

/**
 * Why a skyrl-capture record folder cannot be read, or undefined: its manifest is not JSON, or its
 * `record_version` is not the one read (one line, with what to do). Undefined too when the file
 * system cannot read files.
 */
async function captureManifestWhy(dir: string, rfs: RunFs): Promise<string | undefined> {
  const file = path.join(dir, CAPTURE.manifest);
  const text = await rfs.read?.(file);
  if (text === undefined) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `${file}: not JSON (${(e as Error).message.split('\n')[0]}): a skyrl-capture record folder's manifest.json is its format's JSON; check the folder is a whole copy`;
  }
  const version = (doc as { record_version?: unknown } | null)?.record_version;
  if (version === CAPTURE.version) return undefined;
  return `${file}: a skyrl-capture record of format ${JSON.stringify(version ?? null)} (record_version); Episode Lab reads format ${CAPTURE.version}: export it with the skyrl-capture that wrote it (\`skyrl-capture export --record ${dir} --format token-samples --output FILE.jsonl\`) and open FILE.jsonl`;
}

/** What a folder of `step_{N}` folders holds: rank files (exports), traces (rollouts), or nothing yet. */
async function stepFolderKind(root: string, rfs: RunFs): Promise<RunLayoutKind | null> {
  const steps = numbered(
    (await rfs.list(root)).filter((e) => e.dir).map((e) => e.name),
    STEP_DIR,
  );
  for (const s of steps) {
    const inside = await rfs.list(path.join(root, s.name));
    if (inside.some((e) => !e.dir && (RANK_FILE.test(e.name) || e.name === 'STABLE')))
      return 'prime-rl-export';
    if ((await tracesUnder(path.join(root, s.name), rfs)).length) return 'prime-rl-rollouts';
  }
  return null;
}

/** Every layout found in `dir`, most preferred first ([]: none yet). */
async function layoutsIn(dir: string, rfs: RunFs): Promise<{ kind: RunLayoutKind; root: string }[]> {
  const entries = await rfs.list(dir);
  const dirs = new Set(entries.filter((e) => e.dir).map((e) => e.name));
  const files = entries.filter((e) => !e.dir).map((e) => e.name);
  const found: { kind: RunLayoutKind; root: string }[] = [];
  const add = (kind: RunLayoutKind, root: string) => {
    if (!found.some((f) => f.kind === kind)) found.push({ kind, root });
  };
  if (dirs.has('token_exports')) {
    const root = path.join(dir, 'token_exports');
    if ((await stepFolderKind(root, rfs)) === 'prime-rl-export') add('prime-rl-export', root);
  }
  const own = await stepFolderKind(dir, rfs);
  if (own) add(own, dir);
  for (const sub of ['rollouts', 'traces']) {
    const root = path.join(dir, sub);
    if (dirs.has(sub) && (await stepFolderKind(root, rfs)) === 'prime-rl-rollouts')
      add('prime-rl-rollouts', root);
  }
  for (const sub of SLIME_DIRS)
    if (
      dirs.has(sub) &&
      (await rfs.list(path.join(dir, sub))).some((e) => !e.dir && /^\d+.*\.pt$/.test(e.name))
    )
      add('slime', dir);
  if (dirs.has(SKYRL_DIR) && (await hasStepFiles(path.join(dir, SKYRL_DIR), rfs)))
    add('skyrl', path.join(dir, SKYRL_DIR));
  if ((await harborTrajectories(dir, rfs, true)).length) add('harbor', dir);
  if (files.includes(CAPTURE.manifest) && dirs.has(CAPTURE.committed)) add('skyrl-capture', dir);
  if (files.some((f) => NEMO_FILE.test(f))) add('nemo-rl', dir);
  else if (files.some((f) => DUMP_EXT.test(f) && stepOfName(f) !== null)) add('flat', dir);
  const rank = (k: RunLayoutKind) => RUN_LAYOUTS.indexOf(k);
  return found.sort((a, b) => rank(a.kind) - rank(b.kind));
}

/** The layout of a run folder: `Result<RunLayout | null>` (null: no step yet); an error when it is not a folder. */
export async function detectRunLayout(
  dir: string,
  rfs: RunFs = nodeRunFs,
): Promise<Result<RunLayout | null>> {
  if (!(await rfs.isFolder(dir))) return fail(`${dir}: not a folder`);
  const found = await layoutsIn(dir, rfs);
  if (!found.length) return ok(null);
  if (found[0].kind === 'skyrl-capture') {
    const why = await captureManifestWhy(dir, rfs);
    if (why) return fail(why);
  }
  return ok({ ...found[0], others: found.slice(1) });
}

/** The steps of a layout as they are on disk now (files not yet looked at): `{step, path, files}`, by step. */
export async function stepEntries(
  layout: RunLayout,
  rfs: RunFs = nodeRunFs,
  skip: ReadonlySet<number> = new Set(),
): Promise<{ step: number; path: string; files: string[]; marker: boolean }[]> {
  const { kind, root } = layout;
  const entries = await rfs.list(root);
  if (kind === 'prime-rl-export' || kind === 'prime-rl-rollouts') {
    const out = [];
    for (const s of numbered(
      entries.filter((e) => e.dir).map((e) => e.name),
      STEP_DIR,
    )) {
      const p = path.join(root, s.name);
      if (skip.has(s.n)) {
        out.push({ step: s.n, path: p, files: [], marker: true });
        continue;
      }
      if (kind === 'prime-rl-rollouts') {
        out.push({ step: s.n, path: p, files: (await tracesUnder(p, rfs)).sort(), marker: false });
        continue;
      }
      const inside = await rfs.list(p);
      const ranks = numbered(
        inside.filter((e) => !e.dir).map((e) => e.name),
        RANK_FILE,
      );
      out.push({
        step: s.n,
        path: p,
        files: ranks.map((r) => path.join(p, r.name)),
        marker: inside.some((e) => !e.dir && e.name === 'STABLE'),
      });
    }
    return out;
  }
  if (kind === 'harbor') {
    const files = await harborTrajectories(root, rfs);
    return files.length ? [{ step: 0, path: root, files, marker: false }] : [];
  }
  const loose: { step: number; file: string }[] = [];
  if (kind === 'skyrl-capture') {
    for (const r of await captureRecords(root, rfs))
      loose.push({ step: await captureStep(r.head, rfs), file: r.file });
  } else if (kind === 'slime') {
    for (const sub of SLIME_DIRS)
      for (const e of await rfs.list(path.join(root, sub)))
        if (!e.dir && /^\d+.*\.pt$/.test(e.name))
          loose.push({ step: Number(/^\d+/.exec(e.name)?.[0]), file: path.join(root, sub, e.name) });
  } else {
    for (const e of entries) {
      if (e.dir) continue;
      const step =
        kind === 'nemo-rl'
          ? (numbered([e.name], NEMO_FILE)[0]?.n ?? null)
          : DUMP_EXT.test(e.name)
            ? stepOfName(e.name)
            : null;
      if (step !== null) loose.push({ step, file: path.join(root, e.name) });
    }
  }
  const bySteps = new Map<number, string[]>();
  for (const x of loose) bySteps.set(x.step, [...(bySteps.get(x.step) ?? []), x.file]);
  return [...bySteps.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([step, files]) => ({
      step,
      path: files.length === 1 ? files[0] : root,
      files: files.sort(),
      marker: false,
    }));
}

/** What was last seen of a file: its look and when that look was first seen. */
export interface Seen extends FileLook {
  since: number;
}

/** The new record of a file after a look at time `now` (pure): the same `since` while nothing changed. */
export function observe(prev: Seen | undefined, look: FileLook, now: number): Seen {
  return prev && prev.size === look.size && prev.mtimeMs === look.mtimeMs ? prev : { ...look, since: now };
}

/** How long a file has been unchanged at `now` (pure): since the first look that saw it so, or its mtime plus slack. */
export function quietFor(seen: Seen, now: number, mtimeSlackMs: number): number {
  return now - Math.min(seen.since, seen.mtimeMs + mtimeSlackMs);
}

/**
 * Watches a run folder: `look()` lists its steps with their completion, remembering what it saw so
 * that completion by quietness can be judged across looks. A step found complete stays complete
 * and is not looked at again.
 */
export class RunWatcher {
  layout: RunLayout | undefined;
  private readonly fs: RunFs;
  private readonly now: () => number;
  private readonly o: { quietMs: number; appendQuietMs: number; mtimeSlackMs: number };
  private readonly seen = new Map<string, Seen>();
  private readonly done = new Map<number, RunStep>();

  constructor(
    readonly dir: string,
    opts: RunWatchOptions = {},
  ) {
    this.fs = opts.fs ?? nodeRunFs;
    this.now = opts.now ?? Date.now;
    this.o = {
      quietMs: opts.quietMs ?? RUN_WATCH_DEFAULTS.quietMs,
      appendQuietMs: opts.appendQuietMs ?? RUN_WATCH_DEFAULTS.appendQuietMs,
      mtimeSlackMs: opts.mtimeSlackMs ?? RUN_WATCH_DEFAULTS.mtimeSlackMs,
    };
  }

  /** The options in force (defaults filled in). */
  get options(): Readonly<{ quietMs: number; appendQuietMs: number; mtimeSlackMs: number }> {
    return this.o;
  }

  /** Every step now, by step, complete or not: `Result<RunStep[]>`; [] while the folder has no step. */
  async look(): Promise<Result<RunStep[]>> {
    if (!this.layout) {
      const d = await detectRunLayout(this.dir, this.fs);
      if (!d.ok) return d;
      if (!d.value) return ok([]);
      this.layout = d.value;
    }
    const layout = this.layout;
    const entries = await stepEntries(layout, this.fs, new Set(this.done.keys()));
    const last = entries.length ? entries[entries.length - 1].step : -1;
    const out: RunStep[] = [];
    for (const e of entries) {
      const done = this.done.get(e.step);
      if (done) {
        out.push(done);
        continue;
      }
      const step = await this.judge(layout.kind, e, e.step !== last);
      if (step.complete) this.done.set(step.step, step);
      out.push(step);
    }
    return ok(out);
  }

  private async judge(
    kind: RunLayoutKind,
    e: { step: number; path: string; files: string[]; marker: boolean },
    laterExists: boolean,
  ): Promise<RunStep> {
    const base = { step: e.step, path: e.path, files: e.files };
    if (kind === 'prime-rl-export')
      return e.marker ? { ...base, complete: true } : { ...base, complete: false, waiting: 'marker' };
    const now = this.now();
    let quiet = e.files.length > 0 ? Number.POSITIVE_INFINITY : 0;
    for (const f of e.files) {
      const look = await this.fs.look(f);
      if (!look || look.size === 0) {
        quiet = 0;
        continue;
      }
      const s = observe(this.seen.get(f), look, now);
      this.seen.set(f, s);
      quiet = Math.min(quiet, quietFor(s, now, this.o.mtimeSlackMs));
    }
    const needed = kind === 'prime-rl-rollouts' && !laterExists ? this.o.appendQuietMs : this.o.quietMs;
    if (quiet < needed) return { ...base, complete: false, waiting: 'quiet' };
    for (const f of e.files) this.seen.delete(f);
    return { ...base, complete: true };
  }
}

export interface ListRunOptions extends RunWatchOptions {
  /** Wait once for steps whose files are still settling (at most `quietMs`), default true. */
  settle?: boolean;
  /** Waits `ms` (default a timer); for tests. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A run folder's layout and steps now: `Result<{layout, steps}>` (layout null: no step yet). Steps
 * whose files are still settling are looked at once more after `quietMs` (with `settle`); a step
 * still incomplete then is listed with `complete: false`.
 */
export async function listRun(
  dir: string,
  opts: ListRunOptions = {},
): Promise<Result<{ layout: RunLayout | null; steps: RunStep[] }>> {
  const w = new RunWatcher(dir, opts);
  let r = await w.look();
  if (!r.ok) return r;
  const settling = r.value.some((s) => s.waiting === 'quiet');
  if (settling && opts.settle !== false) {
    await (opts.sleep ?? ((ms) => new Promise((res) => setTimeout(res, ms))))(w.options.quietMs);
    r = await w.look();
    if (!r.ok) return r;
  }
  return ok({ layout: w.layout ?? null, steps: r.value });
}

/** The completed steps of a run folder (`listRun` with its steps filtered): `Result<RunStep[]>`. */
export async function completedSteps(dir: string, opts: ListRunOptions = {}): Promise<Result<RunStep[]>> {
  const r = await listRun(dir, opts);
  return r.ok ? ok(r.value.steps.filter((s) => s.complete)) : r;
}
