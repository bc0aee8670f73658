/**
 * The one-line behaviour statistics (src/core/runs/step-line.ts) in each form, against the lines
 * written out by hand, and the training config's `steps` and `from` (src/core/runs/train-config.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CLI_FORM,
  CLI_STEP_FORM,
  PROGRESS_FORM,
  statsLine,
  stepProgress,
} from '../../../src/core/runs/step-line.js';
import { readTrainConfig } from '../../../src/core/runs/train-config.js';

const s = { pass_rate: 0.1234, reads: 1.5, tests: 0.25, edits: 2, turns: 3.456, reward: 0.1237 };

describe('statsLine', () => {
  test("the extension's progress: comma-separated, no edits, an unsigned reward", () => {
    assert.equal(statsLine(s, PROGRESS_FORM), 'pass 0.12, reads 1.50, tests 0.25, turns 3.46, reward 0.124');
    assert.equal(
      stepProgress(3, 40, s),
      'step 3 (4/40): pass 0.12, reads 1.50, tests 0.25, turns 3.46, reward 0.124',
    );
  });

  test("the CLI's: pipe-separated, with edits and a signed reward", () => {
    assert.equal(
      statsLine(s, CLI_FORM),
      'pass 0.123 | reads 1.50 | tests 0.25 | edits 2.00 | turns 3.46 | reward +0.124',
    );
    assert.equal(
      statsLine({ ...s, reward: -0.25 }, CLI_STEP_FORM),
      'pass 0.12 | reads 1.50 | tests 0.25 | edits 2.00 | turns 3.46 | reward -0.250',
    );
  });
});

describe('readTrainConfig', () => {
  test('steps and from default to 40 and "base"; the other keys are RLConfig fields', () => {
    const c = readTrainConfig({ seed: 3 }, 'run.json');
    assert.equal(c.steps, 40);
    assert.equal(c.from, 'base');
    assert.equal(c.cfg.seed, 3);
    const d = readTrainConfig({ steps: 2, from: '/runs/a' }, 'run.json');
    assert.deepEqual([d.steps, d.from], [2, '/runs/a']);
  });

  test('a bad steps, from or field is named under where', () => {
    assert.throws(
      () => readTrainConfig({ steps: 0 }, 'run.json'),
      /^Error: run\.json\.steps must be a positive integer, got 0$/,
    );
    assert.throws(
      () => readTrainConfig({ steps: '2' }, 'config'),
      /config\.steps must be a positive integer, got "2"/,
    );
    assert.throws(() => readTrainConfig({ steps: 1.5 }, 'config'), /config\.steps/);
    assert.throws(
      () => readTrainConfig({ from: '' }, 'config'),
      /config\.from must be "base" or a checkpoint folder, got ""/,
    );
    assert.throws(() => readTrainConfig({ from: 3 }, 'config'), /config\.from/);
    assert.throws(() => readTrainConfig({ groupSize: 1 }, 'config'), /config\.groupSize/);
  });
});
