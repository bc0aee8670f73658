import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  collate,
  type EpisodeInfo,
  fromTrajectoryJSON,
  LoggedEnv,
  logByStep,
  makeEnv,
  makeTasks,
  padRows,
  Rng,
  randomizeNames,
  runScripted,
  toTrajectoryJSON,
  uninformed,
  validateTrajectoryJSON,
} from '../../../src/core/index.js';
import { tok } from '../../fixtures.js';

const tasks = makeTasks('train');

function sample(n: number, seed: number) {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) =>
    runScripted(uninformed, makeEnv(), randomizeNames(tasks[i % tasks.length], rng), tok, rng),
  );
}

describe('collate and padRows', () => {
  it('pads every row to the longest and keeps the mask and turns aligned', () => {
    const trajs = sample(12, 1);
    const b = collate(trajs, tok.padId);
    const T = Math.max(...trajs.map((t) => t.ids.length));
    assert.equal(b.ids.length, 12);
    for (let r = 0; r < 12; r++) {
      const t = trajs[r];
      assert.equal(b.ids[r].length, T);
      assert.equal(b.actionMask[r].length, T - 1);
      assert.deepEqual(b.ids[r].slice(0, t.ids.length), t.ids);
      assert.ok(b.ids[r].slice(t.ids.length).every((x) => x === tok.padId));
      assert.ok(b.actionMask[r].slice(t.ids.length - 1).every((x) => x === 0));
      assert.ok(b.turnIds[r].slice(t.ids.length - 1).every((x) => x === -1));
      assert.deepEqual(b.turnIds[r].slice(0, t.ids.length - 1), t.turn.slice(1));
      assert.deepEqual(b.oldLogps[r].slice(0, t.ids.length - 1), t.logps);
    }
    assert.deepEqual(
      b.lengths,
      trajs.map((t) => t.ids.length),
    );
  });

  it('padRows refuses a row that does not fit', () => {
    assert.deepEqual(padRows([[1], [2, 3]], 3, 0), [
      [1, 0, 0],
      [2, 3, 0],
    ]);
    assert.throws(() => padRows([[1, 2, 3]], 2, 0), /does not fit/);
  });
});

describe('LoggedEnv and logByStep', () => {
  it('logs each finished episode and splits the log by step', () => {
    const log: EpisodeInfo[] = [];
    const rng = new Rng(3);
    const history: { episodes: number }[] = [];
    for (const n of [3, 5, 2]) {
      for (let i = 0; i < n; i++)
        runScripted(uninformed, new LoggedEnv(makeEnv(), log), randomizeNames(tasks[i], rng), tok, rng);
      history.push({ episodes: n });
    }
    assert.equal(log.length, 10);
    const steps = logByStep(history, log);
    assert.deepEqual(
      steps.map((s) => s.length),
      [3, 5, 2],
    );
    assert.throws(() => logByStep([{ episodes: 4 }], log), /log holds 10 episodes/);
  });
});

describe('trajectory JSON', () => {
  it('round-trips and validates', () => {
    for (const t of sample(6, 2)) {
      const j = JSON.parse(JSON.stringify(toTrajectoryJSON(t, tok, { step: 3, index: 1 })));
      const v = validateTrajectoryJSON(j);
      assert.deepEqual(fromTrajectoryJSON(v), { ok: true, value: t });
      assert.equal(v.tokens.length, t.ids.length);
      assert.equal(v.step, 3);
    }
  });

  it('reads back only an episode of the BugFix gym, and says which field another tool left out', () => {
    const j = validateTrajectoryJSON(JSON.parse(JSON.stringify(toTrajectoryJSON(sample(1, 4)[0], tok))));
    const foreign = { ...j, task: { id: 'x' }, info: { ...j.info, single_turn: undefined } };
    const r = fromTrajectoryJSON(foreign);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, /episode\.task\.fname/);
  });

  it('names the field that is wrong', () => {
    const j = JSON.parse(JSON.stringify(toTrajectoryJSON(sample(1, 4)[0], tok)));
    assert.throws(
      () => validateTrajectoryJSON({ ...j, actionMask: j.actionMask.slice(1) }),
      /not a trajectory: actionMask: expected \d+ entries \(one per predicted position, T - 1\), got \d+/,
    );
    assert.throws(
      () => validateTrajectoryJSON({ ...j, owner: j.owner.map(() => 7) }),
      /expected owner codes 0/,
    );
    assert.throws(
      () => validateTrajectoryJSON({ ...j, v: 99 }),
      /v: expected version 1 \(what this reader knows\), got 99/,
    );
    assert.throws(() => validateTrajectoryJSON({ ...j, ids: [] }), /expected at least one token/);
    assert.throws(() => validateTrajectoryJSON('nope'), /expected an object/);
  });
});

describe('Rng', () => {
  it('reproduces from a seed and differs across seeds', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    assert.deepEqual(
      xs,
      Array.from({ length: 100 }, () => b.nextU32()),
    );
    const c = new Rng(43);
    assert.notDeepEqual(
      xs.slice(0, 5),
      Array.from({ length: 5 }, () => c.nextU32()),
    );
  });

  it('is roughly uniform and restores its state', () => {
    const r = new Rng(7);
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 50_000; i++) counts[r.int(5)]++;
    for (const c of counts) assert.ok(Math.abs(c - 10_000) < 500, `${counts}`);
    const state = r.getState();
    const next = r.float();
    r.setState(state);
    assert.equal(r.float(), next);
  });
});
