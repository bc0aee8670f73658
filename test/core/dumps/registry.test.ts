/**
 * The format registry and the rule table are the one place formats and rules are declared: every
 * list derived from them (ids, detection, the CLI's choices and help, the protocol's schemas) must
 * agree with them, and each entry must say what it is and where it comes from.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { parseOptions, UsageError } from '../../../src/cli/args.js';
import { LINT_FORMATS, lintCommand } from '../../../src/cli/lint-command.js';
import { mismatchCommand } from '../../../src/cli/mismatch-command.js';
import {
  CARRIED_FIELDS,
  DUMP_FORMATS,
  DUMP_READERS,
  type DumpReader,
  type DumpSample,
  detectDumpFile,
  detectFormat,
  openDumpFile,
  parseRecord,
  RECORD_READERS,
  RULE_IDS,
  RULE_TABLE,
  RULES,
  readerOf,
  STAGES,
} from '../../../src/core/dumps/index.js';
import { JOB_SCHEMAS } from '../../../src/protocol/job-host.js';

const FIXTURES = 'test/fixtures/dumps';
const ids = DUMP_READERS.map((r) => r.id);
/** The whole-file formats whose fixtures are files of another folder than `pickled/ID/`: the folder and which files. */
const WHOLE_FIXTURES: Record<string, { dir: string; take: (f: string) => boolean }> = {
  harbor: { dir: 'harbor', take: (f) => path.basename(f) === 'trajectory.json' },
  'skyrl-capture-zst': { dir: 'skyrl-capture', take: (f) => f.endsWith('.zst') },
};

/**
 * A format's fixture files: `ID-*.jsonl` (not those of a longer id) and the .jsonl files under `ID/`;
 * for a whole-file format, the .pkl and .pt files under `pickled/ID/`, or the files WHOLE_FIXTURES
 * names (Harbor's job folders' trajectory.json, skyrl-capture's .zst records and artifacts).
 */
function fixturesOf(id: string): string[] {
  if (readerOf(id)?.kind === 'file') {
    const pickled = path.join(FIXTURES, 'pickled', id);
    const whole = WHOLE_FIXTURES[id];
    if (!fs.existsSync(pickled) && whole)
      return fs
        .readdirSync(path.join(FIXTURES, whole.dir), { recursive: true, encoding: 'utf8' })
        .filter(whole.take)
        .map((f) => path.join(whole.dir, f))
        .sort();
    return fs
      .readdirSync(pickled, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(pkl|pt)$/.test(f))
      .map((f) => path.join('pickled', id, f))
      .sort();
  }
  const longer = ids.filter((x) => x !== id && x.startsWith(id));
  const named = fs
    .readdirSync(FIXTURES)
    .filter(
      (f) => f.startsWith(`${id}-`) && f.endsWith('.jsonl') && !longer.some((x) => f.startsWith(`${x}-`)),
    );
  const folder = path.join(FIXTURES, id);
  const under = fs.existsSync(folder)
    ? fs
        .readdirSync(folder, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => path.join(id, f))
    : [];
  return [...named, ...under].sort();
}

describe('the format registry', () => {
  it('has unique ids, and DUMP_FORMATS lists them in registry order', () => {
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual([...DUMP_FORMATS], ids);
  });

  it('every reader names its writer, its label and the fields it is recognised by', () => {
    const readers: readonly DumpReader[] = DUMP_READERS;
    for (const r of readers) {
      assert.match(r.id, /^[a-z][a-z0-9-]*$/, r.id);
      assert.ok(r.label.length > 2, `${r.id} label`);
      assert.ok(r.source.length > 10, `${r.id} source`);
      assert.ok(r.fields.length > 2, `${r.id} fields`);
      const all: readonly string[] = CARRIED_FIELDS;
      assert.deepEqual(
        r.carries.filter((f, i) => !all.includes(f) || r.carries.indexOf(f) !== i),
        [],
        `${r.id} carries each field once`,
      );
    }
  });

  it("the CLI's --format choices are auto then the registry's ids, in its usage and help too", () => {
    const choices = lintCommand.options?.format?.choices;
    assert.deepEqual(choices, ['auto', ...ids]);
    assert.deepEqual([...LINT_FORMATS], ['auto', ...ids]);
    assert.ok(lintCommand.usage?.includes(`--format ${['auto', ...ids].join('|')}`), lintCommand.usage);
    assert.ok(
      mismatchCommand.usage?.includes(`--format ${['auto', ...ids].join('|')}`),
      mismatchCommand.usage,
    );
    assert.deepEqual(mismatchCommand.options?.format?.choices, ['auto', ...ids]);
    for (const r of DUMP_READERS) assert.ok(lintCommand.summary.includes(r.label), r.label);
    for (const id of ids)
      assert.equal(parseOptions(lintCommand, ['f.jsonl', '--format', id]).opts.format, id);
    assert.throws(() => parseOptions(lintCommand, ['f.jsonl', '--format', 'verl']), UsageError);
  });

  it("the protocol's jobs take exactly the registry's ids", () => {
    const job = { file: '/tmp/f.jsonl', tokenizer: null };
    const sample = { ...job, kind: 'dumpSample', record: 0, offset: 0, bytes: 1 };
    const open = { ...job, kind: 'dumpOpen', lint: true };
    for (const id of ids) {
      assert.ok(v.safeParse(JOB_SCHEMAS.dumpSample, { ...sample, format: id }).success, id);
      assert.ok(v.safeParse(JOB_SCHEMAS.dumpOpen, { ...open, format: id }).success, id);
    }
    assert.ok(v.safeParse(JOB_SCHEMAS.dumpOpen, { ...open, format: 'auto' }).success);
    assert.ok(!v.safeParse(JOB_SCHEMAS.dumpSample, { ...sample, format: 'auto' }).success);
    assert.ok(!v.safeParse(JOB_SCHEMAS.dumpSample, { ...sample, format: 'verl' }).success);
  });

  it('detects every fixture of each format as its own format, by content, and lists every format when none fits', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-registry-'));
    try {
      for (const id of ids) {
        assert.ok(fixturesOf(id).length > 0, `${id} has fixtures`);
        for (const file of fixturesOf(id)) {
          assert.deepEqual(await detectDumpFile(path.join(FIXTURES, file)), { ok: true, value: id }, file);
          if (readerOf(id)?.kind === 'records') {
            const first = fs.readFileSync(path.join(FIXTURES, file), 'utf8').split('\n')[0];
            assert.deepEqual(detectFormat(JSON.parse(first)), { ok: true, value: id }, file);
          } else {
            // whatever its name
            const renamed = path.join(tmp, `${path.basename(file)}.renamed.jsonl`);
            fs.copyFileSync(path.join(FIXTURES, file), renamed);
            assert.deepEqual(await detectDumpFile(renamed), { ok: true, value: id }, file);
          }
        }
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    const r = detectFormat({ text: 'hi' });
    assert.ok(!r.ok);
    if (!r.ok) for (const x of RECORD_READERS) assert.ok(r.error.includes(`${x.id} (${x.fields})`), x.id);
  });

  it('a reader fills only the sample fields its `carries` declares (every fixture of the format)', async () => {
    for (const reader of DUMP_READERS) {
      const filled = new Set<string>();
      for (const file of fixturesOf(reader.id)) {
        const opened = await openDumpFile(path.join(FIXTURES, file), reader.id);
        assert.ok(opened.ok, file);
        for await (const rec of opened.value.records()) {
          if (!rec.samples.ok && reader.kind === 'file') continue; // the fixtures' deliberately bad samples
          assert.ok(rec.samples.ok, `${file}:${rec.index}`);
          for (const s of rec.samples.value)
            for (const k of CARRIED_FIELDS) if ((s as DumpSample)[k] !== undefined) filled.add(k);
        }
      }
      const carried: readonly string[] = reader.carries;
      const undeclared = [...filled].filter((k) => !carried.includes(k));
      assert.deepEqual(undeclared, [], reader.id);
      assert.ok(filled.has('ids') && filled.has('lossMask'), `${reader.id} has fixtures`);
    }
  });

  it('an id no reader has is a rejection, not a throw', () => {
    const r = parseRecord('verl' as (typeof DUMP_FORMATS)[number], '{}', 3);
    assert.ok(!r.ok);
    if (!r.ok) assert.equal(r.error.found, 'verl');
  });
});

describe('the rule table', () => {
  it('has unique ids; RULE_IDS and RULES come from it', () => {
    const tableIds = RULE_TABLE.map((r) => r.id);
    assert.equal(new Set(tableIds).size, tableIds.length);
    assert.deepEqual([...RULE_IDS], tableIds);
    assert.deepEqual(Object.keys(RULES).sort(), [...tableIds].sort());
    for (const r of RULE_TABLE) assert.equal(RULES[r.id], r);
  });

  it('every rule has a one-line summary, the reports it comes from, a stage and a check', () => {
    for (const r of RULE_TABLE) {
      assert.match(r.id, /^[a-z]+(-[a-z]+)+$/, r.id);
      assert.ok(r.summary.length > 10 && !r.summary.includes('\n'), `${r.id} summary`);
      assert.ok(r.from.length > 5, `${r.id} from`);
      assert.ok(STAGES.includes(r.stage), `${r.id} stage`);
      assert.equal(typeof r.check, 'function');
    }
  });

  it('the CLI lists every rule in its help and takes each in --rules', () => {
    assert.ok(lintCommand.options?.rules?.help?.includes(RULE_IDS.join(', ')));
    assert.equal(
      parseOptions(lintCommand, ['f.jsonl', '--rules', RULE_IDS.join(',')]).opts.rules,
      RULE_IDS.join(','),
    );
  });
});
