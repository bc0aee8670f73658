/**
 * The commands of the palette and the run explorer against the stand-in `vscode` and a fake trainer:
 * the jobs they start from the user's answers, and what they tell the user.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, beforeEach, describe, it } from 'node:test';
import type * as vscode from 'vscode';
import type { RunningJob } from '../../src/extension/trainer-client.js';
import type { Job, JobKind, JobOf, JobResults } from '../../src/protocol/trainer.js';
import { installVscodeStub, resetStub, state, Uri } from './vscode-stub.js';

installVscodeStub();

let Commands: typeof import('../../src/extension/commands.js').Commands;
let RunTreeProvider: typeof import('../../src/extension/run-tree.js').RunTreeProvider;
let Dashboard: typeof import('../../src/extension/dashboard.js').Dashboard;

before(async () => {
  ({ Commands } = await import('../../src/extension/commands.js'));
  ({ RunTreeProvider } = await import('../../src/extension/run-tree.js'));
  ({ Dashboard } = await import('../../src/extension/dashboard.js'));
});

/** The stub's stand-in for an object of type T: it implements only what the code under test uses. */
function standIn<T>(stub: object): T {
  return stub as T;
}

/** A run-writing job's answer: `steps` steps done, complete or not. */
const runResult = (runDir: string, steps: number, complete: boolean) => ({
  runDir,
  steps,
  episodes: steps * 160,
  complete,
});

/** The commands over a trainer that records each job and answers it with `answer` (or fails). */
function setup(answer: (job: Job) => JobResults[JobKind] | Error = () => new Error('no job here')) {
  const started: Job[] = [];
  const trainer = {
    backend: 'cpu (fake)',
    recipes: [],
    async ensureStarted() {},
    async start<K extends JobKind>(job: JobOf<K>): Promise<RunningJob<K>> {
      started.push(job);
      const a = answer(job);
      const result = a instanceof Error ? Promise.reject(a) : Promise.resolve(a as JobResults[K]);
      result.catch(() => {});
      return { id: `job-${started.length}`, result };
    },
    cancel() {},
    cancellable: () => [],
  };
  const tree = new RunTreeProvider(() => Commands.runsRoot());
  const shown: string[][] = [];
  const dashboard = new Dashboard(standIn<vscode.Uri>(Uri.file('/ext')), tree, () => {});
  dashboard.show = (dirs: string[]) => void shown.push(dirs);
  const cmds = new Commands(
    standIn(trainer),
    tree,
    standIn({ reveal: async () => {} }),
    { isOpen: false, show: () => {}, showDump: async () => {} },
    dashboard,
    standIn({ appendLine: () => {} }),
    { show: () => {} },
  );
  return { cmds, started, tree, shown };
}

const FORM = ['Train with the default', '6', 'pass or fail', 'token_mean', 'full history'];

describe('Train Agent', () => {
  beforeEach(() => {
    resetStub();
    state.workspaceFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'el-cmd-'));
  });

  it('asks for the advantage estimator and starts turn-level GAE with a critic and the chapter’s defaults', async () => {
    const { cmds, started } = setup(() => runResult('/r/train-1', 40, true));
    state.inputs.push(null, '3');
    state.picks.push(...FORM, 'turn-level GAE');
    await cmds.trainAgent();
    assert.ok(state.asked.includes('Advantage estimator (section 12.2)'));
    assert.equal(started.length, 1);
    const job = started[0] as JobOf<'train'>;
    assert.equal(job.kind, 'train');
    assert.deepEqual(job.credit, { estimator: 'turn', critic: true, lam: 0.95, warmupSteps: 60 });
    assert.equal(job.config.steps, 40);
    assert.equal(job.config.seed, 3);
    assert.ok(!state.asked.includes('Critic'), 'a GAE estimator always has a critic: no question');
  });

  it('outcome GRPO asks whether to train a critic beside it', async () => {
    for (const [answer, critic] of [
      ['train a critic', true],
      ['no critic', false],
    ] as const) {
      const { cmds, started } = setup(() => runResult('/r/train-1', 40, true));
      state.inputs.push(null, null);
      state.picks.push(...FORM, 'outcome (GRPO)', answer);
      await cmds.trainAgent();
      assert.deepEqual((started[0] as JobOf<'train'>).credit, {
        estimator: 'outcome',
        critic,
        lam: 0.95,
        warmupSteps: 60,
      });
    }
  });

  it('escape at the estimator starts nothing', async () => {
    const { cmds, started } = setup();
    state.inputs.push(null, null);
    state.picks.push(...FORM, undefined);
    await cmds.trainAgent();
    assert.equal(started.length, 0);
  });
});
