/**
 * The docs' tables of formats (docs/formats.md, `## Formats`) and of lint rules (docs/lint-rules.md,
 * `## Rules`) list exactly the registry's format ids and the rule table's ids, each once, as the
 * first column of a markdown table written `id` in backticks.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { describe, it } from 'node:test';
import { DUMP_FORMATS, RULE_IDS } from '../../../src/core/dumps/index.js';

/** The first column of the first table under `heading` (a `## ` line) in markdown `md`, backticks removed. */
function firstColumn(md: string, heading: string): string[] {
  const lines = md.split('\n');
  const at = lines.findIndex((l) => l.trim() === heading);
  assert.ok(at >= 0, `no heading "${heading}"`);
  const section: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (/^#{1,2} /.test(l)) break;
    section.push(l);
  }
  const start = section.findIndex((l) => l.trim().startsWith('|'));
  assert.ok(start >= 0, `no table under "${heading}"`);
  const rows: string[] = [];
  for (const l of section.slice(start)) {
    if (!l.trim().startsWith('|')) break;
    rows.push(l);
  }
  assert.match(rows[1] ?? '', /^\s*\|\s*:?-{3,}/, `the table under "${heading}" has a header row`);
  return rows.slice(2).map((row) => {
    const cell = row.trim().slice(1).split('|')[0].trim();
    const m = /^`([^`]+)`$/.exec(cell);
    assert.ok(m, `first cell ${JSON.stringify(cell)} under "${heading}" is not an id in backticks`);
    return m[1];
  });
}

function assertSameOnce(listed: string[], declared: readonly string[], what: string) {
  const twice = listed.filter((x, i) => listed.indexOf(x) !== i);
  assert.deepEqual(twice, [], `${what} listed twice`);
  assert.deepEqual([...listed].sort(), [...declared].sort(), what);
}

describe('the docs tables list what the code declares', () => {
  it('docs/formats.md: one row per registered format', () => {
    const md = fs.readFileSync('docs/formats.md', 'utf8');
    assertSameOnce(firstColumn(md, '## Formats'), DUMP_FORMATS, 'formats');
  });

  it('docs/lint-rules.md: one row per rule of the table', () => {
    const md = fs.readFileSync('docs/lint-rules.md', 'utf8');
    assertSameOnce(firstColumn(md, '## Rules'), RULE_IDS, 'rules');
  });

  it('the parser fails on a missing, a doubled or an unquoted id (the checks above can fail)', () => {
    const md = (rows: string) => `# T\n\n## Rules\n\n| id | what |\n| --- | --- |\n${rows}\n\n## Next\n`;
    assert.deepEqual(firstColumn(md('| `a` | x |\n| `b` | y |'), '## Rules'), ['a', 'b']);
    assert.throws(() => assertSameOnce(firstColumn(md('| `a` | x |'), '## Rules'), ['a', 'b'], 'rules'));
    assert.throws(() =>
      assertSameOnce(firstColumn(md('| `a` | x |\n| `a` | y |'), '## Rules'), ['a'], 'rules'),
    );
    assert.throws(() => firstColumn(md('| a | x |'), '## Rules'));
    assert.throws(() => firstColumn(md('| `a` | x |'), '## Formats'));
  });
});
