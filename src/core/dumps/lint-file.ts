/**
 * Lint a whole dump file, streaming: one line in memory at a time, with progress and cancel.
 */
import type { FileCoverage, FileFinding } from './coverage.js';
import { type DumpFormat, detectLineFormat, parseRecord } from './formats/index.js';
import type { DumpTokenizer } from './hf-tokenizer.js';
import { type Line, readLineAt, readLines, type ScanHooks } from './lines.js';
import { type OwnerSource, type Owners, readerFor } from './owners.js';
import { type Finding, type LintOptions, lintSample, RULE_TABLE, type RuleId } from './rules.js';
import { type DumpSample, describeRejection, type Rejection } from './sample.js';
import { templateName } from './template-reader.js';
import { outOfVocabulary, tokenizerMisfit } from './tokenizer-fit.js';

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
  /** Findings about the whole file (owners-unknown, tokenizer-mismatch): no sample, no positions. */
  fileFindings: FileFinding[];
  /** What the lint could check: tokenizer, owners block, end tokens, notes (said, not found). */
  coverage: FileCoverage;
  cancelled: boolean;
}

export interface LintFileOptions extends LintOptions, ScanHooks {
  format?: DumpFormat | 'auto';
  /** Called for every sample after it is linted (the viewer's hook), with its line and its owners. */
  onSample?: (sample: DumpSample, findings: Finding[], at: { line: Line; owners: Owners }) => void;
  /** Stop keeping findings after this many (they are still counted in `samples`); default 100000. */
  maxFindings?: number;
  /** Say owners-unknown as a note, not a finding (for users who want only the id-level rules). */
  allowUnknownOwners?: boolean;
  /** Why no tokenizer was given (where it was looked for), for owners-unknown's message. */
  noTokenizerWhy?: string;
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
    fileFindings: [],
    coverage: coverageOf(opts.tok, opts),
    cancelled: false,
  };
  const sources = new Set<OwnerSource>();
  const lastTurn = new Map<string | number, DumpSample>();
  const maxFindings = opts.maxFindings ?? 100_000;
  const notes = new Map<string, number>();
  /** Unknown owners: samples, and the first reason. */
  const unknown = { samples: 0, why: '' };
  let fit: { checked: boolean; misfit?: string } = { checked: !opts.tok };
  let sampleOpts: LintFileOptions = opts;
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
        if (sampleOpts.tok && (!fit.checked || outOfVocabulary(sample.ids, sampleOpts.tok))) {
          // Decided on the first sample; ids outside the vocabulary later on are a misfit too.
          const kwargs = { ...opts.templateKwargs, ...sample.templateKwargs };
          const misfit = tokenizerMisfit(sample.ids, sampleOpts.tok, readerFor(sampleOpts.tok, kwargs));
          fit = { checked: true, misfit };
          if (misfit) {
            out.fileFindings.push({
              rule: 'tokenizer-mismatch',
              message: `the ids of record ${sample.record} do not fit the tokenizer ${sampleOpts.tok.source}: ${misfit}; the rules that need owners or token texts are not run (give the model's own tokenizer: --tokenizer DIR, or the one beside the file)`,
            });
            sampleOpts = { ...opts, tok: undefined };
          }
        }
        const { findings, owners, notes: said } = lintSample(sample, sampleOpts);
        sources.add(owners.source);
        if (owners.source === 'mask') {
          unknown.samples++;
          unknown.why ||= owners.why ?? '';
        }
        for (const n of said) notes.set(n, (notes.get(n) ?? 0) + 1);
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
  finishCoverage(out, opts, { notes, unknown, misfit: fit.misfit !== undefined });
  return { ok: true, value: out };
}

/** The rules a file's findings cannot come from when its owners are unknown (table order). */
const OWNER_RULES: readonly RuleId[] = RULE_TABLE.filter((r) => r.needsOwners).map((r) => r.id);

/** The coverage before any sample is read: the tokenizer and what its template does (for these arguments). */
function coverageOf(tok: DumpTokenizer | undefined, opts: LintFileOptions): FileCoverage {
  const reader = tok ? readerFor(tok, opts.templateKwargs) : undefined;
  const r = reader?.ok ? reader.value : undefined;
  return {
    tokenizer: tok?.source ?? null,
    owners: {
      source: r ? 'template' : 'mask',
      template: r && tok ? templateName(tok, r) : null,
      prefix_preserving: r ? r.structure.prefixPreserving : null,
      rules_off: r ? [] : [...OWNER_RULES],
    },
    ends: r ? [...r.structure.ends] : [],
    notes: r ? [...r.structure.notes] : [],
  };
}

/** The owners block from the samples read, owners-unknown (or its note), and the checks' notes. */
function finishCoverage(
  out: FileLint,
  opts: LintFileOptions,
  seen: { notes: Map<string, number>; unknown: { samples: number; why: string }; misfit: boolean },
): void {
  const c = out.coverage;
  const src = out.ownerSources;
  c.owners.source = src.includes('mask')
    ? 'mask'
    : src.includes('file')
      ? 'file'
      : src.length
        ? 'template'
        : c.owners.source;
  c.owners.rules_off = c.owners.source === 'mask' ? [...OWNER_RULES] : [];
  if (seen.misfit) {
    c.owners = { source: 'mask', template: null, prefix_preserving: null, rules_off: [...OWNER_RULES] };
    c.ends = [];
  }
  for (const [n, k] of seen.notes) c.notes.push(k > 1 ? `${n} (${k} samples)` : n);
  const { samples, why } = seen.unknown;
  if (!samples || seen.misfit) return;
  const reason = why === 'no tokenizer' && opts.noTokenizerWhy ? opts.noTokenizerWhy : why;
  const fix =
    why === 'no tokenizer'
      ? "give the model's tokenizer folder (tokenizer.json, tokenizer_config.json and its chat template)"
      : 'give a tokenizer folder whose chat template renders (a chat_template.jinja there wins), or the template arguments it needs';
  const message = `owners could not be derived for ${samples} of ${out.samples} samples: ${reason}; the rules ${OWNER_RULES.join(', ')} did not run; to fix: ${fix}`;
  if (opts.allowUnknownOwners || (opts.rules && !opts.rules.has('owners-unknown'))) c.notes.push(message);
  else out.fileFindings.push({ rule: 'owners-unknown', message });
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
