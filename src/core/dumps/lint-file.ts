/**
 * Lint a whole dump file, streaming: one line in memory at a time, with progress and cancel.
 */
import { type DumpFormat, detectLineFormat, parseRecord } from './formats/index.js';
import { type Line, readLineAt, readLines, type ScanHooks } from './lines.js';
import type { OwnerSource, Owners } from './owners.js';
import { type Finding, type LintOptions, lintSample } from './rules.js';
import { type DumpSample, describeRejection, type Rejection } from './sample.js';

export interface FileLint {
  path: string;
  format: DumpFormat;
  /** Records (non-blank lines) read. */
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
  /** Called for every sample after it is linted (the viewer's hook), with its line and its owners. */
  onSample?: (sample: DumpSample, findings: Finding[], at: { line: Line; owners: Owners }) => void;
  /** Stop keeping findings after this many (they are still counted in `samples`); default 100000. */
  maxFindings?: number;
}

/** Lint a JSONL dump file: Result-like `{ok, value: FileLint}` or `{ok: false, error}` when unreadable. */
export async function lintFile(
  path: string,
  opts: LintFileOptions = {},
): Promise<{ ok: true; value: FileLint } | { ok: false; error: string }> {
  let format: DumpFormat | undefined = opts.format && opts.format !== 'auto' ? opts.format : undefined;
  const out: FileLint = {
    path,
    format: format ?? 'jsonl',
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
    for await (const line of readLines(path, opts)) {
      if (line.text.trim() === '') continue;
      if (!format) {
        const d = detectLineFormat(line.text, line.index);
        if (!d.ok) return { ok: false, error: `${path}: ${d.error}` };
        format = d.value;
        out.format = format;
      }
      out.samples++;
      const r = parseRecord(format, line.text, line.index);
      if (!r.ok) {
        out.rejections.push(r.error);
        continue;
      }
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
        opts.onSample?.(sample, findings, { line, owners });
      }
    }
  } catch (e) {
    return { ok: false, error: `${path}: ${(e as Error).message}` };
  }
  if (!format) return { ok: false, error: `${path}: no records (the file is empty)` };
  out.cancelled = opts.signal?.aborted ?? false;
  out.ownerSources = [...sources];
  return { ok: true, value: out };
}

/** Read one record by its byte offset and length (from indexLines): `Result<samples [S]>`, for viewers. */
export async function readRecordAt(
  path: string,
  format: DumpFormat,
  index: number,
  offset: number,
  bytes: number,
): Promise<ReturnType<typeof parseRecord>> {
  return parseRecord(format, await readLineAt(path, offset, bytes), index);
}

export { describeRejection };
