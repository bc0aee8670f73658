/**
 * Seeded fuzzing of a JSONL dump reader: real records cut short, values swapped for values of the
 * wrong type, and `__proto__` / `constructor` keys added, each line parsed by `parseRecord` and each
 * sample it gives linted. The contract checked: a sample or a Rejection (a line, a field, what was
 * expected and what was found, each on one line), never a throw, and Object.prototype untouched.
 * Also the Qwen3 tokenizer and the fixture lines these tests start from.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { QWEN3_DIR } from '../../../scripts/make-dump-fixtures.js';
import {
  type DumpFormat,
  type DumpTokenizer,
  lintSample,
  loadTokenizerDir,
  parseRecord,
  type Rejection,
} from '../../../src/core/dumps/index.js';
import { Rng } from '../../../src/core/rng.js';

export const FIXTURES = 'test/fixtures/dumps';

/** The non-blank lines of a fixture file (a path under test/fixtures/dumps). */
export const fixtureLines = (file: string): string[] =>
  fs
    .readFileSync(path.join(FIXTURES, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim());

/** The Qwen3 tokenizer the fixtures were rendered with. */
export function qwen3(): DumpTokenizer {
  const loaded = loadTokenizerDir(QWEN3_DIR);
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.value;
}

export const protoSnapshot = () => Object.getOwnPropertyNames(Object.prototype).sort().join(',');

/** Values of the wrong type (or out of range) that a mutation puts in place of a real one. */
const WRONG: unknown[] = [
  null,
  'x',
  '',
  true,
  -1,
  1.5,
  1e308,
  -1e308,
  {},
  [],
  [null],
  ['1'],
  [[1]],
  { length: 3 },
];

/** Every node of a parsed JSON value, with the parent and key that hold it. */
function nodes(x: unknown): { parent: Record<string, unknown> | unknown[]; key: string | number }[] {
  const out: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v))
      v.forEach((y, i) => {
        out.push({ parent: v, key: i });
        visit(y);
      });
    else if (typeof v === 'object' && v !== null)
      for (const k of Object.keys(v)) {
        out.push({ parent: v as Record<string, unknown>, key: k });
        visit((v as Record<string, unknown>)[k]);
      }
  };
  visit(x);
  return out;
}

/** One mutated line: cut short, a value replaced, or a hostile key added (JSON text, as a file holds it). */
export function mutate(line: string, rng: Rng): string {
  const kind = rng.int(3);
  if (kind === 0) return line.slice(0, rng.int(line.length));
  const x = JSON.parse(line) as unknown;
  const all = nodes(x);
  if (kind === 1 && all.length) {
    const at = all[rng.int(all.length)];
    (at.parent as Record<string | number, unknown>)[at.key] = WRONG[rng.int(WRONG.length)];
    return JSON.stringify(x);
  }
  const objects = [x, ...all.map((n) => (n.parent as Record<string | number, unknown>)[n.key])].filter(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  );
  const target = objects[rng.int(objects.length)];
  // JSON.stringify cannot write a "__proto__" key from a JS object without setting the prototype:
  // splice the text in, as a hostile file would hold it
  const text = JSON.stringify(target);
  const hostile = rng.int(2)
    ? '"__proto__":{"polluted":1,"token_ids":[1,2]},'
    : '"constructor":{"prototype":{"polluted":1}},';
  const whole = JSON.stringify(x);
  return whole.replace(text, `{${hostile}${text.slice(1)}`.replace(/,}$/, '}'));
}

/** A rejection's parts are one line each, and name the line. */
export function assertRejection(r: Rejection, index: number): void {
  assert.equal(r.record, index);
  for (const s of [r.field, r.expected, r.found]) {
    assert.equal(typeof s, 'string');
    assert.ok(!s.includes('\n'), s);
  }
  assert.ok(r.expected.length > 0);
}

/**
 * Parse `rounds` mutations of `lines` as `format` and lint every sample given (with `tok` on a
 * third of them): never a throw, a Rejection well formed, Object.prototype untouched. Returns how
 * many lines were read and how many were refused, so a caller can see both happen.
 */
export function fuzzReader(
  format: DumpFormat,
  lines: readonly string[],
  seed: number,
  rounds: number,
  tok?: DumpTokenizer,
): { read: number; refused: number } {
  const before = protoSnapshot();
  const rng = new Rng(seed);
  let read = 0;
  let refused = 0;
  for (let k = 0; k < rounds; k++) {
    let line = lines[rng.int(lines.length)];
    for (let m = 1 + rng.int(3); m > 0; m--) {
      try {
        JSON.parse(line);
      } catch {
        break; // already cut short
      }
      line = mutate(line, rng);
    }
    const r = parseRecord(format, line, k);
    if (!r.ok) {
      refused++;
      assertRejection(r.error, k);
      continue;
    }
    read++;
    for (const s of r.value) lintSample(s, { tok: k % 3 === 0 ? tok : undefined });
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(protoSnapshot(), before);
  return { read, refused };
}
