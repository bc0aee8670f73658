import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type EpisodeRow,
  emptyTable,
  filterRows,
  parseFilter,
  pushRow,
  sortRows,
} from '../../../src/core/browse/table.js';

const row = (over: Partial<EpisodeRow>): EpisodeRow => ({
  key: 'k',
  text: '',
  step: 0,
  index: 0,
  task: 'train-00',
  kind: 'fix_return',
  group: 0,
  pass: 1,
  reward: 1,
  advantage: 0.5,
  turns: 3,
  stop: 'submitted',
  invalid: 0,
  tokens: 40,
  flags: null,
  ...over,
});

/** Six hand-made episodes over three steps. */
function table() {
  const t = emptyTable();
  const rows: Partial<EpisodeRow>[] = [
    {
      key: 'a',
      step: 0,
      pass: 0,
      stop: 'max_turns',
      turns: 6,
      reward: 0,
      text: '<call> test </call> | <call> test </call>',
    },
    {
      key: 'b',
      step: 0,
      pass: 1,
      text: '<call> read </call> | <call> edit fix_return </call> | <call> submit </call>',
    },
    { key: 'c', step: 30, pass: 0, stop: 'max_turns', turns: 6, reward: -0.3, task: 'train-03' },
    {
      key: 'd',
      step: 31,
      pass: 0,
      stop: 'submitted',
      turns: 2,
      reward: -1,
      task: 'train-03',
      kind: 'fix_init',
    },
    { key: 'e', step: 35, pass: 1, advantage: null, task: 'train-03', flags: 'mask-on-tool,eos-not-trained' },
    {
      key: 'f',
      step: 39,
      pass: 0,
      stop: 'max_turns',
      turns: 6,
      reward: 0,
      text: '<call> edit fix_return </call>',
    },
  ];
  for (const r of rows) pushRow(t, row(r));
  return t;
}

const keys = (t: ReturnType<typeof table>, rows: number[]) => rows.map((i) => t.keys[i]);

function run(query: string) {
  const t = table();
  const f = parseFilter(query);
  assert.ok(f.ok, f.ok ? '' : f.error);
  return keys(t, filterRows(t, f.value));
}

describe('the episode table filter', () => {
  it('combines clauses: the issue’s example, failed episodes that ran out of turns late in the run', () => {
    assert.deepEqual(run('pass = no and stop = max_turns and step >= 30'), ['c', 'f']);
    assert.deepEqual(run('pass=no stop=max_turns step>=30'), ['c', 'f'], 'spaces and "and" are the same');
  });

  it('compares numbers, matches text exactly (case-insensitive) or by ~ contains, and finds missing values', () => {
    assert.deepEqual(run('reward < 0'), ['c', 'd']);
    assert.deepEqual(run('turns != 6'), ['b', 'd', 'e']);
    assert.deepEqual(run('task = TRAIN-03'), ['c', 'd', 'e']);
    assert.deepEqual(run('kind ~ init'), ['d']);
    assert.deepEqual(run('flags ~ eos'), ['e']);
    assert.deepEqual(run('advantage = null'), ['e']);
    assert.deepEqual(run('flags != -'), ['e']);
  });

  it('free text (bare words or quoted) matches the episode’s calls', () => {
    assert.deepEqual(run('"edit fix_return"'), ['b', 'f']);
    assert.deepEqual(run('pass = no "edit fix_return"'), ['f']);
    assert.deepEqual(run('read submit'), ['b']);
    assert.deepEqual(run(''), ['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('says what is wrong with a query instead of throwing', () => {
    const bad: [string, RegExp][] = [
      ['stpe >= 3', /unknown column “stpe”: the columns are step, /],
      ['step >= ', /needs a value after >=/],
      ['>= 3', /needs a column before it/],
      ['step >= ten', /step is a number, not “ten”/],
      ['pass = maybe', /pass is yes or no/],
      ['stop > max_turns', /stop is text: use =, != or ~/],
      ['"unclosed', /cannot read the query/],
    ];
    for (const [q, re] of bad) {
      const f = parseFilter(q);
      assert.equal(f.ok, false, q);
      if (!f.ok) assert.match(f.error, re, q);
    }
  });

  it('sorts by a column, nulls last, ties in table order, both directions', () => {
    const t = table();
    const all = t.keys.map((_, i) => i);
    assert.deepEqual(keys(t, sortRows(t, all.slice(), 'reward')), ['d', 'c', 'a', 'f', 'b', 'e']);
    assert.deepEqual(keys(t, sortRows(t, all.slice(), 'reward', true)), ['b', 'e', 'a', 'f', 'c', 'd']);
    assert.deepEqual(keys(t, sortRows(t, all.slice(), 'advantage')).at(-1), 'e');
    assert.deepEqual(keys(t, sortRows(t, all.slice(), 'kind')), ['d', 'a', 'b', 'c', 'e', 'f']);
  });

  it('filters 100 000 rows (correct counts; the time is in the render benchmark)', () => {
    const t = emptyTable();
    for (let i = 0; i < 100_000; i++)
      pushRow(
        t,
        row({
          key: String(i),
          step: i % 40,
          pass: i % 5 === 0 ? 1 : 0,
          stop: i % 3 ? 'submitted' : 'max_turns',
        }),
      );
    const f = parseFilter('pass = no and stop = max_turns and step >= 30');
    assert.ok(f.ok);
    if (!f.ok) return;
    const n = filterRows(t, f.value).length;
    let expected = 0;
    for (let i = 0; i < 100_000; i++) if (i % 5 !== 0 && i % 3 === 0 && i % 40 >= 30) expected++;
    assert.equal(n, expected);
  });
});
