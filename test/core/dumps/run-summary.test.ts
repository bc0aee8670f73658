import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, conversations } from '../../../scripts/make-dump-fixtures.js';
import { type DumpSample, type Finding, lintSample } from '../../../src/core/dumps/index.js';
import {
  ADVISORY_DEFAULTS,
  AdvisoryThresholdsSchema,
  advise,
  factsOf,
  median,
  rising,
  type StepSummary,
  StepSummaryAccumulator,
} from '../../../src/core/dumps/run-summary.js';
import { Rng } from '../../../src/core/rng.js';
import { parse } from '../../../src/core/schema.js';
import { qwen3 } from './mismatch-data.js';

const close = (a: number | null, b: number | null, what: string, tol = 1e-12) => {
  assert.ok(a !== null && b !== null, `${what}: ${a} vs ${b}`);
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
};

/** A sample with the given mask and per-token log-probs (no tokenizer: owners from the mask). */
function sample(record: number, mask: number[], extra: Partial<DumpSample> = {}): DumpSample {
  return { record, offset: 0, ids: mask.map((_, i) => 100 + i), lossMask: mask, lengthIssues: [], ...extra };
}

const factsOfSample = (s: DumpSample, line = { offset: 0, bytes: 1 }) =>
  factsOf(s, lintSample(s).owners, line);

describe("a sample's facts", () => {
  it('tokens, trained tokens, turns, reward, group, truncation, versions, and the mismatch sums', () => {
    const mask = [0, 0, 1, 1, 0, 1, 1, 1, 0, 1];
    const sampler = [null, null, -0.5, -1.25, null, -0.1, null, -2, null, 0];
    const trainer = [null, null, -0.25, -1.5, null, -0.3, -0.7, -1, null, 0];
    const s = sample(4, mask, {
      samplerLogprobs: sampler,
      trainerLogprobs: trainer,
      reward: 0.75,
      group: 3,
      truncated: true,
      weightVersions: [7, 5, 6],
    });
    const f = factsOfSample(s, { offset: 1234, bytes: 99 });
    // d on mask-1 tokens with both values: positions 2, 3, 5, 7, 9 (6 has no sampler value).
    const d = [-0.25 - -0.5, -1.5 - -1.25, -0.3 - -0.1, -1 - -2, 0 - 0];
    assert.deepEqual(
      { ...f, mm_d: 0, mm_abs: 0, mm_k3: 0, mm_exp_abs: 0 },
      {
        record: 4,
        offset: 1234,
        bytes: 99,
        tokens: 10,
        trained: 6,
        turns: 3,
        reward: 0.75,
        group: 3,
        truncated: 1,
        version_min: 5,
        version_max: 7,
        mm_n: 5,
        mm_d: 0,
        mm_abs: 0,
        mm_k3: 0,
        mm_exp_abs: 0,
        mm_abs_max: 1,
      },
    );
    close(
      f.mm_d,
      d.reduce((a, x) => a + x, 0),
      'sum d',
    );
    close(
      f.mm_abs,
      d.reduce((a, x) => a + Math.abs(x), 0),
      'sum |d|',
    );
    close(
      f.mm_k3,
      d.reduce((a, x) => a + (Math.exp(x) - 1 - x), 0),
      'sum k3',
    );
    close(
      f.mm_exp_abs,
      d.reduce((a, x) => a + Math.exp(Math.abs(x)), 0),
      'sum exp|d|',
    );
    const bare = factsOfSample(sample(0, [1, 1]));
    assert.deepEqual(
      [bare.reward, bare.group, bare.truncated, bare.version_min, bare.mm_n],
      [null, null, null, null, 0],
      'nothing recorded: nulls, and no mismatch token',
    );
  });

  it('truncation from the chat template: the final assistant turn without its end marker', () => {
    const c = conversations()[0];
    const b = build(qwen3, c.messages, c.tools);
    const end = qwen3.id('<|im_end|>');
    const lastEnd = b.ids.lastIndexOf(end as number);
    const whole = sample(0, b.mask, { ids: b.ids });
    const cut = sample(1, b.mask.slice(0, lastEnd - 2), { ids: b.ids.slice(0, lastEnd - 2) });
    const of = (s: DumpSample) => factsOf(s, lintSample(s, { tok: qwen3 }).owners, { offset: 0, bytes: 0 });
    assert.equal(b.messages[b.messages.length - 1].role, 'assistant');
    assert.equal(of(whole).truncated, 0);
    assert.equal(of(cut).truncated, 1);
    assert.equal(factsOfSample(cut).truncated, null, 'no tokenizer: unknown');
  });
});

describe("a step's summary", () => {
  it('equals the figures computed from their definitions on seeded samples', () => {
    const rng = new Rng(7);
    const acc = new StepSummaryAccumulator();
    const rewards: number[] = [];
    const groups = new Map<number, number[]>();
    const trained: number[] = [];
    const tokens: number[] = [];
    const turns: number[] = [];
    const ds: number[] = [];
    let truncKnown = 0;
    let trunc = 0;
    let versioned = 0;
    let mixed = 0;
    const versions = new Set<number>();
    const N = 200;
    for (let k = 0; k < N; k++) {
      const T = 5 + rng.int(30);
      const mask = Array.from({ length: T }, () => (rng.float() < 0.6 ? 1 : 0));
      const sampler = mask.map((m) => (m ? -3 * rng.float() : null));
      const trainer = sampler.map((x) => (x === null ? null : x + (rng.float() - 0.5) * 0.2));
      const group = k % 5 === 4 ? undefined : Math.floor(k / 4);
      // Groups 0, 10, 20, ... have all rewards equal.
      const reward =
        rng.float() < 0.1 ? undefined : group !== undefined && group % 10 === 0 ? 1 : 100 + rng.int(3);
      const truncated = k % 3 === 0 ? undefined : rng.float() < 0.3;
      const wv = k % 4 === 0 ? undefined : rng.float() < 0.2 ? [k % 6, (k % 6) + 1] : [k % 6];
      const s = sample(k, mask, {
        samplerLogprobs: sampler,
        trainerLogprobs: trainer,
        reward,
        group,
        truncated,
        weightVersions: wv,
      });
      acc.add(factsOfSample(s));
      // The definitions, computed here.
      if (reward !== undefined) {
        rewards.push(reward);
        if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), reward]);
      }
      trained.push(mask.reduce((a: number, m) => a + m, 0));
      tokens.push(T);
      turns.push(mask.filter((m, i) => m === 1 && (i === 0 || mask[i - 1] === 0)).length);
      for (let i = 0; i < T; i++)
        if (mask[i] && sampler[i] !== null && trainer[i] !== null)
          ds.push((trainer[i] as number) - (sampler[i] as number));
      if (truncated !== undefined) {
        truncKnown++;
        if (truncated) trunc++;
      }
      if (wv) {
        versioned++;
        for (const x of wv) versions.add(x);
        if (wv.length > 1) mixed++;
      }
    }
    const findings: Finding[] = [
      { sample: 1, rule: 'mask-on-tool', positions: [3], message: '' },
      { sample: 2, rule: 'mask-on-tool', positions: [4], message: '' },
      { sample: 2, rule: 'length-mismatch', positions: [], message: '' },
    ];
    acc.addFindings(findings);
    const s = acc.finish();
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const rm = mean(rewards);
    const multi = [...groups.values()].filter((g) => g.length >= 2);
    assert.equal(s.sequences, N);
    assert.equal(s.rewarded, rewards.length);
    close(s.reward_mean, rm, 'reward mean');
    close(s.reward_std, Math.sqrt(mean(rewards.map((r) => (r - rm) ** 2))), 'reward std', 1e-9);
    assert.equal(s.groups, multi.length);
    const flat = multi.filter((g) => g.every((r) => r === g[0])).length;
    assert.ok(flat > 0 && flat < multi.length);
    close(s.zero_std_groups, flat / multi.length, 'zero-std groups');
    close(s.truncated, trunc / truncKnown, 'truncated');
    close(s.response_tokens_mean, mean(trained), 'response tokens');
    assert.equal(s.response_tokens_max, Math.max(...trained));
    close(s.tokens_mean, mean(tokens), 'tokens');
    close(s.turns_mean, mean(turns), 'turns');
    assert.equal(s.weight_versions, versions.size);
    close(s.mixed_versions, mixed / versioned, 'mixed versions');
    assert.equal(s.mismatch.tokens, ds.length);
    close(s.mismatch.k1, mean(ds.map((d) => -d)), 'k1');
    close(s.mismatch.k3, mean(ds.map((d) => Math.exp(d) - 1 - d)), 'k3', 1e-9);
    close(s.mismatch.abs_mean, mean(ds.map(Math.abs)), 'abs mean');
    close(s.mismatch.abs_max, Math.max(...ds.map(Math.abs)), 'abs max');
    close(s.mismatch.mean_exp_abs, mean(ds.map((d) => Math.exp(Math.abs(d)))), 'mean exp|d|');
    assert.deepEqual(s.findings, { 'length-mismatch': 1, 'mask-on-tool': 2 });
  });

  it('an empty step: counts 0, figures null', () => {
    const s = new StepSummaryAccumulator().finish();
    assert.equal(s.sequences, 0);
    assert.equal(s.reward_mean, null);
    assert.equal(s.zero_std_groups, null);
    assert.equal(s.mismatch.k3, null);
    assert.deepEqual(s.findings, {});
  });
});

/** A step summary with the given figures (the rest empty). */
function step(
  n: number,
  x: {
    zero?: number | null;
    trunc?: number | null;
    k3?: number | null;
    findings?: StepSummary['findings'];
  },
): { step: number; summary: StepSummary } {
  const summary = new StepSummaryAccumulator().finish();
  summary.zero_std_groups = x.zero ?? null;
  summary.truncated = x.trunc ?? null;
  summary.mismatch.k3 = x.k3 ?? null;
  summary.findings = x.findings ?? {};
  return { step: n, summary };
}

describe('health advisories', () => {
  it('the thresholds table parses its defaults and rejects bad values', () => {
    assert.ok(parse(AdvisoryThresholdsSchema, ADVISORY_DEFAULTS, 'thresholds').ok);
    assert.deepEqual(
      [ADVISORY_DEFAULTS.zero_std_groups, ADVISORY_DEFAULTS.truncated],
      [0.5, 0.25],
      'the issue: zero-std groups above half, truncation above a quarter',
    );
    assert.ok(!parse(AdvisoryThresholdsSchema, { ...ADVISORY_DEFAULTS, rising_ratio: 1 }, 't').ok);
    assert.ok(!parse(AdvisoryThresholdsSchema, { ...ADVISORY_DEFAULTS, rising_window: 3 }, 't').ok);
  });

  it('zero-std groups and truncation: every step above the threshold, with its value', () => {
    const steps = [
      step(1, { zero: 0.5, trunc: 0.1 }),
      step(2, { zero: 0.51, trunc: 0.3 }),
      step(3, { zero: null, trunc: null }),
      step(4, { zero: 0.9, trunc: 0.25 }),
    ];
    const a = advise(steps.reverse());
    const z = a.find((x) => x.id === 'zero-std-groups');
    assert.deepEqual(z?.evidence, [
      { step: 2, value: 0.51 },
      { step: 4, value: 0.9 },
    ]);
    assert.match(z?.message ?? '', /above 50% at 2 of 4 steps \(latest step 4: 90%\)/);
    assert.deepEqual(a.find((x) => x.id === 'truncation')?.evidence, [{ step: 2, value: 0.3 }]);
    assert.deepEqual(advise([step(1, { zero: 0.2, trunc: 0.2 })]), []);
  });

  it('mask-onset: a rule clean for the first steps that starts finding at a step', () => {
    const steps = [
      step(10, {}),
      step(20, { findings: { 'length-mismatch': 1 } }),
      step(30, {}),
      step(40, { findings: { 'mask-on-tool': 4, 'length-mismatch': 1 } }),
      step(50, {}),
      step(60, { findings: { 'mask-on-tool': 2 } }),
    ];
    const a = advise(steps);
    assert.deepEqual(
      a.map((x) => [x.id, x.rule]),
      [['mask-onset', 'mask-on-tool']],
      'length-mismatch starts after one clean step only (default: two)',
    );
    assert.deepEqual(a[0].evidence, [
      { step: 40, value: 4 },
      { step: 60, value: 2 },
    ]);
    assert.match(
      a[0].message,
      /mask-on-tool starts at step 40: no finding in the 3 steps before, 6 in 2 of the 3 steps since/,
    );
    assert.deepEqual(
      advise(steps, { ...ADVISORY_DEFAULTS, onset_clean_steps: 1 }).map((x) => x.rule),
      ['length-mismatch', 'mask-on-tool'],
    );
    assert.deepEqual(
      advise([step(1, { findings: { 'mask-on-tool': 1 } }), step(2, {})]),
      [],
      'present from the start',
    );
  });

  it('rising: the later half-window median at least ratio x the earlier, and at least the floor', () => {
    const t = { rising_window: 8, rising_ratio: 2, rising_floor: 1e-4 };
    const series = (xs: (number | null)[]) => xs.map((value, i) => ({ step: i + 1, value }));
    // Window = last 8 of 10: [2,2,2,2 | 4,5,4,6] -> medians 2e-4 and 4.5e-4.
    const up = rising(series([9, 9, 2, 2, 2, 2, 4, 5, 4, 6].map((x) => x * 1e-4)), t);
    assert.ok(up);
    close(up.before, 2e-4, 'before');
    close(up.after, 4.5e-4, 'after');
    assert.deepEqual(
      up.points.map((p) => p.step),
      [3, 4, 5, 6, 7, 8, 9, 10],
    );
    assert.equal(
      rising(series([1, 1, 1, 1, 1, 1, 1, 30].map((x) => x * 1e-4)), t),
      null,
      'one spike is not a rise',
    );
    assert.equal(rising(series([1, 1, 3, 3].map((x) => x * 1e-6)), t), null, 'below the floor');
    assert.ok(rising(series([1, 1, 3, 3].map((x) => x * 1e-4)), t), 'four points suffice');
    assert.equal(rising(series([1, 3, 3].map((x) => x * 1e-4)), t), null, 'three do not');
    // Odd window: the middle point is in neither half.
    assert.ok(rising(series([1, 1, 100, 2, 2].map((x) => x * 1e-4)), t));
    assert.equal(
      rising(series([1, 1, null, 1.9, 2].map((x) => (x === null ? null : x * 1e-4))), t),
      null,
      'x1.95 < 2; nulls skipped',
    );
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('mismatch-rising: the advisory names the figure, the steps and both medians', () => {
    const steps = [1, 1, 1, 1, 3, 3, 3, 3].map((x, i) => step(i + 1, { k3: x * 1e-3 }));
    const a = advise(steps);
    assert.deepEqual(
      a.map((x) => x.id),
      ['mismatch-rising'],
    );
    assert.equal(a[0].evidence.length, 8);
    assert.match(
      a[0].message,
      /mismatch k3 rising over steps 1-8: median 0\.00100 in the earlier half, 0\.00300 in the later \(x3\.00\)/,
    );
    assert.deepEqual(advise(steps, { ...ADVISORY_DEFAULTS, rising_ratio: 3.5 }), []);
  });
});
