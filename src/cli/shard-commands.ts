/**
 * A lint split across machines: `lint PATH... --shard I/N --out FILE` lints shard I's share of the
 * work (session/shards.ts) and writes its partial result; `merge FILE...` joins every shard's
 * partial into exactly what `lint PATH...` prints (`--json` byte for byte) and exits with its code.
 * A scheduler runs the shards (a Slurm job array, a Kubernetes Indexed Job: docs/lint-rules.md).
 */
import * as fs from 'node:fs';
import { type AdvisoryThresholds, advise } from '../core/dumps/run-folders/run-health.js';
import type { FileScan } from '../core/dumps/run-folders/step-scan.js';
import { stepReportOf, unreadableScan } from '../core/dumps/run-folders/step-scan.js';
import { LintPool } from '../core/dumps/session/lint-pool.js';
import { DumpSession } from '../core/dumps/session/session.js';
import {
  type MergedFile,
  type MergedPath,
  mergeShards,
  partialText,
  planShards,
  readPartial,
  runShard,
  SHARD_PART_BYTES,
  type ShardInput,
  type ShardPartial,
} from '../core/dumps/session/shards.js';
import { writeFileAtomic } from '../core/durable.js';
import { fail, ok, type Result } from '../core/schema.js';
import { type Command, type OptionSpec, type OptionValues, UsageError } from './args.js';
import { type LintIO, type PathRead, reportReads, tokenizerText } from './lint-report.js';
import { completed, isFolder, type RunLintSettings, type RunScan, runScanOptions } from './run-commands.js';

/** The options `lint` gains for shards. */
export const SHARD_OPTIONS: Record<string, OptionSpec> = {
  shard: {
    type: 'string',
    metavar: 'I/N',
    help: 'lint share I of N (I from 0 to N-1: $SLURM_ARRAY_TASK_ID, $JOB_COMPLETION_INDEX) of the files and their record ranges, and write its partial result (--out); `merge` joins the N partials',
  },
  out: {
    type: 'string',
    metavar: 'FILE',
    help: 'with --shard: where the partial result goes (written whole or not at all; default stdout)',
  },
  partBytes: {
    type: 'int',
    min: 1,
    default: SHARD_PART_BYTES,
    metavar: 'BYTES',
    help: 'with --shard: a line-based file is cut into record ranges of at least this many bytes (every shard of one lint must be given the same)',
  },
};

/** `I/N` -> {index, count}; throws UsageError when it is not one. */
export function parseShard(spec: string): { index: number; count: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(spec);
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index >= count || count > 100_000)
    throw new UsageError(
      `--shard: expected I/N with 0 <= I < N (e.g. --shard 0/4 ... --shard 3/4), found ${JSON.stringify(spec)}`,
    );
  return { index, count };
}

/** What `lint` has parsed, for a shard. */
export type ShardSettings = RunLintSettings & { quietMs: number; jobs: number };

/** A path given to a shard, resolved as `lint` resolves it (its tokenizer chosen, a run's steps listed). */
async function shardInput(file: string, s: ShardSettings): Promise<ShardInput> {
  const said: string[] = [];
  if (isFolder(file)) {
    const r = await completed(file, s.quietMs);
    if (!r.ok) return { kind: 'error', path: file, said, error: r.error };
    const tok = runScanOptions(file, s, (e) => said.push(e)).tok;
    return { kind: 'run', path: file, said, tok, steps: r.value };
  }
  const session = DumpSession.open(file, s.policy ?? {});
  const { tok, noTokenizerWhy } = session;
  return { kind: 'file', path: file, said, tok, noTokenizerWhy, note: tokenizerText(session) };
}

/** `lint PATH... --shard I/N [--out FILE]`: the exit code (0 written, 3 not). */
export async function lintShard(
  o: OptionValues,
  files: string[],
  s: ShardSettings,
  io: LintIO,
  say: (e: string) => void,
): Promise<number> {
  const { index, count } = parseShard(String(o.shard));
  if (o.json || o.follow || o.jsonLines)
    throw new UsageError(
      '--shard writes a partial result: leave out --json (merge prints it), --follow and --json-lines',
    );
  const inputs: ShardInput[] = [];
  for (const f of files) inputs.push(await shardInput(f, s));
  const planned = await planShards(inputs, count, {
    opts: {
      rules: s.rules ? [...s.rules] : undefined,
      logprobGap: s.logprobGap,
      templateKwargs: s.templateKwargs,
      allowUnknownOwners: s.allowUnknownOwners,
    },
    format: s.format ?? 'auto',
    partBytes: Number(o.partBytes ?? SHARD_PART_BYTES),
    extra: { advise: s.advise ?? null },
  });
  const pool = s.jobs > 1 ? new LintPool(s.jobs) : undefined;
  let partial: ShardPartial | undefined;
  try {
    partial = await runShard(planned, index, pool);
  } finally {
    await pool?.close();
  }
  if (!partial) return 3;
  const text = `${partialText(partial)}\n`;
  const mine = planned.plan.units.filter((u) => u.shard === index);
  const mb = (mine.reduce((n, u) => n + u.bytes, 0) / 2 ** 20).toFixed(1);
  if (o.out) writeFileAtomic(String(o.out), text);
  else io.out(text);
  say(
    `shard ${index}/${count}: ${mine.length} of ${planned.plan.units.length} units (${mb} MB) linted${o.out ? `; wrote ${o.out}` : ''}`,
  );
  return 0;
}

export const mergeCommand: Command = {
  name: 'merge',
  summary:
    "Join the partial results of a lint's shards (lint --shard I/N --out FILE) into the lint's report.",
  usage: 'PARTIAL... [--json]',
  positionals: ['PARTIAL...'],
  options: {
    json: {
      type: 'boolean',
      default: false,
      help: "print lint --json's report (byte for byte the unsharded lint's)",
    },
  },
  run: (o, files) => runMerge(o, files),
};

/**
 * `merge PARTIAL...`: the report of the sharded lint, as `lint` prints it, and its exit code; 2
 * with the reason when the partials cannot be read or joined (a shard missing, of another lint).
 */
export async function runMerge(
  o: OptionValues,
  files: string[],
  io: LintIO = { out: (x) => process.stdout.write(x), err: (x) => process.stderr.write(x) },
): Promise<number> {
  if (files.length === 0)
    throw new UsageError('give the partial result of every shard (lint --shard I/N --out FILE)');
  const say = (e: string) => io.err(`episode-lab merge: ${e}\n`);
  const partials: { where: string; partial: ShardPartial }[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = await fs.promises.readFile(f, 'utf8');
    } catch (e) {
      say(`${f}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return 2;
    }
    const r = readPartial(text, f);
    if (!r.ok) {
      say(r.error);
      return 2;
    }
    partials.push({ where: f, partial: r.value });
  }
  const merged = await mergeShards(partials);
  if (!merged.ok) {
    say(merged.error);
    return 2;
  }
  const thresholds = (merged.value.plan.extra.advise ?? undefined) as AdvisoryThresholds | undefined;
  const paths = merged.value.paths;
  const reads = paths.map((p) => () => Promise.resolve(pathRead(p, thresholds)));
  // The lint's own words: its messages are said as `episode-lab lint` said them.
  const lintSay = (e: string) => io.err(`episode-lab lint: ${e}\n`);
  return reportReads(
    reads,
    paths.map((p) => p.path),
    o,
    io,
    lintSay,
  );
}

/** A merged path as `lint` reads it. */
function pathRead(p: MergedPath, thresholds: AdvisoryThresholds | undefined): PathRead {
  if (p.kind === 'error') return { said: p.said, run: fail(p.error) };
  if (p.kind === 'file') {
    const lint = p.lint.ok ? ok(withoutFacts(p.lint.value)) : p.lint;
    return { said: p.said, lint, tokNote: p.note, tokenizer: p.tokenizer };
  }
  const steps = p.steps.map((s) =>
    stepReportOf(
      s.step,
      s.files.map((f, i) => fileScan(f, s.step.files[i])),
    ),
  );
  const run: Result<RunScan> = ok({ dir: p.path, steps, advisories: advise(steps, thresholds) });
  return { said: p.said, run };
}

/** A merged file's lint without its facts. */
function withoutFacts(f: MergedFile) {
  const { facts: _, file: __, ...lint } = f;
  return lint;
}

/** A merged run file as a step's scan. */
function fileScan(f: Result<MergedFile>, file: string): FileScan {
  if (!f.ok) return unreadableScan(file, f.error);
  const { cancelled: _, file: __, ...lint } = f.value;
  return { ...lint, cached: false };
}
