/**
 * `lint RUN_DIR` (text and --json) shows the run's health advisories; checked against figures
 * computed here from the generated run's own numbers (the definitions in docs/runs.md), not from
 * the summariser. `--advise` changes the thresholds; a malformed one is exit 2 with one line.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseOptions } from '../../src/cli/args.js';
import { lintCommand, runLint } from '../../src/cli/lint-command.js';
import { Rng } from '../../src/core/rng.js';
import { builtCli } from '../built-cli.js';

const root = path.resolve(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-run-health-'));
const savedCache = process.env.XDG_CACHE_HOME;
process.env.XDG_CACHE_HOME = path.join(tmp, 'cache');
after(() => {
  process.env.XDG_CACHE_HOME = savedCache;
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Rec {
  ids: number[];
  loss_mask: number[];
  logprobs: number[];
  trainer_logprobs: number[];
  reward: number;
  group: number;
  truncated: boolean;
}

/** Box-Muller normal from the seeded generator. */
const normal = (rng: Rng) => Math.sqrt(-2 * Math.log(1 - rng.float())) * Math.cos(2 * Math.PI * rng.float());

/**
 * A flat run of `step_{N}.jsonl`, steps 1..10, 8 groups of 4 samples each: from step 7 six groups
 * of eight have equal rewards (two before); truncation is likely from step 8; from step 6 one
 * sample per step trains every token (mask-degenerate); d = trainer − sampler grows from step 6.
 */
function generate(dir: string): Map<number, Rec[]> {
  const rng = new Rng(2512);
  const run = new Map<number, Rec[]>();
  fs.mkdirSync(dir, { recursive: true });
  for (let step = 1; step <= 10; step++) {
    const recs: Rec[] = [];
    const flatGroups = step >= 7 ? 6 : 2;
    for (let g = 0; g < 8; g++)
      for (let k = 0; k < 4; k++) {
        const T = 12 + rng.int(10);
        const P = 4 + rng.int(3);
        const ids = Array.from({ length: T }, () => 100 + rng.int(500));
        const loss_mask = ids.map((_, i) => (i >= P ? 1 : 0));
        if (step >= 6 && g === 3 && k === 1) loss_mask.fill(1);
        const sigma = step >= 6 ? 0.08 : 0.02;
        const logprobs = ids.map(() => -0.1 - rng.float());
        const trainer_logprobs = logprobs.map((x) => x + sigma * normal(rng));
        const reward = g < flatGroups ? g % 2 : k === 0 ? 0 : k === 1 ? 1 : rng.int(2);
        const truncated = rng.float() < (step >= 8 ? 0.45 : 0.1);
        recs.push({ ids, loss_mask, logprobs, trainer_logprobs, reward, group: g, truncated });
      }
    run.set(step, recs);
    const file = path.join(dir, `step_${step}.jsonl`);
    fs.writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
  }
  return run;
}

/** The figures the advisories use, from the records (docs/runs.md's definitions). */
function expected(run: Map<number, Rec[]>) {
  const steps = [...run.keys()].sort((a, b) => a - b);
  const per = steps.map((step) => {
    const recs = run.get(step) as Rec[];
    const groups = new Map<number, number[]>();
    for (const r of recs) groups.set(r.group, [...(groups.get(r.group) ?? []), r.reward]);
    const flat = [...groups.values()].filter((xs) => xs.every((x) => x === xs[0])).length;
    let n = 0;
    let k3 = 0;
    for (const r of recs)
      r.ids.forEach((_, i) => {
        if (!r.loss_mask[i]) return;
        const d = r.trainer_logprobs[i] - r.logprobs[i];
        n++;
        k3 += Math.exp(d) - 1 - d;
      });
    return {
      step,
      zero: flat / groups.size,
      truncated: recs.filter((r) => r.truncated).length / recs.length,
      firstTruncated: recs.findIndex((r) => r.truncated),
      degenerate: recs.filter((r) => r.loss_mask.every((m) => m === 1)).length,
      firstDegenerate: recs.findIndex((r) => r.loss_mask.every((m) => m === 1)),
      k3: k3 / n,
    };
  });
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const window = per.slice(-8);
  const before = med(window.slice(0, 4).map((p) => p.k3));
  const afterMed = med(window.slice(4).map((p) => p.k3));
  return { per, rising: afterMed >= 2 * before && afterMed >= 1e-4, before, after: afterMed, window };
}

function collect() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) }, out, err };
}

interface Adv {
  id: string;
  figure: string;
  rule?: string;
  evidence: { step: number; value: number; link: { step: number; path?: string; sample?: number } }[];
  link: { step: number; path?: string; sample?: number };
  before?: number;
  after?: number;
}

describe('lint RUN_DIR: the health advisories of a generated run', () => {
  const dir = path.join(tmp, 'run');
  const run = generate(dir);
  const want = expected(run);
  const fileOf = (step: number) => path.join(dir, `step_${step}.jsonl`);

  it('--json: runs[0].advisories, each with its evidence and links, as computed from the records', async () => {
    const { opts, positionals } = parseOptions(lintCommand, [dir, '--json', '--rules', 'mask-degenerate']);
    const c = collect();
    assert.equal(await runLint(opts, positionals, c.io), 1, c.err.join(''));
    const j = JSON.parse(c.out.join(''));
    assert.equal(j.files.length, 10);
    assert.deepEqual(j.runs[0].steps, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const adv: Adv[] = j.runs[0].advisories;
    const byId = (id: string) => adv.find((a) => a.id === id);

    const zero = want.per.filter((p) => p.zero > 0.5);
    assert.ok(zero.length >= 3, 'the run has zero-std steps');
    assert.deepEqual(
      byId('zero-std-groups')?.evidence.map((e) => [e.step, e.value]),
      zero.map((p) => [p.step, p.zero]),
    );
    const trunc = want.per.filter((p) => p.truncated > 0.25);
    assert.ok(trunc.length >= 2, 'the run has truncated steps');
    const t = byId('truncation');
    assert.deepEqual(
      t?.evidence.map((e) => [e.step, e.value]),
      trunc.map((p) => [p.step, p.truncated]),
    );
    const lastT = trunc[trunc.length - 1];
    assert.deepEqual(t?.link, { step: lastT.step, path: fileOf(lastT.step), sample: lastT.firstTruncated });

    const onset = byId('mask-onset');
    assert.equal(onset?.rule, 'mask-degenerate');
    const bad = want.per.filter((p) => p.degenerate > 0);
    assert.deepEqual(
      onset?.evidence.map((e) => [e.step, e.value, e.link.sample]),
      bad.map((p) => [p.step, p.degenerate, p.firstDegenerate]),
    );
    assert.deepEqual(onset?.link, { step: 6, path: fileOf(6), sample: bad[0].firstDegenerate });

    assert.ok(want.rising, 'the generated mismatch rises');
    const r = byId('mismatch-rising');
    assert.equal(r?.figure, 'mismatch.k3');
    assert.deepEqual(
      r?.evidence.map((e) => e.step),
      want.window.map((p) => p.step),
    );
    for (const [i, e] of (r?.evidence ?? []).entries())
      assert.ok(Math.abs(e.value - want.window[i].k3) < 1e-12 * want.window[i].k3);
    assert.ok(Math.abs((r?.before as number) - want.before) < 1e-12 * want.before);
    assert.ok(Math.abs((r?.after as number) - want.after) < 1e-12 * want.after);
  });

  it('text: the run line and one line per advisory with where to look; --advise moves the thresholds', async () => {
    const a = parseOptions(lintCommand, [dir, '--rules', 'mask-degenerate']);
    const c = collect();
    await runLint(a.opts, a.positionals, c.io);
    const text = c.out.join('');
    assert.match(text, /run of 10 completed steps \(1-10\)/);
    for (const id of ['zero-std-groups', 'truncation', 'mask-onset', 'mismatch-rising'])
      assert.match(text, new RegExp(`^  advisory ${id}: .*; see step \\d+`, 'm'), id);
    const b = parseOptions(lintCommand, [
      dir,
      '--rules',
      'mask-degenerate',
      '--advise',
      'zero_std=0.9,truncated=0.9',
    ]);
    const d = collect();
    await runLint(b.opts, b.positionals, d.io);
    assert.doesNotMatch(d.out.join(''), /advisory (zero-std-groups|truncation)/);
    assert.match(d.out.join(''), /advisory mask-onset/);
  });

  it('a malformed --advise: exit 2, one line naming the allowed names', () => {
    const r = spawnSync(process.execPath, [builtCli(), 'lint', dir, '--advise', 'zero=0.5'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env },
      timeout: 120_000,
    });
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /unknown threshold "zero" \(allowed: zero_std, truncated, onset_steps, rising_figure, /,
    );
  });
});
