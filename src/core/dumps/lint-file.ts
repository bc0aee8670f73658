/**
 * Lint a whole dump file, streaming: one record (a JSONL line, or one sample of a whole-file
 * format) in memory at a time, with progress and cancel.
 */
import { openDumpFile, type RecordLocation, readRecordAt } from './dump-file.js';
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
 * Lint a dump file (any registered format, detected by content unless `format` is given): Result-like
 * `{ok, value: FileLint}` or `{ok: false, error}` (one line) when unreadable.
 */
export async function lintFile(
  path: string,
  opts: LintFileOptions = {},
): Promise<{ ok: true; value: FileLint } | { ok: false; error: string }> {
  const opened = await openDumpFile(path, opts.format ?? 'auto');
  if (!opened.ok) return opened;
  const format = opened.value.format;
  const out: FileLint = {
    path,
    format,
    samples: 0,
    findings: [],
    rejections: [],
    ownerSources: [],
    cancelled: false,
  };
  const sources = new Set<OwnerSource>();
  const lastTurn = new Map<string | number, DumpSample>();
  const maxFindings = opts.maxFindings ?? 100_000;
  try {
    for await (const rec of opened.value.records(opts)) {
      out.samples++;
      const r = rec.samples;
      if (!r.ok) {
        out.rejections.push(r.error);
        continue;
      }
      const at = { index: rec.index, offset: rec.offset, bytes: rec.bytes };
      for (const sample of r.value) {
        if (sample.episode !== undefined && !sample.previous) {
          const prev = lastTurn.get(sample.episode);
          if (prev) sample.previous = { offset: 0, ids: prev.ids, part: `line ${prev.record + 1}` };
          lastTurn.delete(sample.episode);
          lastTurn.set(sample.episode, sample);
          if (lastTurn.size > 10_000) lastTurn.delete(lastTurn.keys().next().value as string | number);
        }
        const { findings, owners } = lintSample(sample, opts);
        sources.add(owners.source);
        for (const f of findings) if (out.findings.length < maxFindings) out.findings.push(f);
        opts.onSample?.(sample, findings, { line: at, owners });
      }
    }
  } catch (e) {
    return { ok: false, error: `${path}: ${(e as Error).message}` };
  }
  if (out.samples === 0 && !opts.signal?.aborted)
    return { ok: false, error: `${path}: no records (the file is empty)` };
  out.cancelled = opts.signal?.aborted ?? false;
  out.ownerSources = [...sources];
  return { ok: true, value: out };
}

export { describeRejection, readRecordAt };
