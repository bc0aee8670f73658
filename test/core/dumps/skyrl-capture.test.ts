/**
 * skyrl-capture (issue 34, item 2), on the fixtures scripts/make-capture-fixtures.ts writes after
 * the writer's source with the real Qwen3 template: a record folder (`record/`, four trajectories:
 * a tool call, a resampled reply (a fork), a call trained once under two tool results, a reply cut
 * at max_tokens), its token-samples export as plain JSONL and as the zstd artifact, a graph
 * artifact, and the buggy writer's record and row (a tool result trained). Expected values come from
 * the files' raw JSON (the export rows, the records decompressed with fzstd, the headers), never
 * through the readers.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { decompress } from 'fzstd';
import { QWEN3_DIR } from '../../../scripts/make-dump-fixtures.js';
import { parseOptions } from '../../../src/cli/args.js';
import { lintCommand, runLint } from '../../../src/cli/lint-command.js';
import {
  type DumpSample,
  detectDumpFile,
  lintFile,
  lintSample,
  openDumpFile,
  parseRecord,
} from '../../../src/core/dumps/index.js';
import { CAPTURE_AGREE, CAPTURE_DISAGREE } from '../../../src/core/dumps/lint/checks/capture.js';
import { openCaptureZstd } from '../../../src/core/dumps/readers/formats/skyrl-capture-zst.js';
import { unzstd } from '../../../src/core/dumps/readers/zstd.js';
import { detectRunLayout, listRun } from '../../../src/core/dumps/run-folders/run-folder.js';
import { Rng } from '../../../src/core/rng.js';
import { assertRejection, fuzzReader, protoSnapshot, qwen3 } from './fuzz-records.js';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DIR = path.join(ROOT, 'test', 'fixtures', 'dumps', 'skyrl-capture');
const RECORD = path.join(DIR, 'record');
const BUGGY = path.join(DIR, 'buggy');
const TOK = path.join(ROOT, QWEN3_DIR);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-capture-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Row = {
  path_id: string;
  trajectory_id: string;
  input_ids: number[];
  loss_mask: number[];
  rollout_logprobs: number[];
  node_spans: [number, number][];
  labels: string[];
  annotations: { reward?: number; stop_reason?: string };
  masked_reason?: string;
};
const jsonLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
const ROWS: Row[] = jsonLines(path.join(DIR, 'token-samples.jsonl')).map((l) => JSON.parse(l));
const EXPECTED = JSON.parse(fs.readFileSync(path.join(DIR, 'expected.json'), 'utf8'));

/** Every file under a folder ending in `suffix`, sorted. */
function filesUnder(dir: string, suffix: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix))
    .map((f) => path.join(dir, f))
    .sort();
}
const RECORDS = filesUnder(path.join(RECORD, 'committed'), '.json.zst');
const rawRecord = (file: string) =>
  JSON.parse(Buffer.from(decompress(fs.readFileSync(file))).toString('utf8'));

/** Every sample of a file, by the detected reader. */
async function samplesOf(file: string): Promise<{ format: string; samples: DumpSample[] }> {
  const opened = await openDumpFile(file);
  assert.ok(opened.ok, opened.ok ? '' : opened.error);
  if (!opened.ok) return { format: '', samples: [] };
  const samples: DumpSample[] = [];
  for await (const r of opened.value.records()) {
    assert.ok(r.samples.ok, `${file}:${r.index}`);
    if (r.samples.ok) samples.push(...r.samples.value);
  }
  return { format: opened.value.format, samples };
}

/** The row's sampler log-probs as the reader must give them: null where untrained and exactly 0.0 (the writer's placeholder). */
const expectedLogprobs = (r: Row) =>
  r.rollout_logprobs.map((x, i) => (x === 0 && !r.loss_mask[i] ? null : x));

/** `episode-lab lint ...args --json` in process: the exit code and the JSON. */
async function lintJson(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) };
  const { opts, positionals } = parseOptions(lintCommand, [...args, '--tokenizer', TOK, '--json']);
  const code = await runLint(opts, positionals, io);
  return {
    code,
    err: err.join(''),
    json: JSON.parse(out.join('')) as {
      files: {
        path: string;
        format: string;
        samples: number;
        notes: string[];
        findings: { rule: string; sample: number; positions: number[] }[];
      }[];
      runs: { steps: number[]; unreadable_steps: number[] }[];
    },
  };
}

describe('skyrl-capture token-samples rows', () => {
  it('the plain export and the zstd artifact give each row its ids, mask, log-probs, reward, step, stop and path id', async () => {
    const artifact = filesUnder(path.join(RECORD, 'exports', 'artifacts'), 'token_samples.jsonl.zst');
    assert.equal(artifact.length, 1);
    for (const [file, format] of [
      [path.join(DIR, 'token-samples.jsonl'), 'skyrl-capture'],
      [artifact[0], 'skyrl-capture-zst'],
    ]) {
      const { format: f, samples } = await samplesOf(file);
      assert.equal(f, format);
      assert.equal(samples.length, ROWS.length);
      samples.forEach((s, i) => {
        const r = ROWS[i];
        assert.deepEqual(s.ids, r.input_ids);
        assert.deepEqual(s.lossMask, r.loss_mask);
        assert.deepEqual(s.samplerLogprobs, expectedLogprobs(r));
        assert.equal(s.reward, r.annotations.reward);
        assert.equal(s.stop, r.annotations.stop_reason);
        const label = r.labels.find((l) => /^step-\d+$/.test(l));
        assert.equal(s.step, label ? Number(label.slice(5)) : undefined);
        assert.deepEqual(s.fileId, { field: 'path_id', value: r.path_id });
        assert.deepEqual(
          s.nodeStarts,
          r.node_spans.map(([a]) => a),
        );
        assert.deepEqual(s.lengthIssues, []);
      });
    }
    assert.ok(
      ROWS.some((r) => r.rollout_logprobs.some((x, i) => x !== 0 && !r.loss_mask[i])),
      'a sampled token kept as context',
    );
  });

  it('a row the writer masks whole (masked_reason) is its decision: a note, not mask-degenerate', () => {
    const r = {
      ...ROWS[0],
      loss_mask: ROWS[0].loss_mask.map(() => 0),
      trainable_count: 0,
      masked_reason: 'delivery_uncertain',
    };
    const read = parseRecord('skyrl-capture', JSON.stringify(r), 0);
    assert.ok(read.ok);
    if (!read.ok) return;
    const lint = lintSample(read.value[0], { tok: qwen3() });
    assert.deepEqual(lint.findings, []);
    assert.ok(
      lint.notes.some((n) => n.includes('delivery_uncertain')),
      lint.notes.join('; '),
    );
    const bare = parseRecord('skyrl-capture', JSON.stringify({ ...r, masked_reason: undefined }), 0);
    assert.ok(bare.ok);
    if (bare.ok)
      assert.deepEqual(
        lintSample(bare.value[0], {}).findings.map((f) => f.rule),
        ['mask-degenerate'],
      );
  });

  it('a row of another schema_version, or not a row, is a one-line rejection', () => {
    const v5 = parseRecord('skyrl-capture', JSON.stringify({ ...ROWS[0], schema_version: 5 }), 2);
    assert.ok(
      !v5.ok &&
        v5.error.field === 'schema_version' &&
        /4 \(the skyrl-capture export schema/.test(v5.error.expected),
    );
    const text = parseRecord(
      'skyrl-capture',
      JSON.stringify({ schema_version: 4, path_id: 'x', messages: [] }),
      3,
    );
    assert.ok(!text.ok);
    if (!text.ok) assertRejection(text.error, 3);
  });
});

describe('skyrl-capture committed records', () => {
  it('each record gives one sample per path, the rows its token-samples export writes (ids, mask, log-probs, reward, step, group)', async () => {
    assert.equal(RECORDS.length, 4);
    const byPath = new Map(ROWS.map((r) => [r.path_id, r]));
    const groups = new Map<string, number | undefined>();
    let paths = 0;
    for (const file of RECORDS) {
      const doc = rawRecord(file);
      const head = JSON.parse(fs.readFileSync(file.replace(/\.json\.zst$/, '.head.json'), 'utf8'));
      assert.deepEqual(head, doc.trajectory);
      const parents = new Set(doc.nodes.map((n: { parent_id: string | null }) => n.parent_id));
      const leaves = doc.nodes.filter((n: { id: string }) => !parents.has(n.id));
      const { format, samples } = await samplesOf(file);
      assert.equal(format, 'skyrl-capture-zst');
      assert.equal(samples.length, leaves.length, file);
      for (const s of samples) {
        const r = byPath.get(s.fileId?.value ?? '');
        assert.ok(r, s.fileId?.value);
        if (!r) continue;
        paths++;
        assert.equal(r.trajectory_id, doc.trajectory.id);
        assert.deepEqual(s.ids, r.input_ids);
        assert.deepEqual(s.lossMask, r.loss_mask);
        // log-probs: the values on the tokens each model node sampled, null elsewhere
        const sampled = new Array<boolean>(r.input_ids.length).fill(false);
        r.node_spans.forEach(([a, b], k) => {
          const n = doc.nodes.find(
            (x: { id: string }) => x.id === (r as unknown as { node_ids: string[] }).node_ids[k],
          );
          if (n.sampled_start !== null) for (let i = a + n.sampled_start; i < b; i++) sampled[i] = true;
        });
        assert.deepEqual(
          s.samplerLogprobs,
          r.rollout_logprobs.map((x, i) => (sampled[i] ? x : null)),
        );
        assert.equal(s.reward, doc.trajectory.annotations.reward);
        const label = doc.trajectory.labels.find((l: string) => /^step-\d+$/.test(l));
        assert.equal(s.step, doc.trajectory.step ?? (label ? Number(label.slice(5)) : undefined));
        if (groups.has(doc.trajectory.task_id)) assert.equal(s.group, groups.get(doc.trajectory.task_id));
        groups.set(doc.trajectory.task_id, s.group);
        assert.equal(typeof s.group, 'number');
        // the completions the path trains: each model node with a trained token, its scaffold before sampled_start
        const trained = r.node_spans.filter(([a, b]) => r.loss_mask.slice(a, b).includes(1));
        assert.deepEqual(
          s.completions?.map((c) => [c.start, c.end]),
          trained.map(([a, b]) => [a, b]),
        );
      }
    }
    assert.equal(paths, ROWS.length, 'every exported row comes from a record');
    assert.ok(
      ROWS.some(
        (r) =>
          r.loss_mask.includes(1) &&
          r.node_spans.some(
            ([a, b], k) =>
              k > 0 &&
              b > a &&
              !r.loss_mask.slice(a, b).includes(1) &&
              r.rollout_logprobs.slice(a, b).some((x) => x !== 0),
          ),
      ),
      'a call trained once, context in the next path',
    );
  });

  it('the graph artifact reads as the record it comes from', async () => {
    const [graph] = filesUnder(path.join(RECORD, 'exports', 'artifacts'), '-graph.jsonl.zst');
    const id = path.basename(graph).replace(/-graph\.jsonl\.zst$/, '');
    const [record] = RECORDS.filter((f) => path.basename(f) === `${id}.json.zst`);
    const a = await samplesOf(graph);
    const b = await samplesOf(record);
    assert.equal(a.samples.length, 2);
    const fields = (s: (typeof a.samples)[number]) => [
      s.fileId,
      s.ids,
      s.lossMask,
      s.samplerLogprobs,
      s.completions,
      s.reward,
      s.group,
    ];
    assert.deepEqual(a.samples.map(fields), b.samples.map(fields));
  });
});

describe('a skyrl-capture record folder is a run', () => {
  it('its layout is skyrl-capture, its steps the heads’ step (else the step-N label), every record complete', async () => {
    const d = await detectRunLayout(RECORD);
    assert.ok(d.ok && d.value);
    if (!d.ok || !d.value) return;
    assert.equal(d.value.kind, 'skyrl-capture');
    const byStep = new Map<number, string[]>();
    for (const file of RECORDS) {
      const head = JSON.parse(fs.readFileSync(file.replace(/\.json\.zst$/, '.head.json'), 'utf8'));
      const label = head.labels.find((l: string) => /^step-\d+$/.test(l));
      const step = head.step ?? (label ? Number(label.slice(5)) : 0);
      byStep.set(step, [...(byStep.get(step) ?? []), file]);
    }
    const listed = await listRun(RECORD, { settle: false });
    assert.ok(listed.ok);
    if (!listed.ok) return;
    assert.deepEqual(
      listed.value.steps.map((s) => [s.step, s.files, s.complete]),
      [...byStep.entries()].sort((x, y) => x[0] - y[0]).map(([step, files]) => [step, files.sort(), true]),
    );
  });

  it('`lint RECORD_DIR --json`: no finding, exit 0, and the owners check in each file’s notes', async () => {
    const r = await lintJson(RECORD);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.json.runs[0].steps, [3, 4]);
    assert.deepEqual(r.json.runs[0].unreadable_steps, []);
    const byTrajectory = new Map<string, Row[]>();
    for (const row of ROWS)
      byTrajectory.set(row.trajectory_id, [...(byTrajectory.get(row.trajectory_id) ?? []), row]);
    assert.deepEqual(r.json.files.map((f) => f.path).sort(), RECORDS);
    for (const f of r.json.files) {
      assert.equal(f.format, 'skyrl-capture-zst');
      assert.deepEqual(f.findings, [], f.path);
      const rows = byTrajectory.get(path.basename(f.path).replace(/\.json\.zst$/, '')) ?? [];
      assert.equal(f.samples, rows.length);
      const completions = rows.reduce(
        (n, row) => n + row.node_spans.filter(([a, b]) => row.loss_mask.slice(a, b).includes(1)).length,
        0,
      );
      assert.ok(
        f.notes.includes(
          `owners from the chat template agree with the capture's sampled_start on ${completions} of ${completions} completions: the scaffold before it is the template's generation prompt, the tokens from it the policy's`,
        ),
        f.notes.join('\n'),
      );
    }
  });

  it('the buggy writer (a tool result trained): exactly its mask-on-tool finding, in the record folder and in the row', async () => {
    const dir = await lintJson(BUGGY);
    assert.equal(dir.code, 1, dir.err);
    const row = await lintJson(path.join(DIR, 'token-samples-buggy.jsonl'));
    assert.equal(row.code, 1, row.err);
    for (const r of [dir, row]) {
      assert.equal(r.json.files.length, 1);
      assert.deepEqual(
        r.json.files[0].findings.map((f) => [f.rule, f.sample, f.positions]),
        [[EXPECTED.buggy.rule, 0, EXPECTED.buggy.positions]],
      );
    }
  });

  it('a manifest of another record_version, or not JSON, is one line saying what to do', async () => {
    for (const [text, want] of [
      [
        '{"record_version": 4}',
        /record of format 4 \(record_version\); Episode Lab reads format 5: export it with the skyrl-capture that wrote it/,
      ],
      ['{"record_version": ', /manifest\.json: not JSON/],
    ] as const) {
      const dir = fs.mkdtempSync(path.join(tmp, 'manifest-'));
      fs.cpSync(RECORD, dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'manifest.json'), text);
      const d = await detectRunLayout(dir);
      assert.ok(!d.ok && want.test(d.error) && !d.error.includes('\n'), d.ok ? 'read' : d.error);
      const r = await lintJson(dir);
      assert.equal(r.code, 2);
    }
  });
});

describe('the owners check against the capture', () => {
  it('agreement is said per completion; where the capture and the template differ, the capture’s owners decide', async () => {
    const tok = qwen3();
    const [s] = (await samplesOf(RECORDS[0])).samples;
    const c = s.completions?.[0];
    assert.ok(c);
    if (!c) return;
    const agree = lintSample(s, { tok });
    assert.deepEqual(agree.findings, []);
    assert.equal(agree.notes.filter((n) => n === CAPTURE_AGREE).length, s.completions?.length);
    // the capture says the first sampled token was scaffold: the template's owners differ there, and the
    // mask trains a token the capture says the template wrote
    const moved = {
      ...s,
      completions: s.completions?.map((x, k) => (k === 0 ? { ...x, sampled: x.sampled + 1 } : x)),
    };
    const differ = lintSample(moved, { tok });
    assert.deepEqual(differ.notes.filter((n) => n === CAPTURE_DISAGREE).length, 1);
    assert.deepEqual(
      differ.findings.map((f) => [f.rule, f.positions]),
      [['mask-on-template', [c.sampled]]],
    );
  });
});

describe('skyrl-capture zstd files: clear errors, never a throw', () => {
  it('a .zst that is not zstd, corrupt, cut short or too big, or zstd of something else, says so in one line', async () => {
    const rec = fs.readFileSync(RECORDS[0]);
    const cases: [string, Buffer | string, RegExp][] = [
      [
        'plain.json.zst',
        Buffer.from([0x01, 0x02, 0x00, 0x7f, 0x80]),
        /ends in \.zst but is not zstd-compressed/,
      ],
      ['cut.json.zst', rec.subarray(0, rec.length - 40), /cut short \(the file is truncated\)/],
      ['empty.jsonl.zst', Buffer.alloc(0), /no records \(the file is empty\)/],
    ];
    const flipped = Buffer.from(rec);
    for (let i = 200; i < flipped.length; i += 97) flipped[i] ^= 0x5a;
    cases.push(['flipped.json.zst', flipped, /zstd|JSON|expected/]);
    for (const [name, bytes, want] of cases) {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, bytes);
      const r = await lintFile(file, { format: 'auto' });
      const error = r.ok
        ? r.value.rejections.map((x) => `${x.field} ${x.expected} ${x.found}`).join(' ')
        : r.error;
      assert.match(error, want, name);
      assert.ok(!error.includes('\n'), error);
    }
    // a well-formed zstd frame (one raw block) of something else
    const text = Buffer.from('{"hello": "not a capture"}\n');
    const frame = Buffer.concat([
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, text.length]),
      Buffer.from([1 | ((text.length << 3) & 0xff), (text.length << 3) >> 8, 0]),
      text,
    ]);
    assert.ok(unzstd(frame, 1000).ok);
    const notCapture = path.join(tmp, 'notes.jsonl.zst');
    fs.writeFileSync(notCapture, frame);
    const d = await detectDumpFile(notCapture);
    assert.ok(
      !d.ok &&
        /zstd-compressed, but not a skyrl-capture committed record or export \(it starts "\{\\"hello/.test(
          d.error,
        ),
      d.ok ? 'read' : d.error,
    );
    assert.equal(unzstd(new Uint8Array(0), 10).ok, false);
  });

  it('fuzz: truncated, bit-flipped and spliced zstd files, and mutated records and rows, give samples or one-line rejections', () => {
    const before = protoSnapshot();
    const rng = new Rng(3426);
    const tok = qwen3();
    const sources = [...RECORDS, ...filesUnder(path.join(RECORD, 'exports', 'artifacts'), '.zst')].map((f) =>
      fs.readFileSync(f),
    );
    let read = 0;
    let refused = 0;
    for (let k = 0; k < 120; k++) {
      const src = sources[rng.int(sources.length)];
      let bytes = Buffer.from(src);
      const kind = rng.int(3);
      if (kind === 0) bytes = bytes.subarray(0, rng.int(bytes.length));
      else if (kind === 1)
        for (let m = 1 + rng.int(4); m > 0; m--) bytes[rng.int(bytes.length)] ^= 1 + rng.int(255);
      else
        bytes = Buffer.concat([
          bytes.subarray(0, 4),
          sources[rng.int(sources.length)].subarray(4 + rng.int(40)),
        ]);
      const file = path.join(tmp, `fuzz-${k}.json.zst`);
      fs.writeFileSync(file, bytes);
      const r = openCaptureZstd(file);
      if (!r.ok) {
        refused++;
        assert.ok(!r.error.includes('\n'), r.error);
        continue;
      }
      for (let i = 0; i < r.value.count; i++) {
        const s = r.value.sample(i);
        if (!s.ok) {
          refused++;
          assertRejection(s.error, s.error.record);
          continue;
        }
        read++;
        lintSample(s.value, { tok: k % 3 === 0 ? tok : undefined });
      }
    }
    assert.ok(read > 5 && refused > 20, `read ${read}, refused ${refused}`);
    const records = RECORDS.map((f) =>
      Buffer.from(decompress(fs.readFileSync(f)))
        .toString('utf8')
        .trim(),
    );
    const a = fuzzReader('skyrl-capture', records, 3427, 150, tok);
    const b = fuzzReader('skyrl-capture', jsonLines(path.join(DIR, 'token-samples.jsonl')), 3428, 200, tok);
    assert.ok(a.read > 5 && a.refused > 5 && b.read > 5 && b.refused > 5, JSON.stringify({ a, b }));
    assert.equal(protoSnapshot(), before);
  });

  it('a node whose parents loop is a rejection, not a hang', () => {
    const doc = rawRecord(RECORDS[0]);
    doc.nodes[0].parent_id = doc.nodes[doc.nodes.length - 1].id;
    const r = parseRecord('skyrl-capture', JSON.stringify(doc), 0);
    assert.ok(!r.ok && /loop/.test(r.error.found), r.ok ? 'read' : r.error.found);
  });
});
