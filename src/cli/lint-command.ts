/** `episode-lab lint`: find loss-mask bugs in real trainers' dump files. */

import {
  DUMP_FORMATS,
  DUMP_READERS,
  type DumpTokenizer,
  describeRejection,
  type FileLint,
  type Finding,
  findTokenizerBeside,
  lintFile,
  loadTokenizerDir,
  RULE_IDS,
  RULES,
  type RuleId,
} from '../core/dumps/index.js';
import { RUN_WATCH_DEFAULTS } from '../core/dumps/run-folder.js';
import type { Advisory } from '../core/dumps/run-health.js';
import { type Command, type OptionValues, suggest, UsageError } from './args.js';
import {
  adviseOption,
  advisoryLines,
  isFolder,
  lintRunSteps,
  RUN_LINT_OPTIONS,
  scanRunOnce,
} from './run-commands.js';

/** The `--format` choices: `auto` (detect from the first record), then every registered format. */
export const LINT_FORMATS = ['auto', ...DUMP_FORMATS] as const;

/** `--rules a,b` -> the set of rule ids; throws UsageError naming an unknown rule. */
export function parseRules(spec: string | undefined): Set<RuleId> | undefined {
  if (!spec) return undefined;
  const out = new Set<RuleId>();
  for (const name of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(RULE_IDS as readonly string[]).includes(name)) {
      const hint = suggest(name, RULE_IDS);
      throw new UsageError(
        `unknown rule '${name}'${hint ? ` (did you mean '${hint}'?)` : ''}; rules are ${RULE_IDS.join(', ')}`,
      );
    }
    out.add(name as RuleId);
  }
  return out;
}

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

interface FileReport {
  path: string;
  format: string | null;
  samples: number;
  findings: Omit<Finding, never>[];
  error?: string;
}

/** What reading one file found, as `lintFile` and the run scan both give it. */
type FileRead = Pick<FileLint, 'format' | 'samples' | 'findings' | 'rejections' | 'ownerSources'>;

/** The text of one read file: its header line, a line per rule with findings, and the count. */
function fileText(file: string, f: FileRead, tokNote: string): string[] {
  const out: string[] = [];
  const owners = f.ownerSources.includes('mask')
    ? 'owners from the mask alone (template unknown: the owner rules are off)'
    : f.ownerSources.includes('file')
      ? 'owners from the file'
      : 'owners from the template';
  out.push(`${file}: ${f.format}, ${f.samples} samples${tokNote ? `, ${tokNote}` : ''}, ${owners}`);
  const byRule = new Map<RuleId, Finding[]>();
  for (const x of f.findings) byRule.set(x.rule, [...(byRule.get(x.rule) ?? []), x]);
  const width = Math.max(...RULE_IDS.map((id) => id.length));
  for (const id of RULE_IDS) {
    const xs = byRule.get(id);
    if (!xs) continue;
    const samples = new Set(xs.map((x) => x.sample)).size;
    const first = xs[0];
    out.push(
      `  ${id.padEnd(width)}  ${xs.length} finding${xs.length === 1 ? '' : 's'} in ${samples} sample${samples === 1 ? '' : 's'}; ` +
        `${RULES[id].summary}; first: sample ${first.sample}${first.positions.length ? ` at ${compactPositions(first.positions)}` : ''}: ${first.message}`,
    );
  }
  const affected = new Set(f.findings.map((x) => x.sample)).size;
  out.push(
    f.findings.length
      ? `  ${f.findings.length} findings in ${affected} of ${f.samples} samples`
      : '  no findings',
  );
  return out;
}

/** The bad lines of a file on `err` (the first ten); true when there is one. */
function reportRejections(file: string, f: Pick<FileRead, 'rejections'>, err: (s: string) => void): boolean {
  for (const rej of f.rejections.slice(0, 10)) err(`episode-lab lint: ${file}: ${describeRejection(rej)}\n`);
  if (f.rejections.length > 10)
    err(`episode-lab lint: ${file}: ${f.rejections.length - 10} more bad lines\n`);
  return f.rejections.length > 0;
}

/** A run's advisories in `lint --json`: the folder, its completed steps, the advisories over them. */
interface RunReport {
  path: string;
  steps: number[];
  advisories: Advisory[];
}

export const lintCommand: Command = {
  name: 'lint',
  summary: `Find loss-mask bugs in dump files (${DUMP_READERS.map((r) => r.label).join(', ')}) with the model's tokenizer.`,
  usage: `FILE|RUN_DIR... [--tokenizer DIR] [--format ${LINT_FORMATS.join('|')}] [--rules a,b] [--json | --json-lines [--follow]]`,
  positionals: ['FILE...'],
  options: {
    tokenizer: {
      type: 'string',
      metavar: 'DIR',
      help: 'folder with tokenizer.json and tokenizer_config.json (default: one beside the file, or none)',
    },
    format: { type: 'string', choices: LINT_FORMATS, default: 'auto', help: 'file format' },
    rules: { type: 'string', metavar: 'a,b', help: `rules to run (default all: ${RULE_IDS.join(', ')})` },
    logprobGap: { type: 'number', default: 2, min: 0, metavar: 'NATS', help: 'logprob-gap threshold' },
    json: {
      type: 'boolean',
      default: false,
      help: 'print {"files": [{path, format, samples, findings}], "runs": [{path, steps, advisories}] (run folders only)}',
    },
    ...RUN_LINT_OPTIONS,
  },
  run: (o, files) => runLint(o, files),
};

/** Where the lint writes: stdout and stderr by default, arrays in tests. */
export interface LintIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Run `episode-lab lint` on files with parsed options; returns the exit code (0 clean, 1 findings, 2 unreadable). */
export async function runLint(
  o: OptionValues,
  files: string[],
  io: LintIO = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) },
): Promise<number> {
  if (files.length === 0) throw new UsageError('give one or more dump files (JSONL); see --help');
  const rules = parseRules(o.rules as string | undefined);
  let given: DumpTokenizer | undefined;
  if (o.tokenizer) {
    const t = loadTokenizerDir(o.tokenizer as string);
    if (!t.ok) throw new UsageError(`--tokenizer: ${t.error}`);
    given = t.value;
  }
  const format = o.format as (typeof LINT_FORMATS)[number];
  const logprobGap = o.logprobGap as number;
  const advise = adviseOption(o);
  const settings = { rules, tok: given, logprobGap, format, advise };
  if (o.follow || o.jsonLines) return lintRunSteps(files, settings, o, io);
  const reports: FileReport[] = [];
  const runs: RunReport[] = [];
  const out: string[] = [];
  let unreadable = false;
  const say = (e: string) => io.err(`episode-lab lint: ${e}\n`);
  for (const file of files) {
    if (isFolder(file)) {
      const r = await scanRunOnce(file, settings, Number(o.quietMs ?? RUN_WATCH_DEFAULTS.quietMs), say);
      if (!r.ok) {
        say(r.error);
        unreadable = true;
        continue;
      }
      for (const f of r.value.steps.flatMap((s) => s.files)) {
        if (f.error || f.format === null) {
          unreadable = true;
          reports.push({ path: f.path, format: null, samples: 0, findings: [], error: f.error });
          say(f.error ?? `${f.path}: unreadable`);
          continue;
        }
        if (reportRejections(f.path, f, io.err)) unreadable = true;
        reports.push({ path: f.path, format: f.format, samples: f.samples, findings: f.findings });
        out.push(...fileText(f.path, { ...f, format: f.format }, f.cached ? 'from the index cache' : ''));
      }
      const { steps, advisories } = r.value;
      runs.push({ path: file, steps: steps.map((s) => s.step), advisories });
      out.push(
        `${file}: run of ${steps.length} completed steps (${steps[0].step}-${steps[steps.length - 1].step})`,
      );
      out.push(...advisoryLines(advisories));
      continue;
    }
    let tok = given;
    let tokNote = given ? `tokenizer ${given.source} (${given.family})` : '';
    if (!tok) {
      const beside = findTokenizerBeside(file);
      const t = beside ? loadTokenizerDir(beside) : undefined;
      if (t?.ok) {
        tok = t.value;
        tokNote = `tokenizer ${beside} found beside the file (${tok.family})`;
      } else tokNote = `no tokenizer${t && !t.ok ? ` (${t.error})` : ''} (give --tokenizer DIR)`;
    }
    const r = await lintFile(file, { tok, rules, format, logprobGap });
    if (!r.ok) {
      unreadable = true;
      reports.push({ path: file, format: null, samples: 0, findings: [], error: r.error });
      say(r.error);
      continue;
    }
    const f = r.value;
    if (reportRejections(file, f, io.err)) unreadable = true;
    reports.push({ path: file, format: f.format, samples: f.samples, findings: f.findings });
    out.push(...fileText(file, f, tokNote));
  }
  if (o.json) io.out(`${JSON.stringify(runs.length ? { files: reports, runs } : { files: reports })}\n`);
  else if (out.length) io.out(`${out.join('\n')}\n`);
  if (unreadable) return 2;
  return reports.some((r) => r.findings.length) ? 1 : 0;
}
