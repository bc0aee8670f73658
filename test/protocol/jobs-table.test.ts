/**
 * The job table (JOBS in src/protocol/trainer.ts) against everything derived from it: the start and
 * done parsers take exactly its kinds, the trainer has one handler per kind, and the extension
 * offers to cancel exactly the jobs it declares cancellable. SAMPLES holds a job of every kind (the
 * compiler asks for one when a kind is added).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { makeEnv, makeTasks, oracle, Rng, runScripted, toTrajectoryJSON } from '../../src/core/index.js';
import { TrainerClient } from '../../src/extension/trainer-client.js';
import {
  JOB_KINDS,
  JOBS,
  type JobKind,
  type JobOf,
  parseHostMessage,
  parseTrainerMessage,
} from '../../src/protocol/trainer.js';
import { jobs } from '../../src/trainer/jobs.js';
import { tok } from '../fixtures.js';

const episode = toTrajectoryJSON(runScripted(oracle, makeEnv(), makeTasks('train')[0], tok, new Rng(1)), tok);
const policy = { kind: 'keepObs' as const, k: 1 };

const SAMPLES: { [K in JobKind]: JobOf<K> } = {
  sampleScripted: {
    kind: 'sampleScripted',
    runsDir: '/r',
    policy: 'oracle',
    split: 'train',
    episodes: 8,
    batch: 4,
    seed: 1,
    maxTurns: 6,
  },
  maskCheck: { kind: 'maskCheck', episode, bug: 'tool', seed: 0 },
  train: { kind: 'train', runsDir: '/r', config: { steps: 2 } },
  recipe: { kind: 'recipe', runsDir: '/r', recipe: '12.3', smoke: true },
  sampleModel: { kind: 'sampleModel', runsDir: '/r', from: 'base', episodes: 4, seed: 1 },
  creditTable: { kind: 'creditTable', episode, runDir: null, model: null, critic: null, outcome: null },
  rerun: { kind: 'rerun', episode, runDir: null, model: 'base', policy, n: 4, seed: 1 },
  evalContext: { kind: 'evalContext', runDir: null, model: 'base', policies: [policy], perTask: 2, seed: 7 },
  retrain: { kind: 'retrain', runsDir: '/r', runDir: null, policy, steps: 4 },
  dumpOpen: { kind: 'dumpOpen', file: '/d.jsonl', tokenizer: null, format: 'auto', lint: true },
  dumpSample: {
    kind: 'dumpSample',
    file: '/d.jsonl',
    tokenizer: null,
    format: 'nemo-rl',
    record: 0,
    offset: 0,
    bytes: 10,
  },
  episodeTable: { kind: 'episodeTable', runDir: '/r/a' },
};

const sorted = (xs: readonly string[]) => [...xs].sort();

describe('the job table and what is derived from it', () => {
  test('the samples cover the table, kind by kind', () => {
    assert.deepEqual(sorted(Object.keys(SAMPLES)), sorted(JOB_KINDS));
    for (const [kind, job] of Object.entries(SAMPLES)) assert.equal(job.kind, kind);
  });

  test('a start message takes a job of every declared kind, and of no other kind', () => {
    for (const job of Object.values(SAMPLES)) {
      const r = parseHostMessage({ type: 'start', id: 'a', job });
      assert.ok(r.ok, `${job.kind}: ${r.ok ? '' : r.error}`);
      assert.deepEqual(r.value, { type: 'start', id: 'a', job });
    }
    const r = parseHostMessage({ type: 'start', id: 'a', job: { ...SAMPLES.train, kind: 'fly' } });
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, /^start\.job\.kind: expected one of sampleScripted, maskCheck, /);
  });

  test("a done message is checked by its own kind's result schema, and no other kind is taken", () => {
    for (const kind of JOB_KINDS) {
      const r = parseTrainerMessage({ type: 'done', id: 'a', kind, result: { unexpected: 1 } });
      assert.equal(r.ok, false);
      // The message reached the kind's result schema (an undeclared kind is refused at `kind`).
      assert.match(r.ok ? '' : r.error, /^done\.result/, kind);
    }
    const r = parseTrainerMessage({ type: 'done', id: 'a', kind: 'fly', result: {} });
    assert.match(r.ok ? '' : r.error, /^done\.kind: /);
  });

  test('a ready message lists only declared kinds', () => {
    assert.ok(
      parseTrainerMessage({ type: 'ready', backend: 'cpu', pid: 1, jobs: JOB_KINDS, recipes: [] }).ok,
    );
    const r = parseTrainerMessage({ type: 'ready', backend: 'cpu', pid: 1, jobs: ['fly'], recipes: [] });
    assert.equal(r.ok, false);
  });

  test('the trainer has one handler per kind, and no other', () => {
    assert.deepEqual(sorted(Object.keys(jobs)), sorted(JOB_KINDS));
    for (const kind of JOB_KINDS) assert.equal(typeof jobs[kind], 'function', kind);
  });

  test('a long job reports progress in a declared unit, a quick one reports none', () => {
    for (const kind of JOB_KINDS) {
      const { cancellable, progress } = JOBS[kind];
      assert.equal(progress === null, !cancellable, kind);
    }
  });
});

describe('the extension offers to cancel what the table declares cancellable', () => {
  // A trainer that says it is ready and never answers: every job started stays in flight.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'el-jobs-table-'));
  const script = path.join(dir, 'silent-trainer.cjs');
  fs.writeFileSync(
    script,
    `process.on('message', (m) => { if (m.type === 'shutdown') process.exit(0); });
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', backend: 'none', pid: process.pid, jobs: ${JSON.stringify(JOB_KINDS)}, recipes: [] });
`,
  );
  const client = new TrainerClient(script, () => {});
  after(() => client.dispose());

  test('with one job of every kind in flight, Cancel Run lists exactly the cancellable ones', async () => {
    for (const job of Object.values(SAMPLES)) {
      const running = await client.start(job);
      // The silent trainer never answers: the job fails when the client is disposed.
      running.result.catch(() => {});
    }
    assert.deepEqual(sorted(client.running().map((r) => r.job.kind)), sorted(JOB_KINDS));
    assert.deepEqual(
      sorted(client.cancellable().map((r) => r.job.kind)),
      sorted(JOB_KINDS.filter((k) => JOBS[k].cancellable)),
    );
  });
});
