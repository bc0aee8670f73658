import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  appendDurable,
  cutAfterStep,
  pickDir,
  recoverDir,
  repairTail,
  replaceDir,
  writeFileAtomic,
} from '../../../src/core/durable.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'el-durable-'));
const read = (f: string) => fs.readFileSync(f, 'utf8');

/** A folder holding one file `v` with `text`; "complete" when it also holds `done`. */
function folder(dir: string, text: string, complete = true): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'v'), text);
  if (complete) fs.writeFileSync(path.join(dir, 'done'), '');
}
const complete = (d: string) => fs.existsSync(path.join(d, 'done'));
const value = (d: string) => read(path.join(d, 'v'));
const listing = (parent: string) => fs.readdirSync(parent).sort();

describe('repairTail', () => {
  it('cuts bytes after the last newline, and says so once', () => {
    const f = path.join(tmp(), 'h.jsonl');
    fs.writeFileSync(f, '{"step":0}\n{"step":1}\n{"step":2,"epi');
    assert.match(repairTail(f) ?? '', /h\.jsonl: cut off a torn last line \(14 bytes/);
    assert.equal(read(f), '{"step":0}\n{"step":1}\n');
    assert.equal(repairTail(f), null, 'a clean file is left alone');
    assert.equal(read(f), '{"step":0}\n{"step":1}\n');
  });

  it('handles a file that is one torn line, an empty file, no file, and a torn line longer than a read chunk', () => {
    const dir = tmp();
    const f = path.join(dir, 'e.jsonl');
    fs.writeFileSync(f, '{"v":1,"ids":[1,2');
    assert.ok(repairTail(f));
    assert.equal(fs.statSync(f).size, 0);
    assert.equal(repairTail(f), null);
    assert.equal(repairTail(path.join(dir, 'missing.jsonl')), null);
    const long = `{"a":1}\n${'x'.repeat(200_000)}`;
    fs.writeFileSync(f, long);
    assert.ok(repairTail(f));
    assert.equal(read(f), '{"a":1}\n');
  });

  it('appendDurable never continues a torn line', () => {
    const f = path.join(tmp(), 'h.jsonl');
    const said: string[] = [];
    appendDurable(f, '{"step":0}\n', (m) => said.push(m));
    fs.appendFileSync(f, '{"step":1,"ep');
    appendDurable(f, '{"step":1}\n', (m) => said.push(m));
    assert.equal(read(f), '{"step":0}\n{"step":1}\n');
    assert.equal(said.length, 1);
  });
});

describe('cutAfterStep', () => {
  it('cuts the lines of steps after the last committed one, reading from the end', () => {
    const f = path.join(tmp(), 'e.jsonl');
    const lines = [0, 0, 1, 1, 2, 2].map((step, i) => JSON.stringify({ step, index: i % 2 }));
    fs.writeFileSync(f, `${lines.join('\n')}\n`);
    assert.equal(cutAfterStep(f, 2), 0);
    assert.equal(cutAfterStep(f, 1), 2);
    assert.equal(read(f), `${lines.slice(0, 4).join('\n')}\n`);
    assert.equal(cutAfterStep(f, -1), 4);
    assert.equal(read(f), '');
    assert.equal(cutAfterStep(path.join(tmp(), 'none.jsonl'), 3), 0);
  });
});

describe('writeFileAtomic', () => {
  it('replaces a file through file.tmp and leaves no temporary file', () => {
    const dir = tmp();
    const f = path.join(dir, 'config.json');
    writeFileAtomic(f, 'one');
    writeFileAtomic(f, 'two');
    assert.equal(read(f), 'two');
    assert.deepEqual(listing(dir), ['config.json']);
  });
});

describe('replaceDir and recoverDir: every state between the steps of a swap', () => {
  // replaceDir: (a) dir.tmp written  (b) dir -> dir.old  (c) dir.tmp -> dir  (d) dir.old removed.
  const states: { name: string; make: (p: string) => void; want: string; left: string[] }[] = [
    {
      name: 'tmp being written (incomplete)',
      make: (p) => {
        folder(`${p}/d`, 'old');
        folder(`${p}/d.tmp`, 'new', false);
      },
      want: 'old',
      left: ['d'],
    },
    {
      name: 'tmp complete, not yet swapped',
      make: (p) => {
        folder(`${p}/d`, 'old');
        folder(`${p}/d.tmp`, 'new');
      },
      want: 'old',
      left: ['d'],
    },
    {
      name: 'dir renamed to dir.old (dir missing)',
      make: (p) => {
        folder(`${p}/d.old`, 'old');
        folder(`${p}/d.tmp`, 'new');
      },
      want: 'new',
      left: ['d'],
    },
    {
      name: 'tmp renamed into place, dir.old still there',
      make: (p) => {
        folder(`${p}/d`, 'new');
        folder(`${p}/d.old`, 'old');
      },
      want: 'new',
      left: ['d'],
    },
    {
      name: 'dir.old half removed',
      make: (p) => {
        folder(`${p}/d`, 'new');
        folder(`${p}/d.old`, 'old', false);
      },
      want: 'new',
      left: ['d'],
    },
    {
      name: 'first save: only an incomplete tmp',
      make: (p) => folder(`${p}/d.tmp`, 'new', false),
      want: '',
      left: [],
    },
    {
      name: 'an incomplete dir (written in place by an old version) and a complete old',
      make: (p) => {
        folder(`${p}/d`, 'torn', false);
        folder(`${p}/d.old`, 'old');
      },
      want: 'old',
      left: ['d'],
    },
  ];
  for (const s of states)
    it(s.name, () => {
      const p = tmp();
      s.make(p);
      const picked = pickDir(`${p}/d`, complete);
      assert.equal(
        picked ? value(picked) : '',
        s.want,
        'a loader reads the right copy without moving anything',
      );
      assert.equal(recoverDir(`${p}/d`, complete), s.want !== '');
      assert.deepEqual(listing(p), s.left);
      if (s.want) assert.equal(value(`${p}/d`), s.want);
    });

  it('replaceDir swaps a complete folder in, over an existing one or none, and leaves no .old', () => {
    const p = tmp();
    folder(`${p}/d.tmp`, 'one');
    replaceDir(`${p}/d.tmp`, `${p}/d`);
    assert.deepEqual(listing(p), ['d']);
    folder(`${p}/d.tmp`, 'two');
    folder(`${p}/d.old`, 'stale');
    replaceDir(`${p}/d.tmp`, `${p}/d`);
    assert.deepEqual(listing(p), ['d']);
    assert.equal(value(`${p}/d`), 'two');
  });

  it('recoverDir can pick by content (the latest training state by step)', () => {
    const p = tmp();
    folder(`${p}/d`, '4');
    folder(`${p}/d.tmp`, '5');
    assert.equal(
      recoverDir(`${p}/d`, (d) => complete(d) && value(d) === '5'),
      true,
    );
    assert.deepEqual(listing(p), ['d']);
    assert.equal(value(`${p}/d`), '5');
    assert.equal(
      recoverDir(`${p}/d`, () => false),
      false,
    );
    assert.deepEqual(listing(p), []);
  });
});
