/**
 * Reading a run's steps: each data file linted in one streaming pass (one sample in memory) that
 * also keeps every sample's facts (line offset and figures, run-summary.ts), or taken from the index
 * cache when the file is unchanged; and the step's summary folded from its files' facts.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { Result } from '../../schema.js';
import type { FileFinding } from '../lint/coverage.js';
import { emptyFileLint, type FileLint, lintFile } from '../lint/lint-file.js';
import { type Finding, type LintOptions, RULE_TABLE } from '../lint/rules.js';
import { DUMP_READERS, type DumpReader } from '../readers/formats/index.js';
import { describeRejection } from '../readers/sample.js';
import type { LintPool } from '../session/lint-pool.js';
import type { DumpTokenizer } from '../templates/hf-tokenizer.js';
import type { IndexCache } from './index-cache.js';
import { nodeRunFs, type RunStep, summaryFilesOf } from './run-folder.js';
import { factsOf, type SampleFacts, type StepSummary, StepSummaryAccumulator } from './run-summary.js';

export interface StepScanOptions extends LintOptions {
  format?: FileLint['format'] | 'auto';
  /** Where indexes are kept between runs (none: every file is read). */
  cache?: IndexCache;
  signal?: AbortSignal;
  /** Stop keeping a file's findings after this many (default 100000). */
  maxFindings?: number;
  /** owners-unknown as a note, not a finding. */
  allowUnknownOwners?: boolean;
  /** Lint the files on these worker threads (the results are the same), and a step's files at once. */
  pool?: LintPool;
}

/** A file read while it grew (step-tail.ts): its scan at the marker. */
export interface GrownFile {
  finish(): Promise<FileScan>;
}

/** What reading one data file found. */
export interface FileScan extends Omit<FileLint, 'cancelled' | 'format'> {
  /** The format read (null: the file could not be read). */
  format: FileLint['format'] | null;
  /** Every sample's facts, in file order. */
  facts: SampleFacts[];
  /** The reason the file could not be read (then nothing else is filled in). */
  error?: string;
  /** Whether the index came from the cache. */
  cached: boolean;
}

/**
 * The cache key of a file's index: an index is reused only when all of these are the ones it was
 * made with: the code that read it (a hash of the running program, so a fixed check or reader never
 * serves an old lint), the rule table (ids, stages, what each needs), the registered readers, the
 * tokenizer (folder, template and special tokens, hashed) and the reading options.
 */
export function scanKey(opts: StepScanOptions): string {
  const tok: DumpTokenizer | undefined = opts.tok;
  return JSON.stringify({
    code: programHash(),
    rules: RULE_TABLE.map((r) => `${r.id}:${r.stage}:${r.needsOwners ? 1 : 0}`),
    readers: DUMP_READERS.map((r) => r.id),
    tok: tok ? `${tok.source}|${tok.templateFile ?? ''}|${tok.vocabSize}|${tokenizerHash(tok)}` : null,
    kwargs: opts.templateKwargs ?? null,
    rules_on: opts.rules ? [...opts.rules].sort() : null,
    gap: opts.logprobGap ?? 2,
    format: opts.format ?? 'auto',
    max: opts.maxFindings ?? 100_000,
    allow: opts.allowUnknownOwners ?? false,
  });
}

/**
 * The cache key of one file's index: `scanKey(opts)` and, for each file its samples take facts from
 * (the readers' `companionsOf`: slime's rollout dump beside a train dump), that file's size and
 * modification time (null while it is missing), so that a changed companion is read again.
 */
export async function fileScanKey(file: string, opts: StepScanOptions): Promise<string> {
  const key = scanKey(opts);
  const readers: readonly DumpReader[] = DUMP_READERS;
  const companions = [...new Set(readers.flatMap((r) => r.companionsOf?.(file) ?? []))].sort();
  if (!companions.length) return key;
  const looks = await Promise.all(
    companions.map(async (c) => [c, (await nodeRunFs.look(c)) ?? null] as const),
  );
  return JSON.stringify({ key, companions: looks });
}

let program: string | undefined;

/** A hash of the running program's file (`process.argv[1]`: dist/cli.js, dist/job-host.js, a test bundle), once per process. */
export function programHash(): string {
  if (program === undefined) {
    const file = process.argv[1];
    try {
      program = file ? createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 16) : '';
    } catch {
      program = '';
    }
  }
  return program;
}

/** A hash of what a tokenizer folder says to the lint: its chat template, special tokens and markers. */
function tokenizerHash(tok: DumpTokenizer): string {
  const h = createHash('sha256');
  h.update(tok.chatTemplate ?? '');
  h.update(JSON.stringify([[...tok.specialIds].sort((a, b) => a - b), tok.eosId ?? null, tok.padId ?? null]));
  h.update(JSON.stringify(tok.specials));
  return h.digest('hex').slice(0, 16);
}

/** Read one data file (or take its index from the cache): never throws; an unreadable file has `error`. */
export async function scanDumpFile(file: string, opts: StepScanOptions = {}): Promise<FileScan> {
  const key = await fileScanKey(file, opts);
  const before = await nodeRunFs.look(file);
  if (!before) return unreadableScan(file, `${file}: cannot be read (missing or not a file)`);
  const hit = await opts.cache?.get(file, before, key);
  if (hit) {
    const { format, samples, facts, findings, rejections, ownerSources, fileFindings, coverage } = hit;
    return {
      path: file,
      format,
      samples,
      facts,
      findings,
      rejections,
      ownerSources,
      fileFindings,
      coverage,
      cached: true,
    };
  }
  const r = await lintWithFacts(file, opts);
  if (!r.ok) return unreadableScan(file, r.error);
  const { cancelled, facts, ...lint } = r.value;
  const scan: FileScan = { ...lint, facts, cached: false };
  const after = await nodeRunFs.look(file);
  const unchanged = after && after.size === before.size && after.mtimeMs === before.mtimeMs;
  if (opts.cache && unchanged && !cancelled && !lint.internalErrors)
    await opts.cache.put({ v: 1, ...before, key, ...lint, facts, path: file });
  return scan;
}

/** A file's lint with every sample's facts, on the pool's workers when there is one. */
async function lintWithFacts(
  file: string,
  opts: StepScanOptions,
): Promise<Result<FileLint & { facts: SampleFacts[] }>> {
  const { pool, cache: _, ...lintOpts } = opts;
  if (pool) {
    const r = await pool.lintFile(file, lintOpts, 'facts');
    if (!r.ok) return r;
    const { gathered, ...lint } = r.value;
    return { ok: true, value: { ...lint, facts: gathered.facts } };
  }
  const facts: SampleFacts[] = [];
  const r = await lintFile(file, {
    ...lintOpts,
    onSample: (s, _findings, at) => facts.push(factsOf(s, at.owners, at.line)),
  });
  return r.ok ? { ok: true, value: { ...r.value, facts } } : r;
}

/** A step read: its files, findings (each with its file's path), summary and unreadable files. */
export interface StepReport {
  step: number;
  path: string;
  /** Records read, over the step's files. */
  samples: number;
  files: FileScan[];
  findings: (Finding & { path: string })[];
  /** Findings about a whole file (owners-unknown, tokenizer-mismatch), each with its file's path. */
  fileFindings: (FileFinding & { path: string })[];
  summary: StepSummary;
  /** One line per file that could not be read, and per bad line (the first 10 of a file). */
  errors: string[];
}

/** Read a complete step's files in order and summarise them; `tails`: files already read as they grew, by path. */
export async function scanStep(
  step: RunStep,
  opts: StepScanOptions = {},
  tails?: ReadonlyMap<string, GrownFile>,
): Promise<StepReport> {
  const files: FileScan[] = [];
  // With a pool, every file of the step is started at once (and taken in order below).
  const started = opts.pool
    ? new Map(step.files.filter((f) => !tails?.has(f)).map((f) => [f, scanDumpFile(f, opts)]))
    : undefined;
  for (const file of step.files) {
    if (opts.signal?.aborted) break;
    const tail = tails?.get(file);
    files.push(tail ? await tail.finish() : await (started?.get(file) ?? scanDumpFile(file, opts)));
  }
  return stepReportOf(step, files);
}

/** A step's report from its files' scans (`files`: the first of `step.files`, in order, each read). */
export function stepReportOf(step: RunStep, files: readonly FileScan[]): StepReport {
  const acc = new StepSummaryAccumulator();
  const findings: StepReport['findings'] = [];
  const fileFindings: StepReport['fileFindings'] = [];
  const errors: string[] = [];
  const counted = new Set(summaryFilesOf(step.files));
  for (const f of files) {
    const file = f.path;
    if (f.error) errors.push(f.error);
    for (const rej of f.rejections.slice(0, 10)) errors.push(`${file}: ${describeRejection(rej)}`);
    if (f.rejections.length > 10) errors.push(`${file}: ${f.rejections.length - 10} more bad lines`);
    if (counted.has(file)) {
      for (const x of f.facts) acc.add(x, file);
      acc.addFindings(f.findings, file);
    }
    for (const x of f.findings) findings.push({ path: file, ...x });
    for (const x of f.fileFindings) fileFindings.push({ path: file, ...x });
  }
  return {
    step: step.step,
    path: step.path,
    samples: files.reduce((n, f) => n + (counted.has(f.path) ? f.samples : 0), 0),
    files: [...files],
    findings,
    fileFindings,
    summary: acc.finish(),
    errors,
  };
}

/** A file that could not be read, as a scan: `error`, and nothing else filled in. */
export function unreadableScan(file: string, error: string): FileScan {
  const { cancelled: _, format: __, ...none } = emptyFileLint(file, 'jsonl');
  return { ...none, facts: [], format: null, error, cached: false };
}
