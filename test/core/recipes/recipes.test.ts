import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { initBackend } from '../../../src/core/index.js';
import {
  aggregateTables,
  formatAggregated,
  formatTable,
  runRecipe,
} from '../../../src/core/recipes/index.js';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'el-recipes-'));

describe('recipes (smoke forms: the same code paths, 2 steps)', () => {
  before(async () => {
    await initBackend();
  });

  it('12.1-budget: policy share about 0.3 at every budget', async () => {
    const r = await runRecipe('12.1-budget', { runsDir, seed: 0, smoke: true });
    const rows = r.tables[0].rows;
    assert.deepEqual(
      rows.map((x) => x[0]),
      ['max_turns 6', 'max_turns 12', 'max_turns 24'],
    );
    for (const row of rows) {
      const share = row[3] as number;
      assert.ok(share > 0.2 && share < 0.45, `policy share ${share}`);
      assert.ok((row[2] as number) <= 256, 'no episode exceeds the context');
    }
    const saved = JSON.parse(fs.readFileSync(path.join(r.dir, 'recipe.json'), 'utf8'));
    assert.equal(saved.name, '12.1-budget');
    assert.deepEqual(saved.tables, r.tables);
  });

  it('12.4: the per-call sampler reproduces the single-sequence one; per-call log-probs sum to the episode', async () => {
    const r = await runRecipe('12.4', { runsDir, seed: 0, smoke: true });
    assert.match(r.notes[0], /^identical episodes: true \| calls: \d+ \(16 episodes/);
    const diff = Number(/= ([\d.e+-]+)$/.exec(r.notes[1])?.[1]);
    assert.ok(diff < 1e-5, `max |log p(episode) - sum of per-call log p| = ${diff}`);
    assert.equal(r.tables[0].rows.length, 6, 'the 2 x 3 table');
    assert.equal(r.runs.length, 2);
    for (const dir of r.runs) assert.ok(fs.existsSync(path.join(dir, 'checkpoints', 'final', 'model.json')));
  });

  it('12.2: three arms, a saved critic, and the per-call figure', async () => {
    const r = await runRecipe('12.2', { runsDir, seed: 0, smoke: true });
    assert.deepEqual(
      r.tables[0].rows.map((x) => x[0]),
      ['outcome (GRPO)', 'token GAE', 'turn GAE'],
    );
    assert.ok(fs.existsSync(path.join(r.runs[2], 'checkpoints', 'critic', 'model.json')));
    assert.ok(!fs.existsSync(path.join(r.runs[0], 'checkpoints', 'critic')));
    const history = fs
      .readFileSync(path.join(r.runs[2], 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(
      history.every((h) => typeof h.value_loss === 'number'),
      'critic runs record the value loss',
    );
    const fig = r.figures.find((f) => f.kind === 'bars');
    if (fig) {
      // per call: TD error and advantages; the last call is submit
      assert.equal(fig.labels?.[fig.labels.length - 1], 'submit');
      assert.equal(fig.series.length, 4);
    }
  });
});

describe('recipe tables', () => {
  const t = (x: number) => ({ title: 'T', columns: ['arm', 'pass'], rows: [['a', x]], digits: [0, 2] });
  it('aggregate seeds into mean and sample sd', () => {
    const agg = aggregateTables([t(0.5), t(0.7), t(0.9)]);
    assert.ok(Math.abs((agg.rows[0][1] as number) - 0.7) < 1e-12);
    assert.ok(Math.abs((agg.spread[0][1] as number) - 0.2) < 1e-12);
    assert.match(formatAggregated(agg), /0\.70 ±0\.20/);
    assert.match(formatTable(t(0.25)), /^T\narm\s+pass\na\s+0\.25$/);
  });
  it('a cell one seed has no value for (NaN, null after JSON) is averaged over the others', () => {
    const missing = JSON.parse(JSON.stringify(t(Number.NaN))); // NaN -> null, as recipe.json holds it
    assert.equal(missing.rows[0][1], null);
    const agg = aggregateTables([missing, t(0.4), t(0.8)]);
    assert.ok(Math.abs((agg.rows[0][1] as number) - 0.6) < 1e-12);
    assert.match(formatAggregated(agg), /0\.60 ±0\.28/);
    const none = aggregateTables([missing, t(Number.NaN)]);
    assert.ok(Number.isNaN(none.rows[0][1] as number));
    assert.match(formatAggregated(none), /a\s+-$/);
  });
});
