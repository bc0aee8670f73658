/**
 * Lint a whole dump file, streaming: one record (a JSONL line, or one sample of a whole-file
 * format) in memory at a time, with progress and cancel.
 */
import { type FileRecord, openDumpFile, type RecordLocation, readRecordAt } from './dump-file.js';
import type { DumpFormat } from './formats/index.js';
import type { ScanHooks } from './lines.js';
import type { OwnerSource, Owners } from './owners.js';
import { type Finding, type LintOptions, lintSample } from './rules.js';
import { type DumpSample, describeRejection, type Rejection } from './sample.js';

export interface FileLint {
  path: string;
  format: DumpFormat;
  /** Records read (non-blank lines; a whole-file format's samples). */
  samples: number;
  findings: Finding[];
  /** Lines that are not records of the format (line, field, expected vs found). */
  rejections: Rejection[];
  /** How owners were found for the samples (several when they differ). */
  ownerSources: OwnerSource[];
  cancelled: boolean;
}

export interface LintFileOptions extends LintOptions, ScanHooks {
  format?: DumpFormat | 'auto';
  /** Called for every sample after it is linted (the viewer's hook), with where its record is and its owners. */
  onSample?: (sample: DumpSample, findings: Finding[], at: { line: RecordLocation; owners: Owners }) => void;
  /** Stop keeping findings after this many (they are still counted in `samples`); default 100000. */
  maxFindings?: number;
}

/**
 * Lints a file's records one at a time (`add`, in file order) and gives the file's lint (`finish`):
 * what `lintFile` does over a whole file, and a growing file's reader does a piece at a time.
 */
export class FileLinter {
  private readonly out: FileLint;
  private readonly sources = new Set<OwnerSource>();
  private readonly lastTurn = new Map<string | number, DumpSample>();
  private readonly maxFindings: number;

  constructor(
    path: string,
    format: DumpFormat,
    private readonly opts: LintFileOptions = {},
  ) {
    this.out = { path, format, samples: 0, findings: [], rejections: [], ownerSources: [], cancelled: false };
    this.maxFindings = opts.maxFindings ?? 100_000;
  }

  /** Records added so far. */
  get samples(): number {
    return this.out.samples;
  }

  /** Lint one record (its samples, or its rejection), calling `onSample` on each sample. */
  add(rec: FileRecord): void {
    const out = this.out;
    out.samples++;
    const r = rec.samples;
    if (!r.ok) {
      out.rejections.push(r.error);
      return;
    }
    const at = { index: rec.index, offset: rec.offset, bytes: rec.bytes };
    for (const sample of r.value) {
      if (sample.episode !== undefined && !sample.previous) {
        const prev = this.lastTurn.get(sample.episode);
        if (prev) sample.previous = { offset: 0, ids: prev.ids, part: `line ${prev.record + 1}` };
        this.lastTurn.delete(sample.episode);
        this.lastTurn.set(sample.episode, sample);
        if (this.lastTurn.size > 10_000)
          this.lastTurn.delete(this.lastTurn.keys().next().value as string | number);
      }
      const { findings, owners } = lintSample(sample, this.opts);
      this.sources.add(owners.source);
      for (const f of findings) if (out.findings.length < this.maxFindings) out.findings.push(f);
      this.opts.onSample?.(sample, findings, { line: at, owners });
    }
  }

  /** The file's lint so far (`cancelled` from the options' signal). */
  finish(): FileLint {
    return { ...this.out, cancelled: this.opts.signal?.aborted ?? false, ownerSources: [...this.sources] };
  }
}

/**
 * Lint a dump file (any registered format, detected by content unless `format` is given): Result-like
 * `{ok, value: FileLint}` or `{ok: false, error}` (one line) when unreadable.
 */
export async function lintFile(
  path: string,
  opts: LintFileOptions = {},
): Promise<{ ok: true; value: FileLint } | { ok: false; error: string }> {
  const opened = await openDumpFile(path, opts.format ?? 'auto');
  if (!opened.ok) return opened;
  const linter = new FileLinter(path, opened.value.format, opts);
  try {
    for await (const rec of opened.value.records(opts)) linter.add(rec);
  } catch (e) {
    return { ok: false, error: `${path}: ${(e as Error).message}` };
  }
  if (linter.samples === 0 && !opts.signal?.aborted)
    return { ok: false, error: `${path}: no records (the file is empty)` };
  return { ok: true, value: linter.finish() };
}

export { describeRejection, readRecordAt };
