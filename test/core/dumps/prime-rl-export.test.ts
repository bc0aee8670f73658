/**
 * prime-rl's trainer token export: detection beside the other formats, the record read as written
 * (arrays aligned with token_ids, nulls, the trainer's is_masked carried and never a finding), the
 * run folder's layout, the lint and the CLI on the fixtures, and fuzzing.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { QWEN3_DIR, readExpected } from '../../../scripts/make-dump-fixtures.js';
import { parseOptions } from '../../../src/cli/args.js';
import { lintCommand, runLint } from '../../../src/cli/lint-command.js';
import { detectFormat, lintFile, parseRecord, RECORD_READERS } from '../../../src/core/dumps/index.js';
import { FIXTURES, fixtureLines, fuzzReader, qwen3 as loadQwen3 } from './fuzz-records.js';

const RUN = path.join(FIXTURES, 'prime-rl-export');
const STEP0 = 'prime-rl-export/token_exports/step_0';
const qwen3 = loadQwen3();
const linesOf = fixtureLines;

interface ExportRecord {
  step: number;
  rank: number;
  env_name: string | null;
  token_ids: number[];
  loss_mask: boolean[];
  advantages: (number | null)[];
  inference_logprobs: (number | null)[];
  trainer_logprobs: (number | null)[];
  is_masked: (boolean | null)[];
  [k: string]: unknown;
}
const recordOf = (file: string, k: number) => JSON.parse(linesOf(file)[k]) as ExportRecord;

describe('prime-rl-export: detection', () => {
  it('each rank file is detected as prime-rl-export, whatever the order of the other formats', () => {
    for (const file of [
      `${STEP0}/rank_0.jsonl`,
      `${STEP0}/rank_1.jsonl`,
      'prime-rl-export/token_exports/step_1/rank_0.jsonl',
    ])
      for (const line of linesOf(file))
        assert.deepEqual(detectFormat(JSON.parse(line)), { ok: true, value: 'prime-rl-export' }, file);
    // no other reader takes an export record, and the export reader takes no other format's record
    const record = JSON.parse(linesOf(`${STEP0}/rank_0.jsonl`)[0]);
    const others = RECORD_READERS.filter((r) => r.id !== 'prime-rl-export');
    assert.deepEqual(
      others.filter((r) => r.detect(record)).map((r) => r.id),
      [],
    );
    const exportReader = RECORD_READERS.find((r) => r.id === 'prime-rl-export');
    for (const file of [
      'nemo-rl-clean.jsonl',
      'jsonl-clean.jsonl',
      'prime-rl-clean.jsonl',
      'turns-nemo-gym.jsonl',
    ])
      assert.equal(exportReader?.detect(JSON.parse(linesOf(file)[0])), false, file);
  });

  it('the run folder: STABLE marks step_0 (both ranks flushed); step_1 has none yet', () => {
    const steps = path.join(RUN, 'token_exports');
    assert.deepEqual(fs.readdirSync(steps).sort(), ['step_0', 'step_1']);
    assert.deepEqual(fs.readdirSync(path.join(steps, 'step_0')).sort(), [
      'STABLE',
      'rank_0.jsonl',
      'rank_1.jsonl',
    ]);
    assert.equal(fs.statSync(path.join(steps, 'step_0', 'STABLE')).size, 0);
    assert.deepEqual(fs.readdirSync(path.join(steps, 'step_1')), ['rank_0.jsonl']);
    for (const [file, step, rank] of [
      [`${STEP0}/rank_0.jsonl`, 0, 0],
      [`${STEP0}/rank_1.jsonl`, 0, 1],
      ['prime-rl-export/token_exports/step_1/rank_0.jsonl', 1, 0],
    ] as const)
      linesOf(file).forEach((line, k) => {
        const r = parseRecord('prime-rl-export', line, k);
        assert.ok(r.ok);
        assert.deepEqual([r.value[0].step, r.value[0].rank], [step, rank], file);
      });
  });
});

describe('prime-rl-export: reading', () => {
  it('every array is taken as written, aligned with token_ids; booleans become 0/1', () => {
    const file = `${STEP0}/rank_0.jsonl`;
    linesOf(file).forEach((line, k) => {
      const x = recordOf(file, k);
      const r = parseRecord('prime-rl-export', line, k);
      assert.ok(r.ok);
      assert.equal(r.value.length, 1);
      const [s] = r.value;
      const T = x.token_ids.length;
      assert.equal(s.record, k);
      assert.equal(s.offset, 0);
      assert.deepEqual(s.ids, x.token_ids);
      assert.deepEqual(
        s.lossMask,
        x.loss_mask.map((m) => Number(m)),
      );
      assert.deepEqual(s.samplerLogprobs, x.inference_logprobs);
      assert.deepEqual(s.trainerLogprobs, x.trainer_logprobs);
      assert.deepEqual(s.advantages, x.advantages);
      assert.equal(s.env, x.env_name);
      assert.deepEqual([s.step, s.rank], [x.step, x.rank]);
      assert.deepEqual(s.lengthIssues, []);
      for (const a of [s.lossMask, s.samplerLogprobs, s.trainerLogprobs, s.advantages, s.trainerMasked])
        assert.equal(a?.length, T);
      // the trainer's log-probs are shifted before export: index 0 holds log(1/V), V = Qwen3's vocabulary
      assert.ok(Math.abs((x.trainer_logprobs[0] ?? 0) - Math.log(1 / 151936)) < 1e-5);
    });
  });

  it("is_masked is the sample's trainerMasked: the DPPO mask recomputed from its definition", () => {
    const file = `${STEP0}/rank_0.jsonl`;
    const x = recordOf(file, 2);
    const r = parseRecord('prime-rl-export', linesOf(file)[2], 2);
    assert.ok(r.ok);
    const masked = (r.value[0].trainerMasked ?? []).flatMap((m, i) => (m ? [i] : []));
    // loss_mask & (advantage > 0 ? p_trainer - p_sampler > 0.2 : p_trainer - p_sampler < -0.2)
    const p = (lp: number | null) => Math.exp(lp ?? 0);
    const definition = x.token_ids.flatMap((_, i) => {
      const delta = p(x.trainer_logprobs[i]) - p(x.inference_logprobs[i]);
      const adv = x.advantages[i] ?? 0;
      return x.loss_mask[i] && (adv > 0 ? delta > 0.2 : delta < -0.2) ? [i] : [];
    });
    assert.equal(masked.length, 3);
    assert.deepEqual(masked, definition);
  });

  it('nulls: an advantage reads as 0, a null log-prob stays null, an all-null is_masked is no trainerMasked', () => {
    const x = recordOf(`${STEP0}/rank_0.jsonl`, 0);
    x.advantages[30] = null;
    x.inference_logprobs[30] = null;
    x.trainer_logprobs[31] = null;
    x.is_masked = x.is_masked.map(() => null);
    const r = parseRecord('prime-rl-export', JSON.stringify(x), 0);
    assert.ok(r.ok);
    const [s] = r.value;
    assert.equal(s.advantages?.[30], 0);
    assert.equal(s.samplerLogprobs?.[30], null);
    assert.equal(s.trainerLogprobs?.[31], null);
    assert.equal(s.trainerMasked, undefined);
    x.env_name = null;
    const noEnv = parseRecord('prime-rl-export', JSON.stringify(x), 0);
    assert.ok(noEnv.ok && noEnv.value[0].env === undefined);
  });

  it('an array of another length is a length issue at its first uncovered token', () => {
    const x = recordOf(`${STEP0}/rank_0.jsonl`, 0);
    const T = x.token_ids.length;
    x.inference_logprobs = x.inference_logprobs.slice(0, T - 4);
    x.is_masked = [...x.is_masked, false];
    const r = parseRecord('prime-rl-export', JSON.stringify(x), 0);
    assert.ok(r.ok);
    assert.deepEqual(r.value[0].lengthIssues, [
      { what: `"inference_logprobs" has ${T - 4} values for ${T} token_ids`, position: T - 4 },
      { what: `"is_masked" has ${T + 1} values for ${T} token_ids`, position: null },
    ]);
    assert.equal(r.value[0].trainerMasked?.length, T);
  });

  it('a record of another schema_version, or of the wrong types, is a rejection naming the field', () => {
    const x = recordOf(`${STEP0}/rank_0.jsonl`, 0);
    const v2 = parseRecord('prime-rl-export', JSON.stringify({ ...x, schema_version: 2 }), 4);
    assert.deepEqual(v2, {
      ok: false,
      error: {
        record: 4,
        field: 'schema_version',
        expected: '1 (the version this reader follows)',
        found: '2',
      },
    });
    const badMask = parseRecord('prime-rl-export', JSON.stringify({ ...x, is_masked: [true, 'no'] }), 0);
    assert.ok(!badMask.ok);
    assert.deepEqual([badMask.error.field, badMask.error.found], ['is_masked', 'element 1 is a string "no"']);
    const { step: _, ...noStep } = x;
    const missing = parseRecord('prime-rl-export', JSON.stringify(noStep), 0);
    assert.ok(!missing.ok && missing.error.field === 'step' && missing.error.found === 'nothing');
  });
});

describe('prime-rl-export: lint', () => {
  const expected = readExpected(FIXTURES);

  it("clean samples give zero findings, the trainer's own masking included", async () => {
    for (const file of [`${STEP0}/rank_0.jsonl`, 'prime-rl-export/token_exports/step_1/rank_0.jsonl']) {
      const r = await lintFile(path.join(FIXTURES, file), { tok: qwen3 });
      assert.ok(r.ok);
      assert.equal(r.value.format, 'prime-rl-export');
      assert.deepEqual(r.value.findings, [], file);
      assert.deepEqual(r.value.rejections, []);
      assert.deepEqual(r.value.ownerSources, ['template']);
    }
  });

  it('the injected bugs of rank_1 are found at their exact positions (and its first sample is clean)', async () => {
    const file = `${STEP0}/rank_1.jsonl`;
    const r = await lintFile(path.join(FIXTURES, file), { tok: qwen3 });
    assert.ok(r.ok);
    const key = (f: { sample: number; rule: string; positions: number[] }) =>
      `${f.sample} ${f.rule} ${f.positions.join(',')}`;
    assert.deepEqual(r.value.findings.map(key).sort(), (expected[file] ?? []).map(key).sort());
    assert.deepEqual([...new Set(r.value.findings.map((f) => f.rule))].sort(), [
      'logprob-gap',
      'logprob-misaligned',
      'mask-on-tool',
    ]);
    assert.ok(!r.value.findings.some((f) => f.sample === 0));
  });

  it('episode-lab lint --format prime-rl-export --json: the same findings; a file of another format exits 2', async () => {
    const run = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const { opts, positionals } = parseOptions(lintCommand, argv);
      const code = await runLint(opts, positionals, { out: (s) => out.push(s), err: (s) => err.push(s) });
      return { code, out: out.join(''), err: err.join('') };
    };
    const file = path.join(FIXTURES, STEP0, 'rank_1.jsonl');
    const r = await run([file, '--format', 'prime-rl-export', '--tokenizer', QWEN3_DIR, '--json']);
    assert.equal(r.code, 1, r.err);
    const j = JSON.parse(r.out) as {
      files: {
        format: string;
        samples: number;
        findings: { sample: number; rule: string; positions: number[] }[];
      }[];
    };
    assert.equal(j.files[0].format, 'prime-rl-export');
    assert.equal(j.files[0].samples, 3);
    const exp = expected[`${STEP0}/rank_1.jsonl`];
    assert.deepEqual(
      j.files[0].findings.map((f) => `${f.sample} ${f.rule} ${f.positions.join(',')}`).sort(),
      exp.map((f) => `${f.sample} ${f.rule} ${f.positions.join(',')}`).sort(),
    );
    const wrong = await run([
      path.join(FIXTURES, 'turns-atif.jsonl'),
      '--format',
      'prime-rl-export',
      '--json',
    ]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.err, /line 1: "schema_version": expected number, found "ATIF-v1\.4"/);
  });
});

describe('prime-rl-export: hostile and broken records', () => {
  const lines = [...linesOf(`${STEP0}/rank_0.jsonl`), ...linesOf(`${STEP0}/rank_1.jsonl`)];

  it('fuzz: truncated lines, wrong types, __proto__ and constructor keys: a rejection, never a throw', () => {
    const { read, refused } = fuzzReader('prime-rl-export', lines, 31, 400, qwen3);
    assert.ok(read > 20 && refused > 100, `read ${read}, refused ${refused}`);
  });

  it('a record of a million tokens is read in one pass', () => {
    const T = 1_000_000;
    const big = {
      schema_version: 1,
      step: 0,
      rank: 0,
      env_name: 'e',
      token_ids: Array.from({ length: T }, (_, i) => i % 1000),
      loss_mask: Array.from({ length: T }, (_, i) => i % 2 === 0),
      inference_logprobs: new Array(T).fill(-0.5),
    };
    const t0 = performance.now();
    const r = parseRecord('prime-rl-export', JSON.stringify(big), 0);
    assert.ok(r.ok);
    assert.equal(r.value[0].ids.length, T);
    assert.ok(performance.now() - t0 < 10_000);
  });

  it('a line a trainer is still writing (cut short) is a rejection of that line only', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'export-'));
    try {
      const file = path.join(dir, 'rank_0.jsonl');
      const whole = linesOf(`${STEP0}/rank_0.jsonl`);
      fs.writeFileSync(file, `${whole[0]}\n${whole[1].slice(0, 500)}`);
      const r = await lintFile(file, { tok: qwen3 });
      assert.ok(r.ok);
      assert.equal(r.value.samples, 2);
      assert.deepEqual(r.value.findings, []);
      assert.equal(r.value.rejections.length, 1);
      assert.equal(r.value.rejections[0].record, 1);
      assert.match(r.value.rejections[0].found, /^invalid JSON/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
