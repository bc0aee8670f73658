/**
 * The lint's report as the CLI prints it: each path read (a file's lint, a run folder's scan) added
 * in the order given, into `lint --json`'s files and runs and the text, with the exit code; the same
 * for `lint` and for `merge` (a sharded lint joined).
 */
import {
  coverageLine,
  describeRejection,
  type FileLint,
  type Finding,
  type LintFileReport,
  RULE_IDS,
  RULES,
  type RuleId,
} from '../core/dumps/index.js';
import type { Advisory } from '../core/dumps/run-folders/run-health.js';
import type { DumpSession } from '../core/dumps/session/session.js';
import { tokenizerNote } from '../core/dumps/session/tokenizer-choice.js';
import type { Result } from '../core/schema.js';
import type { OptionValues } from './args.js';
import { advisoryLines, type RunScan } from './run-commands.js';

/** Sorted positions as ranges: `[3,4,5,9] -> "3-5,9"`. */
export function compactPositions(ps: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ps.length; i++) {
    let j = i;
    while (j + 1 < ps.length && ps[j + 1] === ps[j] + 1) j++;
    parts.push(j > i ? `${ps[i]}-${ps[j]}` : String(ps[i]));
    i = j;
  }
  return parts.join(',');
}

/** A path as `runLint` read it: what was said while reading, and a run's scan or a file's lint. */
export type PathRead = { said: string[] } & (
  | { run: Result<RunScan>; lint?: undefined }
  | { run?: undefined; lint: Result<FileLint>; tokNote: string; tokenizer: string | null }
);

/** `lint`'s report as files and runs are added in order: the JSON's files and runs, and the text. */
export class LintReport {
  readonly reports: LintFileReport[] = [];
  readonly runs: RunReport[] = [];
  readonly out: string[] = [];
  /** A file could not be read, or has bad lines. */
  unreadable = false;
  /** A check threw somewhere. */
  internal = false;

  constructor(private readonly say: (e: string) => void) {}

  /** One read file into the report and the text (unreadable when it could not be read or has bad lines). */
  addFile(file: string, f: FileRead | { error: string }, tokNote: string, tokenizer: string | null): void {
    const say = this.say;
    if ('error' in f) {
      this.reports.push({
        path: file,
        format: null,
        samples: 0,
        tokenizer,
        owners: null,
        ends: [],
        notes: [],
        findings: [],
        error: f.error,
      });
      say(f.error);
      this.unreadable = true;
      return;
    }
    if (f.internalErrors) {
      this.internal = true;
      say(
        `${file}: ${f.internalErrors} internal error${f.internalErrors === 1 ? '' : 's'} (a bug in Episode Lab, please report it): the notes name each rule and record; the other rules ran`,
      );
    }
    for (const rej of f.rejections.slice(0, 10)) say(`${file}: ${describeRejection(rej)}`);
    if (f.rejections.length > 10) say(`${file}: ${f.rejections.length - 10} more bad lines`);
    const c = f.coverage;
    this.reports.push({
      path: file,
      format: f.format,
      samples: f.samples,
      tokenizer: c.tokenizer,
      owners: c.owners,
      ends: c.ends,
      notes: c.notes,
      findings: [...f.fileFindings, ...f.findings],
    });
    const out = this.out;
    out.push(`${file}: ${f.format}, ${f.samples} samples${tokNote ? `, ${tokNote}` : ''}`);
    out.push(`  ${coverageLine(c)}`);
    for (const n of c.notes) out.push(`  note: ${n}`);
    out.push(...findingLines(f.findings, f.fileFindings, f.samples));
    if (f.rejections.length) this.unreadable = true;
  }

  /** A run folder's scan: each step file as a file, then the run's steps and advisories. */
  addRun(dir: string, r: Result<RunScan>): void {
    if (!r.ok) {
      this.say(r.error);
      this.unreadable = true;
      return;
    }
    const out = this.out;
    for (const f of r.value.steps.flatMap((s) => s.files)) {
      const read =
        f.error || f.format === null
          ? { error: f.error ?? `${f.path}: unreadable` }
          : { ...f, format: f.format };
      this.addFile(f.path, read, f.cached ? 'from the index cache' : '', f.coverage?.tokenizer ?? null);
      // A run's report is read as a whole: an unreadable step file is said there too, never a silence.
      if ('error' in read) out.push(`could not be read: ${read.error}`);
    }
    const { steps, advisories } = r.value;
    const bad = steps.filter((s) => s.files.some((f) => f.error || f.format === null)).map((s) => s.step);
    this.runs.push({ path: dir, steps: steps.map((s) => s.step), unreadable_steps: bad, advisories });
    if (bad.length)
      out.push(
        `${dir}: ${bad.length} of ${steps.length} completed steps could not be read (step ${bad.join(', ')}): the advisories and figures below leave them out`,
      );
    out.push(
      `${dir}: run of ${steps.length} completed steps (${steps[0].step}-${steps[steps.length - 1].step})`,
    );
    out.push(...advisoryLines(advisories, steps.length - bad.length, bad.length));
  }
}

/** What one read file gives the report: `lintFile`'s lint, or a run step's file scan. */
type FileRead = Pick<
  FileLint,
  'format' | 'samples' | 'findings' | 'fileFindings' | 'rejections' | 'coverage' | 'internalErrors'
>;

/** A run's advisories in `lint --json`: the folder, its completed steps, the advisories over them. */
interface RunReport {
  path: string;
  steps: number[];
  /** The completed steps with a file that could not be read (the run then exits 2). */
  unreadable_steps: number[];
  advisories: Advisory[];
}

/** The text of a file's findings: whole-file findings in full, then one line per rule, then the count. */
function findingLines(
  findings: readonly Finding[],
  fileFindings: readonly { rule: RuleId; message: string }[],
  samples: number,
): string[] {
  const out: string[] = [];
  const width = Math.max(...RULE_IDS.map((id) => id.length));
  for (const x of fileFindings) out.push(`  ${x.rule.padEnd(width)}  ${x.message}`);
  const byRule = new Map<RuleId, Finding[]>();
  for (const x of findings) byRule.set(x.rule, [...(byRule.get(x.rule) ?? []), x]);
  for (const id of RULE_IDS) {
    const xs = byRule.get(id);
    if (!xs) continue;
    const n = new Set(xs.map((x) => x.sample)).size;
    const first = xs[0];
    out.push(
      `  ${id.padEnd(width)}  ${xs.length} finding${xs.length === 1 ? '' : 's'} in ${n} sample${n === 1 ? '' : 's'}; ` +
        `${RULES[id].summary}; first: sample ${first.sample}${first.positions.length ? ` at ${compactPositions(first.positions)}` : ''}: ${first.message}`,
    );
  }
  const affected = new Set(findings.map((x) => x.sample)).size;
  const total = findings.length + fileFindings.length;
  out.push(
    total
      ? `  ${total} findings${findings.length ? ` in ${affected} of ${samples} samples` : ''}${fileFindings.length ? `, ${fileFindings.length} about the whole file` : ''}`
      : '  no findings',
  );
  return out;
}

/** Where the lint writes: stdout and stderr by default, arrays in tests. */
export interface LintIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

/**
 * Report the paths read, in the order given (each awaited in turn), on `io`: the text, or `--json`'s
 * `{files, runs?}`; the exit code (0 clean, 1 findings, 2 unreadable, 3 an internal error).
 */
export async function reportReads(
  reads: readonly (() => Promise<PathRead>)[],
  files: readonly string[],
  o: OptionValues,
  io: LintIO,
  say: (e: string) => void,
): Promise<number> {
  const report = new LintReport(say);
  for (let i = 0; i < files.length; i++) {
    const got = await reads[i]();
    for (const e of got.said) say(e);
    if (got.run) report.addRun(files[i], got.run);
    else {
      const r = got.lint;
      report.addFile(files[i], r.ok ? r.value : { error: r.error }, got.tokNote, got.tokenizer);
    }
  }
  const { reports, runs, out } = report;
  if (o.json) io.out(`${JSON.stringify(runs.length ? { files: reports, runs } : { files: reports })}\n`);
  else if (out.length) io.out(`${out.join('\n')}\n`);
  if (report.internal) return 3;
  if (report.unreadable) return 2;
  return reports.some((r) => r.findings.length) ? 1 : 0;
}

/** What the text says after a file's name about its tokenizer. */
export const tokenizerText = (session: DumpSession): string =>
  session.tok ? tokenizerNote(session.tokenizer) : 'no tokenizer (give --tokenizer DIR)';
