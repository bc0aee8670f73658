/** `episode-lab lint`: find loss-mask bugs in real trainers' dump files. */
import * as v from 'valibot';
import { DUMP_FORMATS, DUMP_READERS, RULE_IDS, type RuleId } from '../core/dumps/index.js';
import { RUN_WATCH_DEFAULTS } from '../core/dumps/run-folders/run-folder.js';
import { defaultJobs, LintPool } from '../core/dumps/session/lint-pool.js';
import { DumpSession } from '../core/dumps/session/session.js';
import { RUN_FOLDER_LEVELS, TOKENIZER_ENV } from '../core/dumps/session/tokenizer-choice.js';
import { parse } from '../core/schema.js';
import { type Command, type OptionValues, suggest, UsageError } from './args.js';
import { type LintIO, type PathRead, reportReads, tokenizerText } from './lint-report.js';
import {
  adviseOption,
  cliTokenizerPolicy,
  isFolder,
  lintRunSteps,
  RUN_LINT_OPTIONS,
  scanRunOnce,
} from './run-commands.js';
import { lintShard, SHARD_OPTIONS } from './shard-commands.js';

export type { LintIO } from './lint-report.js';
export { compactPositions } from './lint-report.js';

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

/** `--template-kwargs JSON` -> an object of template arguments; throws UsageError when it is not one. */
export function parseTemplateKwargs(spec: string | undefined): Record<string, unknown> | undefined {
  if (spec === undefined) return undefined;
  let x: unknown;
  try {
    x = JSON.parse(spec);
  } catch (e) {
    throw new UsageError(`--template-kwargs: not JSON (${(e as Error).message})`);
  }
  const r = parse(v.record(v.string(), v.unknown()), x, '--template-kwargs');
  if (!r.ok || Array.isArray(x))
    throw new UsageError('--template-kwargs: expected a JSON object, e.g. \'{"enable_thinking": false}\'');
  return r.value;
}

export const lintCommand: Command = {
  name: 'lint',
  summary: `Find loss-mask bugs in dump files (${DUMP_READERS.map((r) => r.label).join(', ')}) with the model's tokenizer.`,
  usage: `FILE|RUN_DIR... [--tokenizer DIR] [--template-kwargs JSON] [--allow-unknown-owners] [--format ${LINT_FORMATS.join('|')}] [--rules a,b] [--json | --json-lines [--follow]]`,
  positionals: ['FILE...'],
  options: {
    tokenizer: {
      type: 'string',
      metavar: 'DIR',
      help: `folder with tokenizer.json and tokenizer_config.json (default: one beside the file or its tokenizer/, else a tokenizer/ up to ${RUN_FOLDER_LEVELS} folders above it, else $${TOKENIZER_ENV}, else none)`,
    },
    format: { type: 'string', choices: LINT_FORMATS, default: 'auto', help: 'file format' },
    rules: { type: 'string', metavar: 'a,b', help: `rules to run (default all: ${RULE_IDS.join(', ')})` },
    logprobGap: { type: 'number', default: 2, min: 0, metavar: 'NATS', help: 'logprob-gap threshold' },
    templateKwargs: {
      type: 'string',
      metavar: 'JSON',
      help: "chat template arguments for every record, e.g. '{\"enable_thinking\": false}' (a record's chat_template_kwargs add to them)",
    },
    allowUnknownOwners: {
      type: 'boolean',
      default: false,
      help: 'when owners cannot be derived, say so in a note instead of an owners-unknown finding (exit 0 possible)',
    },
    json: {
      type: 'boolean',
      default: false,
      help: 'print {"files": [{path, format, samples, tokenizer, owners, ends, notes, findings}], "runs": [{path, steps, unreadable_steps, advisories}] (run folders only)}',
    },
    jobs: {
      type: 'int',
      min: 1,
      metavar: 'N',
      help: "lint on N worker threads: files, and ranges of a JSONL file's lines, at once; the same output (default: the machine's cores)",
    },
    ...RUN_LINT_OPTIONS,
    ...SHARD_OPTIONS,
  },
  run: (o, files) => runLint(o, files),
};

/**
 * Run `episode-lab lint` on files with parsed options; returns the exit code (0 clean, 1 findings, 2
 * unreadable, 3 an internal error: main.ts's EXIT). `pooling`: the threads' options (LintPool's; tests
 * cut small files into ranges).
 */
export async function runLint(
  o: OptionValues,
  files: string[],
  io: LintIO = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) },
  pooling: { minPartBytes?: number } = {},
): Promise<number> {
  if (files.length === 0) throw new UsageError('give one or more dump files (JSONL); see --help');
  const say = (e: string) => io.err(`episode-lab lint: ${e}\n`);
  const rules = parseRules(o.rules as string | undefined);
  const policy = cliTokenizerPolicy(o, say);
  const format = o.format as (typeof LINT_FORMATS)[number];
  const logprobGap = o.logprobGap as number;
  const templateKwargs = parseTemplateKwargs(o.templateKwargs as string | undefined);
  const allowUnknownOwners = o.allowUnknownOwners === true;
  const advise = adviseOption(o);
  const settings = { rules, policy, logprobGap, format, templateKwargs, allowUnknownOwners, advise };
  if (o.follow || o.jsonLines) return lintRunSteps(files, settings, o, io);
  const jobs = o.jobs === undefined ? defaultJobs() : Number(o.jobs);
  const quietMs = Number(o.quietMs ?? RUN_WATCH_DEFAULTS.quietMs);
  if (o.shard !== undefined) return lintShard(o, files, { ...settings, quietMs, jobs }, io, say);
  const pool = jobs > 1 ? new LintPool(jobs, pooling) : undefined;
  /** One path read: a run folder's scan or a file's lint, and what was said meanwhile. */
  const readOne = async (file: string): Promise<PathRead> => {
    const said: string[] = [];
    if (isFolder(file))
      return { said, run: await scanRunOnce(file, settings, quietMs, (e) => said.push(e), pool) };
    const session = DumpSession.open(file, policy);
    const tok = session.tok;
    const tokNote = tokenizerText(session);
    const lintOpts = { rules, format, logprobGap, templateKwargs, allowUnknownOwners };
    return { said, lint: await session.lint(lintOpts, pool), tokNote, tokenizer: tok?.source ?? null };
  };
  // With workers, every path is started at once; they are reported in the order given.
  const started = pool ? files.map(readOne) : undefined;
  const reads = files.map((f, i) => () => (started ? started[i] : readOne(f)));
  try {
    return await reportReads(reads, files, o, io, say);
  } finally {
    await pool?.close();
  }
}
