/**
 * A training job with a critic (Train Agent's estimator and critic): the run saves its critic where
 * the inspector looks for it, records the credit options in config.json, logs the critic's
 * statistics per step, and is not offered a resume.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { resumeRefusal } from '../../src/core/runs/resumable.js';
import { readRun } from '../../src/core/runs/run-files.js';
import { initBackend } from '../../src/core/tf/backend.js';
import { jobs } from '../../src/trainer/jobs.js';

describe('a training job with turn-level GAE', () => {
  before(async () => {
    await initBackend();
  });

  it('trains with a warmed critic and saves it in checkpoints/critic', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'el-credit-'));
    const logs: string[] = [];
    const credit = { estimator: 'turn' as const, critic: true, lam: 0.95, warmupSteps: 2 };
    const res = await jobs.train(
      {
        kind: 'train',
        runsDir: root,
        name: 'gae',
        config: { steps: 1, promptsPerStep: 2, groupSize: 2, epochs: 1, seed: 3 },
        credit,
      },
      {
        id: 'j',
        backend: await initBackend(),
        log: (l) => logs.push(l),
        cancelled: false,
        progress: () => {},
        runCreated: () => {},
      },
    );
    assert.equal(res.complete, true);
    assert.ok(fs.existsSync(path.join(res.runDir, 'checkpoints', 'critic', 'weights.bin')));
    assert.ok(logs.some((l) => /^critic warm-up on 120 episodes, 2 steps: explained variance/.test(l)));
    const h = readRun(res.runDir).history[0];
    assert.equal(typeof h.value_loss, 'number', 'the critic’s loss is a statistic of the step');
    assert.ok(Number.isFinite(h.value_loss as number));
    assert.deepEqual(
      JSON.parse(fs.readFileSync(path.join(res.runDir, 'config.json'), 'utf8')).credit,
      credit,
    );
    assert.match(resumeRefusal(res.runDir) ?? '', /trains a critic/);
  });
});
