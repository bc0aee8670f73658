/**
 * Dump-file scale benchmark: writes a large NeMo-RL-style `train_data_step{N}.jsonl`
 * to os.tmpdir() (never to the repo), then times indexing it by byte offsets, the read + `JSON.parse`
 * floor of the file, and linting it with the id-level rules and the real Qwen3 tokenizer (the CLI's
 * lint, bundled as the CLI is, in a process of its own per `--jobs` from 1 to the cores), with the
 * lint's rate as a share of the floor's, the scaling over workers and each run's peak RSS. Goals:
 * the lint at 0.6 of the floor or better on one thread; < 500 MB for one worker, + 250 MB per more.
 *
 *   node --import tsx bench/dumps.ts                 (1024 MB)
 *   node --import tsx bench/dumps.ts --mb 200        (a smaller file)
 *   node --import tsx bench/dumps.ts --file F.jsonl  (an existing file, not deleted)
 *   --keep keeps the generated file; --pad N pads every line to N tokens (default 8192);
 *   --jobs N times --jobs 1 to N (default: the machine's cores).
 *   --shards N times the file's lint in N shards (`lint --shard I/N`, each its own process of
 *   dist/cli.js, one after another) and their `merge`, against the whole lint's process (default 4;
 *   0: not timed); the merged JSON must be the whole lint's.
 *   --mismatch times the mismatch summary of the whole file instead (goal: < 60 s, < 500 MB).
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { QWEN3_DIR } from '../scripts/make-dump-fixtures.js';
import { indexLines, parseRecord, readLines } from '../src/core/dumps/index.js';
import { mismatchFile } from '../src/core/dumps/mismatch/mismatch-file.js';
import { builtCli } from '../test/built-cli.js';
import { FILE_OPTIONS, generate, openFirstSample, qwen3 } from './nemo-file.js';

const { values: args } = parseArgs({
  options: {
    ...FILE_OPTIONS,
    mismatch: { type: 'boolean', default: false },
    jobs: { type: 'string' },
    shards: { type: 'string', default: '4' },
  },
});

const tok = qwen3();
const peak = () => Math.round(process.resourceUsage().maxRSS / 1024);
const mb = (bytes: number) => bytes / 2 ** 20;

async function main() {
  const file = args.file ?? path.join(os.tmpdir(), `episode-lab-bench-train_data_step1-${process.pid}.jsonl`);
  if (!args.file) {
    const t0 = performance.now();
    generate(tok, file, Number(args.mb), Number(args.pad));
    process.stdout.write(
      `generated ${file}: ${mb(fs.statSync(file).size).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
  }
  const size = fs.statSync(file).size;
  const rssBefore = peak();
  try {
    if (args.mismatch) return await timeMismatch(file, size, rssBefore);
    let t0 = performance.now();
    for await (const line of readLines(file)) {
      const r = parseRecord('nemo-rl', line.text, line.index);
      if (!r.ok) throw new Error('the first line is not a NeMo-RL record');
      break;
    }
    const first = performance.now() - t0;

    // Opening the file in VS Code, up to its first sample (openFirstSample's contract).
    t0 = performance.now();
    await openFirstSample(file);
    const firstOnScreen = performance.now() - t0;

    t0 = performance.now();
    const idx = await indexLines(file);
    const indexS = (performance.now() - t0) / 1000;

    // The floor and the one-thread lint, 3 times each, interleaved (a change in the machine's load
    // touches both), compared by their medians.
    const child = buildLintChild();
    const floors: number[] = [];
    const ones: ReturnType<typeof lintInChild>[] = [];
    for (let i = 0; i < 3; i++) {
      floors.push(readParsePass(file));
      ones.push(lintInChild(child, file, 1));
    }
    const floorS = median(floors);
    const one = ones.sort((a, b) => a.seconds - b.seconds)[1];
    const runs = [
      { jobs: 1, ...one },
      ...jobCounts()
        .slice(1)
        .map((jobs) => ({ jobs, ...lintInChild(child, file, jobs) })),
    ];
    const lintS = one.seconds;
    const total = indexS + lintS;
    const rows = [
      [
        'file',
        `${mb(size).toFixed(0)} MB, ${idx.offsets.length} lines (${one.format}), padded to ${args.pad} tokens`,
      ],
      ['first sample parsed', `${first.toFixed(0)} ms`],
      [
        'first sample to show',
        `${(firstOnScreen / 1000).toFixed(2)} s (tokenizer load, index, record 1 read and linted; goal < 2 s)`,
      ],
      ['index (byte offsets)', `${indexS.toFixed(1)} s, ${(mb(size) / indexS).toFixed(0)} MB/s`],
      [
        'lint (id-level rules)',
        `${lintS.toFixed(1)} s, ${(mb(size) / lintS).toFixed(0)} MB/s, ${(one.samples / lintS).toFixed(0)} samples/s (the CLI's bundle, --jobs 1; median of 3, interleaved with the floor's)`,
      ],
      [
        'read + JSON.parse',
        `${floorS.toFixed(1)} s, ${(mb(size) / floorS).toFixed(0)} MB/s (the floor: 16 MiB chunks, every line parsed; median of 3, ${floors.map((x) => x.toFixed(2)).join(', ')} s)`,
      ],
      [
        'lint / floor',
        `${(floorS / lintS).toFixed(2)}x (the lint's rate as a share of the floor's; goal >= 0.6, aim 1.0)`,
      ],
      [
        'index + lint',
        `${total.toFixed(1)} s  (goal for 1 GB: < 60 s; scaled to 1 GB: ${((total * 1024) / mb(size)).toFixed(1)} s)`,
      ],
      [
        'findings',
        Object.entries(one.byRule)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none',
      ],
      ...runs.map((x) => [
        `lint --jobs ${x.jobs}`,
        `${x.seconds.toFixed(1)} s, ${(mb(size) / x.seconds).toFixed(0)} MB/s, ${(lintS / x.seconds).toFixed(2)}x of --jobs 1, ` +
          `peak RSS ${x.rssMb} MB (goal < ${500 + 250 * (x.jobs - 1)} MB), ${x.sha === one.sha ? 'the same JSON' : 'JSON DIFFERS from --jobs 1'}`,
      ]),
      ...shardRows(file),
      ['peak RSS (this process)', `${peak()} MB (${rssBefore} MB before reading, tokenizer loaded)`],
      ['machine', machine()],
    ];
    for (const [k, v] of rows) process.stdout.write(`${k.padEnd(24)} ${v}\n`);
    if (runs.some((x) => x.sha !== one.sha)) process.exitCode = 1;
  } finally {
    if (!args.file && !args.keep) fs.rmSync(file, { force: true });
  }
}

/** A process of the built CLI with `args`: its wall seconds, stdout's SHA-256 and peak RSS in MB; throws when it fails. */
function cliProcess(args: string[]): { seconds: number; sha: string; rssMb: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, builtCli(), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const rssMb = Math.round(Number(r.stderr.trim().split('\n').pop()) / 1024);
  return { seconds, sha: createHash('sha256').update(r.stdout).digest('hex'), rssMb };
}

/**
 * The file's lint in `--shards N` shards, one process each, one after another (as N machines would
 * run them at once), and their merge, against the whole lint's process: wall seconds, the same
 * JSON or not (a difference fails the benchmark).
 */
function shardRows(file: string): string[][] {
  const n = Number(args.shards);
  if (!(n > 0)) return [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'episode-lab-bench-shards-'));
  try {
    const common = [file, '--tokenizer', QWEN3_DIR, '--jobs', '1'];
    const whole = cliProcess(['lint', ...common, '--json']);
    const parts = Array.from({ length: n }, (_, i) => path.join(dir, `shard-${i}.json`));
    const shards = parts.map((out, i) =>
      cliProcess(['lint', ...common, '--shard', `${i}/${n}`, '--out', out]),
    );
    const merge = cliProcess(['merge', ...parts, '--json']);
    const secs = shards.map((x) => x.seconds);
    const longest = Math.max(...secs);
    const same = merge.sha === whole.sha;
    if (!same) process.exitCode = 1;
    const kb = parts.map((p) => fs.statSync(p).size / 1024);
    return [
      [
        'lint, one process',
        `${whole.seconds.toFixed(2)} s wall (dist/cli.js lint --json --jobs 1: start, tokenizer load, lint)`,
      ],
      [
        `lint in ${n} shards`,
        `${secs.map((x) => x.toFixed(2)).join(', ')} s wall, one process each (longest ${longest.toFixed(2)} s, sum ${secs.reduce((a, b) => a + b, 0).toFixed(2)} s), peak RSS ${Math.max(...shards.map((x) => x.rssMb))} MB, partials ${Math.min(...kb).toFixed(0)}-${Math.max(...kb).toFixed(0)} KB`,
      ],
      [
        'merge',
        `${merge.seconds.toFixed(2)} s wall, peak RSS ${merge.rssMb} MB; on ${n} machines ${(whole.seconds / (longest + merge.seconds)).toFixed(2)}x of one process (the longest shard, then the merge); ${same ? 'the same JSON' : 'JSON DIFFERS from the whole lint'}`,
      ],
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The `--jobs` counts timed: 1 up to the machine's cores (`--jobs N`: up to N). */
function jobCounts(): number[] {
  const most = Math.max(1, Number(args.jobs ?? os.cpus().length));
  return Array.from({ length: most }, (_, i) => i + 1);
}

/** The machine: cores and the load average. */
function machine(): string {
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  return `${os.cpus().length} cores, load ${load} (1, 5, 15 min)`;
}

/** bench/lint-child.ts and the lint worker bundled as the CLI is (scripts/build.mjs), in a temp folder: the child's path. */
function buildLintChild(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'episode-lab-bench-lint-'));
  for (const [entry, name] of [
    ['bench/lint-child.ts', 'lint-child.js'],
    ['src/core/dumps/session/lint-worker.ts', 'lint-worker.js'],
  ])
    buildSync({
      entryPoints: [entry],
      outfile: path.join(dir, name),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'es2022',
      external: ['@tensorflow/tfjs-node'],
      logLevel: 'error',
    });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'lint-child.js');
}

/** One `lint --json --jobs N` of the file in its own process: seconds, peak RSS, records, findings by rule, the output's hash. */
function lintInChild(child: string, file: string, jobs: number) {
  const r = spawnSync(process.execPath, [child, file, QWEN3_DIR, String(jobs)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`lint --jobs ${jobs} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as {
    seconds: number;
    rssMb: number;
    sha: string;
    format: string;
    samples: number;
    byRule: Record<string, number>;
  };
}

/**
 * One pass of the read + parse floor of a JSONL file, in seconds: the file read in 16 MiB chunks,
 * split at newlines, every non-blank line decoded and given to `JSON.parse` (the page cache is warm:
 * the file was just written or read).
 */
function readParsePass(file: string): number {
  const t0 = performance.now();
  const fd = fs.openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(16 * 2 ** 20);
  let carry: Buffer | null = null;
  let pos = 0;
  try {
    for (;;) {
      const got = fs.readSync(fd, chunk, 0, chunk.length, pos);
      if (got === 0) break;
      pos += got;
      let from = 0;
      for (let nl = chunk.indexOf(0x0a, 0); nl >= 0 && nl < got; nl = chunk.indexOf(0x0a, from)) {
        const text = carry
          ? Buffer.concat([carry, chunk.subarray(from, nl)]).toString('utf8')
          : chunk.toString('utf8', from, nl);
        carry = null;
        if (text.trim()) JSON.parse(text);
        from = nl + 1;
      }
      if (from < got) carry = Buffer.concat([carry ?? Buffer.alloc(0), chunk.subarray(from, got)]);
    }
    if (carry?.toString('utf8').trim()) JSON.parse(carry.toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The mismatch summary of the whole file, timed, with the machine's cores and load. */
async function timeMismatch(file: string, size: number, rssBefore: number): Promise<void> {
  const t0 = performance.now();
  const r = await mismatchFile(file, { tok, format: 'auto' });
  const s = (performance.now() - t0) / 1000;
  if (!r.ok) throw new Error(r.error);
  const f = r.value;
  const rows = [
    ['file', `${mb(size).toFixed(0)} MB, ${f.samples} samples (${f.format}), padded to ${args.pad} tokens`],
    ['mismatch summary', `${s.toFixed(1)} s, ${(mb(size) / s).toFixed(0)} MB/s (goal for 1 GB: < 60 s)`],
    ['tokens', `${f.tokens} with both log-probs, ${f.excluded_placeholders} placeholders excluded`],
    [
      '|d| p50, p99',
      `${f.summary.abs_p50}, ${f.summary.abs_p99} (the file read ${f.readings === 1 ? 'once' : `${f.readings} times`})`,
    ],
    ['peak RSS', `${peak()} MB (goal < 500 MB; ${rssBefore} MB before reading, tokenizer loaded)`],
    ['machine', machine()],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(22)} ${v}\n`);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exitCode = 1;
});
