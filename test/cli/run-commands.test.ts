import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { lintRunSteps, runStepSources } from '../../src/cli/run-commands.js';
import { builtCli } from '../built-cli.js';

const root = path.resolve(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-run-cli-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const cacheHome = path.join(tmp, 'xdg-cache');

/** A token-level JSONL record: `bad` gives logprobs one value short (a length-mismatch finding). */
function record(n: number, reward: number, group: number, bad = false): string {
  const ids = Array.from({ length: 6 + (n % 3) }, (_, i) => 20 + i);
  const loss_mask = ids.map((_, i) => (i >= 2 ? 1 : 0));
  const logprobs = ids.map(() => -0.25).slice(0, bad ? ids.length - 1 : ids.length);
  return `${JSON.stringify({ ids, loss_mask, logprobs, reward, group })}\n`;
}

/** Write prime-rl export step `step` (two ranks; `bad` puts a finding at rank 1 record 1), marked STABLE unless `stable` is false. */
function writeStep(run: string, step: number, o: { bad?: boolean; stable?: boolean } = {}): string {
  const dir = path.join(run, 'token_exports', `step_${step}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'rank_0.jsonl'), record(0, 1, 0) + record(1, 1, 0));
  fs.writeFileSync(path.join(dir, 'rank_1.jsonl'), record(2, 0, 1) + record(3, 1, 1, o.bad));
  if (o.stable !== false) fs.writeFileSync(path.join(dir, 'STABLE'), '');
  return dir;
}

function collect() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) }, out, err };
}

describe('lint and mismatch on run folders (in process)', () => {
  const run = path.join(tmp, 'run-a');
  writeStep(run, 0);
  writeStep(run, 1, { bad: true });
  writeStep(run, 2, { stable: false });

  it('--json-lines: one object per completed step, findings with their file and record', async () => {
    const c = collect();
    const code = await lintRunSteps([run], {}, { jsonLines: true, quietMs: 2000 }, c.io);
    assert.equal(code, 1, c.err.join(''));
    const lines = c.out
      .join('')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => [l.step, path.relative(run, l.path), l.samples]),
      [
        [0, 'token_exports/step_0', 4],
        [1, 'token_exports/step_1', 4],
      ],
      'step 2 has no STABLE: left out',
    );
    assert.deepEqual(lines[0].findings, []);
    assert.deepEqual(
      lines[1].findings.map((f: { path: string; sample: number; rule: string }) => [
        path.relative(run, f.path),
        f.sample,
        f.rule,
      ]),
      [['token_exports/step_1/rank_1.jsonl', 1, 'length-mismatch']],
    );
    assert.deepEqual([lines[1].summary.sequences, lines[1].summary.reward_mean], [4, 0.75]);
    // Group 0 (1, 1) has no signal, group 1 (0, 1) has.
    assert.equal(lines[1].summary.zero_std_groups, 0.5);
    assert.deepEqual(lines[1].errors, []);
    assert.ok(Array.isArray(lines[1].advisories));
  });

  it('the text of a step (--follow without --json-lines) names findings about a whole file, and each with its file', async () => {
    const c = collect();
    const code = await lintRunSteps([run], {}, { quietMs: 2000 }, c.io);
    assert.equal(code, 1, c.err.join(''));
    const text = c.out.join('');
    const step0 = text.slice(0, text.indexOf('\nstep 1 '));
    // No tokenizer: each of step 0's two files gets owners-unknown, which makes it not clean.
    assert.match(step0, /^step 0 .*\n {2}findings: 2 about a whole file\n/);
    assert.deepEqual(
      [...step0.matchAll(/^ {2}owners-unknown \((rank_\d\.jsonl)\): /gm)].map((m) => m[1]),
      ['rank_0.jsonl', 'rank_1.jsonl'],
    );
    assert.match(text, /\n {2}findings: length-mismatch 1, 2 about a whole file\n/);
    const allowed = collect();
    await lintRunSteps([run], { allowUnknownOwners: true }, { quietMs: 2000 }, allowed.io);
    assert.match(allowed.out.join(''), /^step 0 .*\n {2}no findings\n/);
  });

  it('a folder that is not a run, or has no completed step, is exit 2 with a one-line reason', async () => {
    const c = collect();
    fs.mkdirSync(path.join(tmp, 'plain'));
    assert.equal(await lintRunSteps([path.join(tmp, 'plain')], {}, { jsonLines: true }, c.io), 2);
    assert.match(c.err.join(''), /plain: no step files found \(layouts: prime-rl-export, /);
    const pending = path.join(tmp, 'pending');
    writeStep(pending, 5, { stable: false });
    const d = collect();
    assert.equal(await lintRunSteps([pending], {}, { jsonLines: true }, d.io), 2);
    assert.match(d.err.join(''), /no completed step yet \(1 being written; layout prime-rl-export\)/);
  });

  it('runStepSources: the completed steps and their files, in step order', async () => {
    assert.deepEqual(
      (await runStepSources(run)).map((s) => [s.step, s.files?.length]),
      [
        [0, 2],
        [1, 2],
      ],
    );
  });
});

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [builtCli(), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('episode-lab lint and mismatch on run folders (the CLI)', () => {
  const run = path.join(tmp, 'run-b');
  writeStep(run, 3);
  writeStep(run, 4, { bad: true });
  writeStep(run, 7, { stable: false });

  it('lint RUN_DIR --json: one files[] entry per data file of each completed step', () => {
    const r = cli(['lint', run, '--json']);
    assert.equal(r.code, 1, r.err);
    const files = JSON.parse(r.out).files as {
      path: string;
      samples: number;
      findings: { sample?: number; rule: string }[];
    }[];
    // No tokenizer in the run folder: each file says its owners are unknown (a finding without a sample).
    for (const f of files)
      assert.deepEqual(
        f.findings.filter((x) => x.sample === undefined).map((x) => x.rule),
        ['owners-unknown'],
      );
    assert.deepEqual(
      files.map((f) => [
        path.relative(run, f.path),
        f.samples,
        f.findings.filter((x) => x.sample !== undefined).map((x) => x.sample),
      ]),
      [
        ['token_exports/step_3/rank_0.jsonl', 2, []],
        ['token_exports/step_3/rank_1.jsonl', 2, []],
        ['token_exports/step_4/rank_0.jsonl', 2, []],
        ['token_exports/step_4/rank_1.jsonl', 2, [1]],
      ],
    );
  });

  it('mismatch RUN_DIR --json: one steps row per completed step', () => {
    const r = cli(['mismatch', run, '--json']);
    const f = JSON.parse(r.out).files[0];
    assert.deepEqual(
      f.steps.map((s: { step: number; path: string; samples: number }) => [
        s.step,
        path.relative(run, s.path),
        s.samples,
      ]),
      [
        [3, 'token_exports/step_3', 4],
        [4, 'token_exports/step_4', 4],
      ],
    );
  });

  it('lint RUN_DIR --follow --json-lines: a line per step as it lands, nothing else on stdout; SIGINT exits 0', async () => {
    const live = path.join(tmp, 'live');
    fs.mkdirSync(live);
    const child = spawn(process.execPath, [builtCli(), 'lint', live, '--follow', '--json-lines'], {
      cwd: root,
      env: { ...process.env, XDG_CACHE_HOME: cacheHome },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const lines = async (n: number) => {
      for (let i = 0; i < 600 && out.split('\n').length <= n; i++)
        await new Promise((r) => setTimeout(r, 50));
      return out.split('\n').filter(Boolean);
    };
    await new Promise((r) => setTimeout(r, 500)); // started on an empty folder: it waits
    writeStep(live, 1);
    assert.equal((await lines(1)).length, 1, err);
    writeStep(live, 2, { bad: true, stable: false });
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(out.split('\n').filter(Boolean).length, 1, 'step 2 without STABLE is not printed');
    fs.writeFileSync(path.join(live, 'token_exports', 'step_2', 'STABLE'), '');
    const got = await lines(2);
    child.kill('SIGINT');
    assert.equal(await exited, 0, err);
    assert.equal(got.length, 2);
    const parsed = out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      parsed.map((l) => [l.step, l.samples, l.findings.length]),
      [
        [1, 4, 0],
        [2, 4, 1],
      ],
    );
    assert.deepEqual(Object.keys(parsed[1]).slice(0, 5), ['step', 'path', 'samples', 'findings', 'summary']);
    assert.deepEqual(Object.keys(parsed[1].findings[0]).slice(0, 3), ['path', 'sample', 'rule']);
  });
});
