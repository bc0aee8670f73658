import assert from 'node:assert/strict';
import * as os from 'node:os';
import { afterEach, describe, it } from 'node:test';
import { defaultThreads, threadsSettingProblem } from '../../../src/core/tf/workers.js';

const saved = process.env.EPISODE_LAB_THREADS;
afterEach(() => {
  if (saved === undefined) delete process.env.EPISODE_LAB_THREADS;
  else process.env.EPISODE_LAB_THREADS = saved;
});

describe('EPISODE_LAB_THREADS', () => {
  it("unset: the machine's cores, at most 4", () => {
    delete process.env.EPISODE_LAB_THREADS;
    assert.equal(defaultThreads(), Math.min(os.availableParallelism(), 4));
    assert.equal(threadsSettingProblem(), null);
  });

  it('a whole number caps the threads; anything else is one thread, and said', () => {
    process.env.EPISODE_LAB_THREADS = '1';
    assert.equal(defaultThreads(), 1);
    assert.equal(threadsSettingProblem(), null);
    process.env.EPISODE_LAB_THREADS = '3';
    assert.equal(defaultThreads(), Math.min(3, os.availableParallelism(), 4));
    for (const bad of ['0', 'two', '-2', '1.5', '1e3']) {
      process.env.EPISODE_LAB_THREADS = bad;
      assert.equal(defaultThreads(), 1, bad);
      assert.match(threadsSettingProblem() ?? '', /is not a whole number from 1 up: using one thread/, bad);
    }
  });
});
