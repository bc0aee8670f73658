/**
 * `lint --shard I/N` and `merge`: four shards run as separate processes of the built CLI, each with
 * its files and record ranges, and their merge prints exactly what the unsharded lint prints
 * (`--json` byte for byte, the text, stderr and the exit code), over files cut into ranges, run
 * folders with their advisories, a file with bad lines and a tokenizer that does not fit (the merge
 * lints that file again itself). Partials that cannot be joined are refused with the reason.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { QWEN3_DIR } from '../../scripts/make-dump-fixtures.js';
import {
  planShards,
  readPartial,
  type ShardInput,
  type ShardPartial,
} from '../../src/core/dumps/session/shards.js';
import { Rng } from '../../src/core/rng.js';
import { builtCli } from '../built-cli.js';
import { FIXTURES, fixtureLines } from '../core/dumps/fuzz-records.js';

const root = path.resolve(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-shards-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (f: string) => path.join(FIXTURES, f);

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** The built CLI with `args` in a process of its own, with a fresh index cache. */
function cli(args: string[]): Promise<Ran> {
  const env = { ...process.env, XDG_CACHE_HOME: fs.mkdtempSync(path.join(tmp, 'cache-')) };
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [builtCli(), ...args], { cwd: root, env });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/** NeMo-RL lines with a blank line, a line that is not JSON and a last line without its newline. */
function mixedFile(): string {
  const lines = fixtureLines('nemo-rl-buggy.jsonl');
  const file = path.join(tmp, 'train_data_step7.jsonl');
  const body = [lines[0], '', lines[1], 'not json', ...lines.slice(2), lines[0]].join('\n');
  fs.writeFileSync(file, `${body}\n${lines[1]}`);
  return file;
}

/** NeMo-RL lines whose first record has an id outside Qwen3's vocabulary: the tokenizer does not fit. */
function misfitFile(): string {
  const lines = fixtureLines('nemo-rl-buggy.jsonl');
  const first = lines[0].replace(/"token_ids": ?\[\[(\d+)/, '"token_ids":[[999999');
  assert.notEqual(first, lines[0]);
  const file = path.join(tmp, 'misfit.jsonl');
  fs.writeFileSync(file, `${[first, ...lines.slice(1), ...lines].join('\n')}\n`);
  return file;
}

/**
 * A fixture run folder copied to the temp folder with its files dated ten minutes back: every step
 * is complete for every shard. (A fresh clone's files are seconds old, and a run's last step counts
 * as still being written for a minute: shards started either side of that minute plan different
 * runs, which the merge rightly refuses.)
 */
function settled(name: string): string {
  const dir = path.join(tmp, 'settled', name);
  fs.cpSync(at(name), dir, { recursive: true });
  const old = new Date(Date.now() - 600_000);
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[])
    fs.utimesSync(path.join(dir, f), old, old);
  return dir;
}

const PRIME_RL = settled('prime-rl');
const PATHS = [
  at('nemo-rl-buggy.jsonl'),
  PRIME_RL,
  settled('skyrl-export'),
  settled('nemo-rl'),
  at('turns-verifiers.jsonl'),
  settled('harbor'),
];

/** Four shards of `lint PATHS... ARGS`, at once, each writing its partial; their partials' paths. */
async function shards(paths: string[], args: string[], name: string): Promise<string[]> {
  const outs = [0, 1, 2, 3].map((i) => path.join(tmp, `${name}-${i}.json`));
  const ran = await Promise.all(
    outs.map((out, i) =>
      cli(['lint', ...paths, ...args, '--shard', `${i}/4`, '--out', out, '--part-bytes', '3000']),
    ),
  );
  for (const r of ran) assert.equal(r.code, 0, r.err);
  return outs;
}

/** stderr without the shards' own lines, and with `merge`'s name as `lint`'s. */
const said = (s: string) => s.replace(/episode-lab merge: /g, 'episode-lab lint: ');

describe('lint --shard I/N and merge', () => {
  const paths = [...PATHS, mixedFile(), misfitFile()];

  it('four shards in their own processes merge into exactly the unsharded lint', async () => {
    const args = ['--tokenizer', QWEN3_DIR];
    const parts = await shards(paths, args, 'a');
    // every shard lints something, and the units are cut into ranges of lines
    const read = parts.map((p) => readPartial(fs.readFileSync(p, 'utf8'), p));
    for (const r of read) assert.ok(r.ok && r.value.results.length > 0, r.ok ? '' : r.error);
    const plan = (read[0] as { value: ShardPartial }).value.plan;
    assert.ok(plan.units.length > plan.files.length, 'some file is cut into ranges');
    for (const mode of [['--json'], []]) {
      const [one, merged] = await Promise.all([
        cli(['lint', ...paths, ...args, '--jobs', '1', ...mode]),
        cli(['merge', ...parts, ...mode]),
      ]);
      assert.ok(one.out.length > 0);
      assert.equal(merged.out, one.out, `stdout ${mode.join(' ')} (merge said: ${merged.err})`);
      assert.equal(said(merged.err), one.err, `stderr ${mode.join(' ')}`);
      assert.equal(merged.code, one.code);
      assert.equal(one.code, 2, 'the mixed file has bad lines: exit 2');
    }
    const json = JSON.parse((await cli(['merge', ...parts.reverse(), '--json'])).out);
    // what the merge carries through: a run's advisory, a misfit found once, the bad lines
    const prime = json.runs.find((r: { path: string }) => r.path.endsWith('prime-rl'));
    assert.deepEqual(
      prime.advisories.map((a: { id: string }) => a.id),
      ['zero-std-groups'],
    );
    const misfit = json.files.find((f: { path: string }) => f.path.endsWith('misfit.jsonl'));
    assert.deepEqual(
      misfit.findings.filter((f: { rule: string }) => f.rule === 'tokenizer-mismatch').length,
      1,
    );
  });

  it('without a tokenizer and with other options, the same', async () => {
    const args = ['--rules', 'eos-not-trained,mask-on-tool,owners-unknown', '--advise', 'zero_std=0.9'];
    const parts = await shards(paths, args, 'b');
    const [one, merged] = await Promise.all([
      cli(['lint', ...paths, ...args, '--jobs', '1', '--json']),
      cli(['merge', ...parts, '--json']),
    ]);
    assert.equal(merged.out, one.out);
    assert.equal(merged.code, one.code);
  });

  it('refuses partials that cannot be joined, with the reason', async () => {
    const a = await shards([at('nemo-rl-buggy.jsonl'), PRIME_RL], [], 'c');
    const other = await shards([at('nemo-rl-buggy.jsonl'), PRIME_RL], ['--rules', 'mask-on-tool'], 'd');
    const cases: [string[], RegExp][] = [
      [a.slice(0, 3), /1 of 4 shards missing: 3 \(give the partial of every shard, 0 to 3\)/],
      [[...a, a[1]], /shard 1 is given twice/],
      [[...a.slice(0, 3), other[3]], /are shards of different lints/],
    ];
    const cut = path.join(tmp, 'cut.json');
    fs.writeFileSync(cut, fs.readFileSync(a[2], 'utf8').slice(0, 500));
    cases.push([[a[0], a[1], cut, a[3]], /cut\.json: not JSON .*lint --shard I\/N --out FILE/]);
    const changed = path.join(tmp, 'changed.json');
    fs.writeFileSync(changed, fs.readFileSync(a[2], 'utf8').replace('"said":[]', '"said":["x"]'));
    cases.push([[a[0], a[1], changed, a[3]], /changed\.json: its plan does not match its plan_hash/]);
    const recounted = path.join(tmp, 'recounted.json');
    fs.writeFileSync(recounted, fs.readFileSync(a[2], 'utf8').replace('"count":4', '"count":5'));
    cases.push([[a[0], a[1], recounted, a[3]], /recounted\.json: shard 2\/5 of a plan in 4 shards/]);
    // A unit's result of the wrong shape (not covered by the plan's hash): refused, not a crash.
    const broken = path.join(tmp, 'broken.json');
    const text = fs.readFileSync(a[2], 'utf8');
    assert.ok(text.includes('"errorNotes":[]'));
    fs.writeFileSync(broken, text.replace('"errorNotes":[]', '"errorNotes":5'));
    cases.push([[a[0], a[1], broken, a[3]], /broken\.json: .*errorNotes/]);
    const lint = path.join(tmp, 'lint.json');
    fs.writeFileSync(lint, '{"files": []}');
    cases.push([[lint], /not a shard's partial result/]);
    for (const [files, why] of cases) {
      const r = await cli(['merge', ...files, '--json']);
      assert.equal(r.code, 2, r.err);
      assert.equal(r.out, '');
      assert.match(r.err, why);
      assert.equal(r.err.trimEnd().split('\n').length, 1, r.err);
    }
  });

  it('--shard takes I/N with 0 <= I < N, and not with --json', () => {
    for (const [args, why] of [
      [['--shard', '4/4'], /--shard: expected I\/N with 0 <= I < N/],
      [['--shard', '1-4'], /--shard: expected I\/N/],
      [['--shard', '0/2', '--json'], /leave out --json/],
    ] as [string[], RegExp][]) {
      const r = spawnSync(process.execPath, [builtCli(), 'lint', at('nemo-rl-buggy.jsonl'), ...args], {
        cwd: root,
        encoding: 'utf8',
      });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, why);
    }
  });
});

describe('the shards plan', () => {
  it('gives every unit to one shard, the loads within one unit of each other', async () => {
    const inputs: ShardInput[] = [
      at('nemo-rl-buggy.jsonl'),
      at('prime-rl-buggy.jsonl'),
      at('llama3.jsonl'),
    ].map((p) => ({ kind: 'file', path: p, said: [], note: '' }));
    for (const count of [1, 2, 3, 4, 7]) {
      const { plan } = await planShards(inputs, count, { opts: {}, format: 'auto', partBytes: 2000 });
      const again = await planShards(inputs, count, { opts: {}, format: 'auto', partBytes: 2000 });
      assert.deepEqual(again.plan, plan, 'the same plan every time');
      const load = new Array(count).fill(0);
      for (const u of plan.units) load[u.shard] += u.bytes;
      // the ranges of each file cover it exactly, in order
      for (const f of plan.files) {
        const rs = f.units.map((i) => plan.units[i]);
        assert.equal(
          rs.reduce((n, u) => n + u.bytes, 0),
          f.size,
        );
      }
      // biggest-first to the least loaded: no shard is more than the biggest unit above another
      const biggest = Math.max(...plan.units.map((u) => u.bytes));
      assert.ok(Math.max(...load) - Math.min(...load) <= biggest, `${count}: ${load}`);
    }
  });

  it('reads back a partial cut or changed anywhere as a partial or a one-line reason, never a throw', async () => {
    const inputs: ShardInput[] = [{ kind: 'file', path: at('nemo-rl-buggy.jsonl'), said: [], note: '' }];
    const { plan } = await planShards(inputs, 1, { opts: {}, format: 'auto', partBytes: 2000 });
    const good = fs.readFileSync((await shards([at('nemo-rl-buggy.jsonl')], [], 'e'))[0], 'utf8');
    assert.ok(readPartial(good, 'x').ok);
    assert.equal(plan.files.length, 1);
    const rng = new Rng(7);
    for (let k = 0; k < 300; k++) {
      const i = Math.floor(rng.float() * good.length);
      const bad =
        k % 3 === 0
          ? good.slice(0, i)
          : k % 3 === 1
            ? `${good.slice(0, i)}${String.fromCharCode(32 + Math.floor(rng.float() * 90))}${good.slice(i + 1)}`
            : good.slice(0, i) + good.slice(i + 40);
      const r = readPartial(bad, 'p.json');
      if (!r.ok) assert.match(r.error, /^p\.json: /);
    }
  });
});
