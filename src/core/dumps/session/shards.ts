/**
 * Linting across machines (`lint --shard I/N`, `merge`): the work of a lint is cut into units (a
 * file, or a range of a line-based file's records, the ranges lint-pool.ts cuts) in one plan every
 * shard makes alike from the same files; shard I of N lints the units the plan gives it (the
 * biggest first, each to the least-loaded shard: the same answer on every machine) and writes a
 * partial result; `mergeShards` joins the partials of all N shards, in file order, with
 * FileLinter.absorb: exactly the lint of the unsharded run.
 *
 * A partial (`episode-lab-lint-shard`, version 1; docs/lint-rules.md):
 *   {kind, version, shard: {index, count}, plan_hash, plan: ShardPlan,
 *    results: [{unit, ok: true, part: LintPart, facts: SampleFacts[]} | {unit, ok: false, error}]}
 * with every number that JSON cannot hold (NaN, ±Infinity) written as {"$number": "NaN"}.
 *
 * A range after a file's first is linted as if the tokenizer fit the records before it; when they
 * left another state (a tokenizer that does not fit), or a split file's samples named episodes, the
 * merge lints that file again itself, from the plan's tokenizer folder (it needs the files).
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { fail, int, list, loose, ok, parse, type Result, strict, text } from '../../schema.js';
import { type FileCoverage, FileCoverageSchema } from '../lint/coverage.js';
import {
  type FileLint,
  FileLinter,
  type FitState,
  type LintPart,
  lintFile,
  startCoverage,
} from '../lint/lint-file.js';
import type { RuleId } from '../lint/rules.js';
import { openDumpFile } from '../readers/dump-file.js';
import { type DumpFormat, readerOf } from '../readers/formats/index.js';
import { type LineRange, lineRanges } from '../readers/lines.js';
import { nodeRunFs, type RunStep } from '../run-folders/run-folder.js';
import type { SampleFacts } from '../run-folders/run-summary.js';
import type { DumpTokenizer } from '../templates/hf-tokenizer.js';
import { SampleGatherer } from './gather.js';
import { type LintPool, type PartOptions, type PartTask, runPartTask, tokenizerPrint } from './lint-pool.js';
import { loadTokenizerCached } from './tokenizer-choice.js';

export const SHARD_KIND = 'episode-lab-lint-shard';
export const SHARD_VERSION = 1;
/** A line-based file is cut into ranges of at least this many bytes (`--part-bytes`). */
export const SHARD_PART_BYTES = 32 << 20;

/** A path given to the lint, as the shards' plan holds it. */
export type ShardPath =
  /** A dump file: its file's index in `files`, the text said after its name, and the tokenizer's folder. */
  | { kind: 'file'; path: string; said: string[]; file: number; note: string; tokenizer: string | null }
  /** A run folder: its completed steps, each with its files' indexes in `files`. */
  | { kind: 'run'; path: string; said: string[]; steps: { step: number; path: string; files: number[] }[] }
  /** A path that could not be read as a whole (a run folder without a completed step). */
  | { kind: 'error'; path: string; said: string[]; error: string };

/** A file of the plan: how it was found, and how its lint starts. */
export interface ShardFile {
  file: string;
  /** Its size and modification time when planned (a merge that lints it again checks them). */
  size: number;
  mtimeMs: number;
  format: DumpFormat | null;
  /** Why it cannot be read (then it has no units). */
  error?: string;
  /** The lint's options for it, the reason it has no tokenizer, and the coverage its linter starts from. */
  opts: PartOptions;
  noTokenizerWhy?: string;
  coverage: FileCoverage;
  /** The tokenizer's folder and print (`tokenizerPrint`), or null. */
  tokenizer: { dir: string; print: string } | null;
  /** Whether every sample's facts are kept (a run's step file). */
  facts: boolean;
  /** Its units, in file order (indexes in `units`). */
  units: number[];
}

/** A unit of work: a file, or a range of its lines; `shard`: the shard that lints it. */
export interface ShardUnit {
  file: number;
  range?: LineRange;
  bytes: number;
  shard: number;
}

/** What every shard of a lint makes alike from the same paths and options. */
export interface ShardPlan {
  count: number;
  paths: ShardPath[];
  files: ShardFile[];
  units: ShardUnit[];
  /** What the front end keeps for the report (the advisories' thresholds), as given. */
  extra: Record<string, unknown>;
}

/** One unit's answer in a partial. */
export type ShardResult =
  | { unit: number; ok: true; part: LintPart; facts: SampleFacts[] }
  | { unit: number; ok: false; error: string };

/** A shard's partial result. */
export interface ShardPartial {
  kind: typeof SHARD_KIND;
  version: typeof SHARD_VERSION;
  shard: { index: number; count: number };
  plan_hash: string;
  plan: ShardPlan;
  results: ShardResult[];
}

/** A path given to `planShards`, resolved by the front end (its tokenizer chosen, a run's steps listed). */
export type ShardInput =
  | { kind: 'file'; path: string; said: string[]; tok?: DumpTokenizer; noTokenizerWhy?: string; note: string }
  | { kind: 'run'; path: string; said: string[]; tok?: DumpTokenizer; steps: RunStep[] }
  | { kind: 'error'; path: string; said: string[]; error: string };

/** The lint's options for every file of a plan. */
export interface ShardOptions {
  opts: PartOptions;
  format: DumpFormat | 'auto';
  /** The least bytes of a range (default SHARD_PART_BYTES). */
  partBytes?: number;
  extra?: Record<string, unknown>;
}

/** The plan with the tokenizers its files are linted with (by file index; not in the plan's JSON). */
export interface PlannedShards {
  plan: ShardPlan;
  toks: (DumpTokenizer | undefined)[];
}

/**
 * The plan of a lint of `inputs` in `count` shards: each file opened (its format, and whether it
 * can be read), a line-based file whose samples are linted apart cut into ranges of at least
 * `partBytes`, and every unit given to a shard. Deterministic for the same files and options.
 */
export async function planShards(
  inputs: ShardInput[],
  count: number,
  o: ShardOptions,
): Promise<PlannedShards> {
  const files: ShardFile[] = [];
  const toks: (DumpTokenizer | undefined)[] = [];
  const units: ShardUnit[] = [];
  const add = async (file: string, tok: DumpTokenizer | undefined, facts: boolean, why?: string) => {
    const f = await planFile(file, tok, facts, why, o);
    f.units = f.ranges.map((range) => {
      units.push({ file: files.length, range, bytes: rangeBytes(range, f.size), shard: 0 });
      return units.length - 1;
    });
    const { ranges: _, ...rest } = f;
    files.push(rest);
    toks.push(tok);
    return files.length - 1;
  };
  const paths: ShardPath[] = [];
  for (const x of inputs) {
    if (x.kind === 'error') paths.push({ kind: 'error', path: x.path, said: x.said, error: x.error });
    else if (x.kind === 'file') {
      const file = await add(x.path, x.tok, false, x.noTokenizerWhy);
      paths.push({
        kind: 'file',
        path: x.path,
        said: x.said,
        file,
        note: x.note,
        tokenizer: x.tok?.source ?? null,
      });
    } else {
      const steps: { step: number; path: string; files: number[] }[] = [];
      for (const s of x.steps) {
        const idx: number[] = [];
        for (const f of s.files) idx.push(await add(f, x.tok, true));
        steps.push({ step: s.step, path: s.path, files: idx });
      }
      paths.push({ kind: 'run', path: x.path, said: x.said, steps });
    }
  }
  assignShards(units, count);
  return { plan: { count, paths, files, units, extra: o.extra ?? {} }, toks };
}

/** The bytes of a range of a file of `size` bytes (the whole file when there is no range). */
const rangeBytes = (r: LineRange | undefined, size: number) => (r?.end ?? size) - (r?.start ?? 0);

/** One file of the plan, with its ranges (one `undefined`: the file whole; none: it cannot be read). */
async function planFile(
  file: string,
  tok: DumpTokenizer | undefined,
  facts: boolean,
  noTokenizerWhy: string | undefined,
  o: ShardOptions,
): Promise<ShardFile & { ranges: (LineRange | undefined)[] }> {
  const look = await nodeRunFs.look(file);
  const base = {
    file,
    size: look?.size ?? 0,
    mtimeMs: look?.mtimeMs ?? 0,
    opts: o.opts,
    noTokenizerWhy,
    coverage: startCoverage(tok, { templateKwargs: o.opts.templateKwargs }),
    tokenizer: tok ? { dir: tok.source, print: tokenizerPrint(tok) } : null,
    facts,
    units: [],
  };
  if (!look)
    return { ...base, format: null, error: `${file}: cannot be read (missing or not a file)`, ranges: [] };
  const opened = await openDumpFile(file, o.format);
  if (!opened.ok) return { ...base, format: null, error: opened.error, ranges: [] };
  const format = opened.value.format;
  const splits = opened.value.lines && !readerOf(format)?.carries.includes('episode');
  const ranges = splits ? await lineRanges(file, 1 << 20, o.partBytes ?? SHARD_PART_BYTES) : [undefined];
  return { ...base, format, ranges };
}

/** Give each unit a shard: the biggest first (ties in plan order), each to the least-loaded shard (ties: the lowest). */
function assignShards(units: ShardUnit[], count: number): void {
  const load = new Array<number>(count).fill(0);
  const order = units.map((_, i) => i).sort((a, b) => units[b].bytes - units[a].bytes || a - b);
  for (const i of order) {
    let best = 0;
    for (let s = 1; s < count; s++) if (load[s] < load[best]) best = s;
    units[i].shard = best;
    load[best] += units[i].bytes;
  }
}

/** The plan's fingerprint: every shard of one lint has the same. */
export function planHash(plan: ShardPlan): string {
  return createHash('sha256').update(JSON.stringify(plan)).digest('hex');
}

/**
 * Lint shard `index`'s units of a plan (on the pool's threads when given one) and give its partial.
 * `signal` stops it between units (the partial is then not given: undefined).
 */
export async function runShard(
  planned: PlannedShards,
  index: number,
  pool?: LintPool,
  signal?: AbortSignal,
): Promise<ShardPartial | undefined> {
  const { plan, toks } = planned;
  const mine = plan.units.map((u, i) => [u, i] as const).filter(([u]) => u.shard === index);
  const answers = mine.map(async ([u, unit]): Promise<ShardResult> => {
    const f = plan.files[u.file];
    const task: PartTask = {
      id: unit,
      path: f.file,
      format: f.format as DumpFormat,
      range: u.range,
      fit: f.units[0] === unit ? undefined : { checked: true },
      tokenizer: f.tokenizer,
      opts: f.opts,
      gather: f.facts ? 'facts' : undefined,
    };
    const tok = toks[u.file];
    let a = pool ? await pool.runPart(task, tok, signal) : await runPartTask(task, tok);
    // A worker that could not load the same tokenizer: this thread, which holds it, lints the unit.
    if (!a.ok && a.tokenizerChanged) a = await runPartTask(task, tok);
    return a.ok
      ? { unit, ok: true, part: a.part, facts: a.gathered.facts }
      : { unit, ok: false, error: a.error };
  });
  const results = await Promise.all(answers);
  if (signal?.aborted) return undefined;
  return {
    kind: SHARD_KIND,
    version: SHARD_VERSION,
    shard: { index, count: plan.count },
    plan_hash: planHash(plan),
    plan,
    results,
  };
}

/** A partial as JSON text, every non-finite number kept as {"$number": "NaN" | "Infinity" | "-Infinity"}. */
export function partialText(p: ShardPartial): string {
  return JSON.stringify(p, (_k, x) =>
    typeof x === 'number' && !Number.isFinite(x) ? { $number: String(x) } : x,
  );
}

const NUMBER_WORDS = new Set(['NaN', 'Infinity', '-Infinity']);

/** Any number, NaN and the infinities too (a partial keeps them: `partialText`). */
const anyNumber = v.custom<number>((x) => typeof x === 'number', 'a number');

/** A sample's facts (run-summary.ts SampleFacts): numbers, or null where unknown. */
const FactsSchema = v.record(v.string(), v.nullable(anyNumber));

/** A LintPart as a partial holds it (lint-file.ts's shape): what `FileLinter.absorb` reads. */
const LintPartSchema = loose({
  samples: int(0, 1e12),
  findings: list(
    loose({
      sample: int(0, 1e12),
      rule: text(40),
      positions: list(int(0, 1e12)),
      message: v.string(),
    }),
  ),
  rejections: list(
    loose({ record: int(0, 1e12), field: v.string(), expected: v.string(), found: v.string() }),
  ),
  sources: list(v.picklist(['template', 'file', 'mask'])),
  notes: list(v.tuple([v.string(), int(0, 1e12)])),
  unknown: loose({ samples: int(0, 1e12), why: v.string() }),
  fit: loose({ checked: v.boolean(), misfit: v.optional(v.string()) }),
  internalErrors: int(0, 1e12),
  errorNotes: list(v.string()),
  fileFindings: list(loose({ rule: text(40), message: v.string() })),
  episodes: v.boolean(),
});

const PartialSchema = strict(
  {
    kind: v.literal(SHARD_KIND),
    version: v.literal(SHARD_VERSION),
    shard: strict({ index: int(0, 1e6), count: int(1, 1e6) }),
    plan_hash: text(64),
    plan: loose({
      count: int(1, 1e6),
      paths: list(
        loose({ kind: v.picklist(['file', 'run', 'error']), path: text(), said: list(v.string()) }),
      ),
      files: list(
        loose({ file: text(), units: list(int(0, 1e9)), coverage: FileCoverageSchema, facts: v.boolean() }),
      ),
      units: list(loose({ file: int(0, 1e9), bytes: int(0, 1e15), shard: int(0, 1e6) })),
      extra: v.record(v.string(), v.unknown()),
    }),
    results: list(
      v.variant('ok', [
        v.looseObject({
          unit: int(0, 1e9),
          ok: v.literal(true),
          part: LintPartSchema,
          facts: list(FactsSchema, 0, 1e9),
        }),
        v.looseObject({ unit: int(0, 1e9), ok: v.literal(false), error: v.string() }),
      ]),
    ),
  },
  'a shard partial',
);

/**
 * A partial read back from its text (`where`: its file, for the messages): the partial, or why it is
 * not one (not JSON, another kind or version, a field of the wrong shape, a plan that does not
 * match its hash). Never throws.
 */
export function readPartial(textIn: string, where: string): Result<ShardPartial> {
  let x: unknown;
  try {
    x = JSON.parse(textIn, (_k, val) =>
      val &&
      typeof val === 'object' &&
      !Array.isArray(val) &&
      Object.keys(val).length === 1 &&
      NUMBER_WORDS.has(val.$number)
        ? Number(val.$number)
        : val,
    );
  } catch (e) {
    return fail(
      `${where}: not JSON (${(e as Error).message}); give the file a shard wrote with lint --shard I/N --out FILE`,
    );
  }
  if (!x || typeof x !== 'object' || (x as { kind?: unknown }).kind !== SHARD_KIND)
    return fail(
      `${where}: not a shard's partial result (no "kind": "${SHARD_KIND}"); give the files lint --shard I/N --out FILE wrote`,
    );
  if ((x as { version?: unknown }).version !== SHARD_VERSION)
    return fail(
      `${where}: a partial of version ${String((x as { version?: unknown }).version)}; this Episode Lab merges version ${SHARD_VERSION}: run the shards and the merge with the same version`,
    );
  const r = parse(PartialSchema, x, where);
  if (!r.ok) return r;
  // The text's own objects (valibot's output orders keys by the schema, and the hash is of the text's order).
  const p = x as ShardPartial;
  if (planHash(p.plan) !== p.plan_hash)
    return fail(
      `${where}: its plan does not match its plan_hash (the file was changed after the shard wrote it)`,
    );
  if (p.plan.count !== p.shard.count || p.shard.index >= p.shard.count)
    return fail(
      `${where}: shard ${p.shard.index}/${p.shard.count} of a plan in ${p.plan.count} shards (the file was changed after the shard wrote it)`,
    );
  return ok(p);
}

/** A path of the merged lint: a file's lint, a run folder's files by step, or the path's error. */
export type MergedPath =
  | {
      kind: 'file';
      path: string;
      said: string[];
      lint: Result<MergedFile>;
      note: string;
      tokenizer: string | null;
    }
  | { kind: 'run'; path: string; said: string[]; steps: { step: RunStep; files: Result<MergedFile>[] }[] }
  | { kind: 'error'; path: string; said: string[]; error: string };

/** A file's lint joined from its units, with its samples' facts (a run's step file). */
export type MergedFile = FileLint & { facts: SampleFacts[]; file: string };

/**
 * Join the partials of every shard of one plan: each path's lint as the unsharded lint gives it, or
 * why the partials cannot be joined (a shard missing or given twice, partials of different plans:
 * the files changed between shards, or other options).
 */
export async function mergeShards(
  partials: { where: string; partial: ShardPartial }[],
): Promise<Result<{ plan: ShardPlan; paths: MergedPath[] }>> {
  if (!partials.length) return fail('give the partial result of every shard');
  const first = partials[0];
  const plan = first.partial.plan;
  const byShard = new Map<number, string>();
  for (const { where, partial } of partials) {
    if (partial.plan_hash !== first.partial.plan_hash)
      return fail(
        `${where} and ${first.where} are shards of different lints (their plans differ: the files changed between the shards, or they were given other paths or options); run every shard of one lint again`,
      );
    const seen = byShard.get(partial.shard.index);
    if (seen) return fail(`shard ${partial.shard.index} is given twice: ${seen} and ${where}`);
    byShard.set(partial.shard.index, where);
  }
  const missing = [...Array(plan.count).keys()].filter((i) => !byShard.has(i));
  if (missing.length)
    return fail(
      `${missing.length} of ${plan.count} shards missing: ${missing.join(', ')} (give the partial of every shard, 0 to ${plan.count - 1})`,
    );
  const results = new Map<number, ShardResult>();
  for (const { where, partial } of partials)
    for (const r of partial.results) {
      const u = plan.units[r.unit];
      if (!u || u.shard !== partial.shard.index)
        return fail(`${where}: a result for unit ${r.unit}, which is not shard ${partial.shard.index}'s`);
      results.set(r.unit, r);
    }
  const lost = plan.units.findIndex((_u, i) => !results.has(i));
  if (lost >= 0)
    return fail(
      `${byShard.get(plan.units[lost].shard)}: no result for unit ${lost} (the shard did not finish: run it again)`,
    );
  const fileLints: Result<MergedFile>[] = [];
  for (const f of plan.files) fileLints.push(await mergeFile(f, plan, results));
  const paths: MergedPath[] = plan.paths.map((p) => {
    if (p.kind === 'error') return p;
    if (p.kind === 'file') return { ...p, lint: fileLints[p.file] };
    return {
      kind: 'run',
      path: p.path,
      said: p.said,
      steps: p.steps.map((s) => ({
        step: { step: s.step, path: s.path, files: s.files.map((i) => plan.files[i].file), complete: true },
        files: s.files.map((i) => fileLints[i]),
      })),
    };
  });
  return ok({ plan, paths });
}

/** The options a file's linter is made with, from the plan. */
function linterOpts(f: ShardFile) {
  return {
    ...f.opts,
    rules: f.opts.rules ? new Set<RuleId>(f.opts.rules) : undefined,
    noTokenizerWhy: f.noTokenizerWhy,
    coverage: f.coverage,
  };
}

/** One file's units joined in order (pool.lintFile's join), or linted again here when they cannot be. */
async function mergeFile(
  f: ShardFile,
  plan: ShardPlan,
  results: Map<number, ShardResult>,
): Promise<Result<MergedFile>> {
  if (f.error !== undefined || f.format === null) return fail(f.error ?? `${f.file}: unreadable`);
  const linter = new FileLinter(f.file, f.format, linterOpts(f));
  const facts: SampleFacts[] = [];
  const plain: FitState = { checked: true };
  for (let i = 0; i < f.units.length; i++) {
    const r = results.get(f.units[i]) as ShardResult;
    if (!r.ok) return fail(r.error);
    const fit = linter.fitState;
    const refit = i > 0 && (fit.checked !== plain.checked || fit.misfit !== undefined);
    if (refit || (r.part.episodes && f.units.length > 1))
      return lintAgain(
        f,
        plan,
        refit ? 'the tokenizer did not fit its first records' : 'its samples name episodes',
      );
    linter.absorb(r.part);
    for (const x of r.facts) facts.push(x);
  }
  if (linter.samples === 0) return fail(`${f.file}: no records (the file is empty)`);
  return ok({ ...linter.finish(), facts, file: f.file });
}

/** A file linted whole here (its ranges could not be joined: `why`), with the plan's tokenizer. */
async function lintAgain(f: ShardFile, _plan: ShardPlan, why: string): Promise<Result<MergedFile>> {
  const look = await nodeRunFs.look(f.file);
  if (!look || look.size !== f.size || look.mtimeMs !== f.mtimeMs)
    return fail(
      `${f.file}: the merge must lint this file again itself (${why}), but it ${look ? 'changed' : 'is not here'}: run the merge where the shards read the files, before they change`,
    );
  let tok: DumpTokenizer | undefined;
  if (f.tokenizer) {
    const loaded = loadTokenizerCached(f.tokenizer.dir);
    if (!loaded.tok || tokenizerPrint(loaded.tok) !== f.tokenizer.print)
      return fail(
        `${f.file}: the merge must lint this file again itself (${why}), but the tokenizer ${f.tokenizer.dir} ${loaded.tok ? 'changed' : 'is not here'}`,
      );
    tok = loaded.tok;
  }
  const g = new SampleGatherer(f.facts ? 'facts' : undefined, tok);
  const { coverage: _, ...opts } = linterOpts(f);
  const r = await lintFile(f.file, {
    ...opts,
    format: f.format ?? 'auto',
    tok,
    onSample: f.facts ? (s, x, at) => g.add(s, x, at) : undefined,
  });
  return r.ok ? ok({ ...r.value, facts: g.result().facts, file: f.file }) : r;
}
