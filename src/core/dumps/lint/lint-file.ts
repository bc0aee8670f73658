/**
 * Lint a whole dump file, streaming: one record (a JSONL line, or one sample of a whole-file
 * format) in memory at a time, with progress and cancel.
 */

import { type FileRecord, openDumpFile, type RecordLocation, readRecordAt } from '../readers/dump-file.js';
import type { DumpFormat } from '../readers/formats/index.js';
import type { LineRange, ScanHooks } from '../readers/lines.js';
import { type DumpSample, describeRejection, type Rejection } from '../readers/sample.js';
import type { DumpTokenizer } from '../templates/hf-tokenizer.js';
import { type OwnerSource, type Owners, readerFor } from '../templates/owners.js';
import { templateName } from '../templates/template-reader.js';
import { outOfVocabulary, tokenizerMisfit } from '../templates/tokenizer-fit.js';
import { CAPTURE_AGREE, CAPTURE_DISAGREE, captureNote } from './checks/capture.js';
import { emptyCoverage, type FileCoverage, type FileFinding } from './coverage.js';
import {
  errorText,
  type Finding,
  type LintOptions,
  lintSample,
  RULE_TABLE,
  type RuleId,
  type SampleLint,
} from './rules.js';

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
  /** Findings about the whole file (owners-unknown, tokenizer-mismatch): no sample, no positions. */
  fileFindings: FileFinding[];
  /** What the lint could check: tokenizer, owners block, end tokens, notes (said, not found). */
  coverage: FileCoverage;
  cancelled: boolean;
  /**
   * Checks (or a sample's owners) that threw: how many times; each is said in `coverage.notes` as
   * `internal error in rule R on record N: message` (the first 20), and the other rules ran.
   */
  internalErrors?: number;
}

/** At most this many internal errors are said in a file's notes (all are counted). */
const MAX_ERROR_NOTES = 20;

/** Whether the tokenizer was found to fit a file's ids, so far (FileLinter's state between records). */
export interface FitState {
  /** The first sample was checked (or there is no tokenizer to check). */
  checked: boolean;
  /** Why the tokenizer does not fit: from then on the lint runs without it. */
  misfit?: string;
}

/**
 * What a FileLinter found in a run of consecutive records, as plain data (it crosses threads): the
 * part of a file one worker lints, added to the file's linter by `absorb` in file order.
 */
export interface LintPart {
  samples: number;
  /** The first `maxFindings` findings of the part. */
  findings: Finding[];
  rejections: Rejection[];
  /** Owner sources in the order first seen. */
  sources: OwnerSource[];
  /** The checks' notes in the order first said, with how many samples said each. */
  notes: [string, number][];
  /** Samples whose owners came from the mask, and the first reason given. */
  unknown: { samples: number; why: string };
  /** The fit state after the part's last record. */
  fit: FitState;
  /** Internal errors counted, and the messages of the first MAX_ERROR_NOTES. */
  internalErrors: number;
  errorNotes: string[];
  /** The whole-file findings made while reading (tokenizer-mismatch). */
  fileFindings: FileFinding[];
  /** Whether some sample named an episode (its turns are linted against each other across records). */
  episodes: boolean;
}

export interface LintFileOptions extends LintOptions, ScanHooks {
  format?: DumpFormat | 'auto';
  /** Called for every sample after it is linted (the viewer's hook), with where its record is and its owners. */
  onSample?: (sample: DumpSample, findings: Finding[], at: { line: RecordLocation; owners: Owners }) => void;
  /** Stop keeping findings after this many (they are still counted in `samples`); default 100000. */
  maxFindings?: number;
  /** Say owners-unknown as a note, not a finding (for users who want only the id-level rules). */
  allowUnknownOwners?: boolean;
  /** Why no tokenizer was given (where it was looked for), for owners-unknown's message. */
  noTokenizerWhy?: string;
  /**
   * The coverage a FileLinter starts from instead of its tokenizer's (`startCoverage`): a merge of
   * shards joins parts without the tokenizer object.
   */
  coverage?: FileCoverage;
}

/**
 * Lints a file's records one at a time (`add`, in file order) and gives the file's lint (`finish`):
 * what `lintFile` does over a whole file, and a growing file's reader does a piece at a time.
 * The first sample decides whether the tokenizer fits the ids (later ids outside its vocabulary are
 * a misfit too); on a misfit one `tokenizer-mismatch` file finding replaces the rules that need
 * owners or token texts. `finish` adds `owners-unknown` (or its note) when some sample's owners
 * came from the mask alone.
 */
export class FileLinter {
  private readonly out: FileLint;
  private readonly sources = new Set<OwnerSource>();
  private readonly lastTurn = new Map<string | number, DumpSample>();
  private readonly maxFindings: number;
  private readonly notes = new Map<string, number>();
  /** Unknown owners: samples, and the first reason. */
  private readonly unknown = { samples: 0, why: '' };
  private fit: FitState;
  private sampleOpts: LintFileOptions;
  private readonly errorNotes: string[] = [];
  private episodes = false;

  constructor(
    path: string,
    format: DumpFormat,
    private readonly opts: LintFileOptions = {},
  ) {
    this.out = {
      ...emptyFileLint(path, format),
      coverage: opts.coverage ? structuredClone(opts.coverage) : startCoverage(opts.tok, opts),
    };
    this.maxFindings = opts.maxFindings ?? 100_000;
    this.fit = { checked: !opts.tok };
    this.sampleOpts = opts;
  }

  /** Records added so far. */
  get samples(): number {
    return this.out.samples;
  }

  /** Whether the tokenizer fits, so far. */
  get fitState(): FitState {
    return { ...this.fit };
  }

  /**
   * Continue as if the records before the next one had left `fit` (a part of a file linted apart
   * from its beginning starts so); only before the first record is added.
   */
  assumeFit(fit: FitState): void {
    this.fit = { ...fit };
    this.sampleOpts = fit.misfit ? { ...this.opts, tok: undefined } : this.opts;
  }

  /** What the records added so far found, as a LintPart. */
  part(): LintPart {
    const o = this.out;
    return {
      samples: o.samples,
      findings: o.findings,
      rejections: o.rejections,
      sources: [...this.sources],
      notes: [...this.notes],
      unknown: { ...this.unknown },
      fit: { ...this.fit },
      internalErrors: o.internalErrors ?? 0,
      errorNotes: this.errorNotes,
      fileFindings: o.fileFindings,
      episodes: this.episodes,
    };
  }

  /**
   * Add a part linted elsewhere as if its records had been added here, in file order: the part must
   * follow the records added so far, and must have started from this linter's `fitState`.
   */
  absorb(p: LintPart): void {
    const out = this.out;
    out.samples += p.samples;
    for (const r of p.rejections) out.rejections.push(r);
    for (const f of p.findings) if (out.findings.length < this.maxFindings) out.findings.push(f);
    for (const src of p.sources) this.sources.add(src);
    for (const [n, k] of p.notes) this.notes.set(n, (this.notes.get(n) ?? 0) + k);
    this.unknown.samples += p.unknown.samples;
    this.unknown.why ||= p.unknown.why;
    for (const e of p.errorNotes) this.internalError(e);
    if (p.internalErrors > p.errorNotes.length)
      out.internalErrors = (out.internalErrors ?? 0) + p.internalErrors - p.errorNotes.length;
    out.fileFindings.push(...p.fileFindings);
    this.episodes ||= p.episodes;
    this.assumeFit(p.fit);
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
      if (sample.episode !== undefined) this.episodes = true;
      if (sample.episode !== undefined && !sample.previous) {
        const prev = this.lastTurn.get(sample.episode);
        if (prev) sample.previous = { offset: 0, ids: prev.ids, part: `line ${prev.record + 1}` };
        this.lastTurn.delete(sample.episode);
        this.lastTurn.set(sample.episode, sample);
        if (this.lastTurn.size > 10_000)
          this.lastTurn.delete(this.lastTurn.keys().next().value as string | number);
      }
      let lint: SampleLint;
      try {
        this.checkFit(sample);
        lint = lintSample(sample, this.sampleOpts);
      } catch (e) {
        this.internalError(`internal error on record ${sample.record}: ${errorText(e)}`);
        continue;
      }
      const { findings, owners, notes: said } = lint;
      for (const e of lint.errors) this.internalError(e);
      this.sources.add(owners.source);
      if (owners.source === 'mask') {
        this.unknown.samples++;
        this.unknown.why ||= owners.why ?? '';
      }
      for (const n of said) this.notes.set(n, (this.notes.get(n) ?? 0) + 1);
      for (const f of findings) if (out.findings.length < this.maxFindings) out.findings.push(f);
      this.opts.onSample?.(sample, findings, { line: at, owners });
    }
  }

  /** Count an internal error, and say the first MAX_ERROR_NOTES in the notes. */
  private internalError(message: string): void {
    const n = (this.out.internalErrors ?? 0) + 1;
    this.out.internalErrors = n;
    if (n > MAX_ERROR_NOTES) return;
    this.out.coverage.notes.push(message);
    this.errorNotes.push(message);
  }

  /** On the first sample (and on any later one with ids outside the vocabulary): does the tokenizer fit? */
  private checkFit(sample: DumpSample): void {
    const tok = this.sampleOpts.tok;
    if (!tok || (this.fit.checked && !outOfVocabulary(sample.ids, tok))) return;
    const kwargs = { ...this.opts.templateKwargs, ...sample.templateKwargs };
    const misfit = tokenizerMisfit(sample.ids, tok, readerFor(tok, kwargs));
    this.fit = { checked: true, misfit };
    if (!misfit) return;
    this.out.fileFindings.push({
      rule: 'tokenizer-mismatch',
      message: `the ids of record ${sample.record} do not fit the tokenizer ${tok.source}: ${misfit}; the rules that need owners or token texts are not run (give the model's own tokenizer: --tokenizer DIR, or the one beside the file)`,
    });
    this.sampleOpts = { ...this.opts, tok: undefined };
  }

  /** The file's lint so far (`cancelled` from the options' signal), its coverage finished. */
  finish(): FileLint {
    const out: FileLint = {
      ...this.out,
      findings: [...this.out.findings],
      fileFindings: [...this.out.fileFindings],
      coverage: structuredClone(this.out.coverage),
      cancelled: this.opts.signal?.aborted ?? false,
      ownerSources: [...this.sources],
    };
    finishCoverage(out, this.opts, {
      notes: this.notes,
      unknown: this.unknown,
      misfit: this.fit.misfit !== undefined,
    });
    return out;
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
    // A record that cannot be read ends the file's read; a check that throws does not (FileLinter.add).
    for await (const rec of opened.value.records(opts)) linter.add(rec);
  } catch (e) {
    return { ok: false, error: `${path}: ${errorText(e)}` };
  }
  if (linter.samples === 0 && !opts.signal?.aborted)
    return { ok: false, error: `${path}: no records (the file is empty)` };
  return { ok: true, value: linter.finish() };
}

/** Where `lintPart` reads, and how the records before it left the linter. */
export interface PartStart {
  /** The lines to read (a JSONL format); none: every record. */
  range?: LineRange;
  /** The fit state the records before the range left (none: the file's first record is in the range). */
  fit?: FitState;
}

/**
 * Lint the records of `path` (in `format`, not detected) in `start.range` as `lintFile` lints them,
 * and give what they found as a LintPart (to be `absorb`ed in file order): `{ok, value}`, or
 * `{ok: false, error}` (one line) when the file cannot be opened or a record cannot be read.
 */
export async function lintPart(
  path: string,
  format: DumpFormat,
  opts: LintFileOptions = {},
  start: PartStart = {},
): Promise<{ ok: true; value: LintPart } | { ok: false; error: string }> {
  const opened = await openDumpFile(path, format);
  if (!opened.ok) return opened;
  const linter = new FileLinter(path, format, opts);
  if (start.fit) linter.assumeFit(start.fit);
  try {
    for await (const rec of opened.value.records(opts, start.range)) linter.add(rec);
  } catch (e) {
    return { ok: false, error: `${path}: ${errorText(e)}` };
  }
  return { ok: true, value: linter.part() };
}

/** A file's lint before any record is read: nothing found, owners unknown. */
export function emptyFileLint(path: string, format: DumpFormat): FileLint {
  return {
    path,
    format,
    samples: 0,
    findings: [],
    rejections: [],
    ownerSources: [],
    fileFindings: [],
    coverage: emptyCoverage(),
    cancelled: false,
  };
}

/** The rules a file's findings cannot come from when its owners are unknown (table order). */
const OWNER_RULES: readonly RuleId[] = RULE_TABLE.filter((r) => r.needsOwners).map((r) => r.id);

/** The coverage before any sample is read: the tokenizer and what its template does (for these arguments). */
export function startCoverage(tok: DumpTokenizer | undefined, opts: LintFileOptions): FileCoverage {
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
  for (const [n, k] of seen.notes)
    if (n !== CAPTURE_AGREE && n !== CAPTURE_DISAGREE) c.notes.push(k > 1 ? `${n} (${k} samples)` : n);
  const agree = seen.notes.get(CAPTURE_AGREE) ?? 0;
  const differ = seen.notes.get(CAPTURE_DISAGREE) ?? 0;
  if (agree + differ) c.notes.push(captureNote(agree, differ));
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

export { describeRejection, readRecordAt };
