/**
 * Dump-file scale benchmark: writes a large NeMo-RL-style `train_data_step{N}.jsonl`
 * to os.tmpdir() (never to the repo), then times indexing it by byte offsets and linting it with the
 * id-level rules and the real Qwen3 tokenizer, one line in memory at a time, and reports the peak
 * RSS. The goal: 1 GB indexed and linted in under 60 s with under 500 MB of memory.
 *
 *   node --import tsx bench/dumps.ts                 (1024 MB)
 *   node --import tsx bench/dumps.ts --mb 200        (a smaller file)
 *   node --import tsx bench/dumps.ts --file F.jsonl  (an existing file, not deleted)
 *   --keep keeps the generated file; --pad N pads every line to N tokens (default 8192).
 *   --mismatch times the mismatch summary of the whole file instead (goal: < 60 s, < 500 MB).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  build,
  conversations,
  cutVariant,
  nemoRlLine,
  QWEN3_DIR,
  variant,
} from '../scripts/make-dump-fixtures.js';
import {
  type ChatMessage,
  indexLines,
  lintFile,
  loadTokenizerDir,
  parseRecord,
  readLines,
} from '../src/core/dumps/index.js';
import { mismatchFile } from '../src/core/dumps/mismatch-file.js';
import { Rng } from '../src/core/rng.js';
import { dumpOpen, dumpSample } from '../src/trainer/dump-jobs.js';

const { values: args } = parseArgs({
  options: {
    mb: { type: 'string', default: '1024' },
    pad: { type: 'string', default: '8192' },
    file: { type: 'string' },
    keep: { type: 'boolean', default: false },
    mismatch: { type: 'boolean', default: false },
  },
});

const loaded = loadTokenizerDir(QWEN3_DIR);
if (!loaded.ok) throw new Error(loaded.error);
const tok = loaded.value;
const peak = () => Math.round(process.resourceUsage().maxRSS / 1024);
const mb = (bytes: number) => bytes / 2 ** 20;

/** A long multi-turn tool conversation (n tool rounds) rendered with the Qwen3 template. */
function longConversation(rounds: number): ChatMessage[] {
  const tools = conversations()[1];
  const msgs: ChatMessage[] = [tools.messages[0]];
  for (let r = 0; r < rounds; r++) {
    msgs.push({
      ...tools.messages[1],
      tool_calls: (tools.messages[1].tool_calls ?? []).map((c) => ({ ...(c as object), id: `c${r}` })),
    });
    msgs.push({
      role: 'tool',
      tool_call_id: `c${r}`,
      content: `FAILED test_${r}: expected ${r} got ${r + 1}\n${'trace line\n'.repeat(20)}done`,
    });
  }
  msgs.push(tools.messages[5]);
  return msgs;
}

/** Write a NeMo-RL-style file of about `targetMb` MB; 1 line in 16 has untrained EOS tokens. */
function generate(file: string, targetMb: number, padTo: number): void {
  const rng = new Rng(7);
  const tools = conversations()[1].tools;
  const lines: string[] = [];
  for (const rounds of [4, 8, 12, 16, 20, 24, 28, 32]) {
    const b = build(tok, longConversation(rounds), tools);
    if (b.ids.length > padTo)
      throw new Error(`a ${rounds}-round conversation has ${b.ids.length} tokens > --pad ${padTo}`);
    const v = variant(b, rng);
    const T = v.ids.length - 1; // NeMo-RL ends at the last <|im_end|>
    const cut = cutVariant(v, T);
    lines.push(nemoRlLine(cut, 0, padTo));
    const bad = { ...cut, mask: cut.mask.map((m, i) => (cut.ids[i] === tok.id('<|im_end|>') ? 0 : m)) };
    lines.push(nemoRlLine(bad, 0, padTo));
  }
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let idx = 0;
  const target = targetMb * 2 ** 20;
  while (written < target) {
    const base = lines[idx % 16 === 15 ? 1 + 2 * (idx % 8) : 2 * (idx % 8)];
    const line = `${base.replace(/"idx":0}$/, `"idx":${idx}}`)}\n`;
    written += fs.writeSync(fd, line);
    idx++;
  }
  fs.closeSync(fd);
}

async function main() {
  const file = args.file ?? path.join(os.tmpdir(), `episode-lab-bench-train_data_step1-${process.pid}.jsonl`);
  if (!args.file) {
    const t0 = performance.now();
    generate(file, Number(args.mb), Number(args.pad));
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

    // What opening the file in VS Code does before the first sample is on screen, in the trainer
    // process: load the tokenizer, index the file, read and lint record 1 (the whole-file lint follows).
    t0 = performance.now();
    const quick = await dumpOpen(
      { kind: 'dumpOpen', file, tokenizer: QWEN3_DIR, format: 'auto', lint: false },
      { progress: () => {}, cancelled: () => false },
    );
    await dumpSample({
      kind: 'dumpSample',
      file,
      tokenizer: QWEN3_DIR,
      format: quick.format,
      record: 0,
      offset: quick.offsets[0],
      bytes: quick.lengths[0],
    });
    const firstOnScreen = performance.now() - t0;

    t0 = performance.now();
    const idx = await indexLines(file);
    const indexS = (performance.now() - t0) / 1000;

    t0 = performance.now();
    const r = await lintFile(file, { tok, format: 'auto' });
    const lintS = (performance.now() - t0) / 1000;
    if (!r.ok) throw new Error(r.error);
    const byRule = new Map<string, number>();
    for (const f of r.value.findings) byRule.set(f.rule, (byRule.get(f.rule) ?? 0) + 1);
    const total = indexS + lintS;
    const rows = [
      [
        'file',
        `${mb(size).toFixed(0)} MB, ${idx.offsets.length} lines (${r.value.format}), padded to ${args.pad} tokens`,
      ],
      ['first sample parsed', `${first.toFixed(0)} ms`],
      [
        'first sample to show',
        `${(firstOnScreen / 1000).toFixed(2)} s (tokenizer load, index, record 1 read and linted; goal < 2 s)`,
      ],
      ['index (byte offsets)', `${indexS.toFixed(1)} s, ${(mb(size) / indexS).toFixed(0)} MB/s`],
      [
        'lint (id-level rules)',
        `${lintS.toFixed(1)} s, ${(mb(size) / lintS).toFixed(0)} MB/s, ${(r.value.samples / lintS).toFixed(0)} samples/s`,
      ],
      [
        'index + lint',
        `${total.toFixed(1)} s  (goal for 1 GB: < 60 s; scaled to 1 GB: ${((total * 1024) / mb(size)).toFixed(1)} s)`,
      ],
      ['findings', [...byRule].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'],
      ['peak RSS', `${peak()} MB (goal < 500 MB; ${rssBefore} MB before reading, tokenizer loaded)`],
    ];
    for (const [k, v] of rows) process.stdout.write(`${k.padEnd(22)} ${v}\n`);
  } finally {
    if (!args.file && !args.keep) fs.rmSync(file, { force: true });
  }
}

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
    [
      'machine',
      `${os.cpus().length} cores, load ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} (1, 5, 15 min)`,
    ],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(22)} ${v}\n`);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exitCode = 1;
});
