import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capObservation } from '../../../src/core/gym/env.js';
import { EarlyStopEnv, MixedTurnEnv } from '../../../src/core/gym/variants.js';
import {
  CONTEXT_LENGTH,
  compactSource,
  EditBudgetEnv,
  Episode,
  makeEnv,
  makeReward,
  makeTasks,
  makeTrajectory,
  OPS,
  Rng,
  randomizeNames,
  rewardOf,
  runScripted,
  type ScriptedPolicy,
  singleTurn,
  type Task,
  uninformed,
} from '../../../src/core/index.js';
import { tok } from '../../fixtures.js';

const tasks = makeTasks('train');
const call = (...inner: string[]) => `<call> ${inner.join(' ')} </call>`;
const task = tasks[0];
const wrongOp = OPS.find((o) => o !== task.kind)!;

/** Feed a fixed call sequence until the env is done; returns the results in order. */
function play(env: EditBudgetEnv, t: Task, calls: string[]) {
  env.reset(t);
  const out = [];
  for (const c of calls) {
    out.push(env.step(c));
    if (env.done) break;
  }
  return out;
}

describe('EarlyStopEnv', () => {
  it('ends unsubmitted with stop invalid at the first malformed or unknown call (maxInvalid 1)', () => {
    for (const bad of [call('edit'), call('fix'), call('edit', 'ok'), call('read', 'read'), '<call> read']) {
      const spec = makeReward('hidden', { stepPenalty: 0.1, invalidPenalty: 0.5 });
      const r = play(new EarlyStopEnv(6, spec), task, [call('read'), bad, call('submit')]);
      assert.equal(r.length, 2, bad);
      assert.equal(r[0].done, false);
      const last = r[1];
      assert.equal(last.done, true);
      assert.equal(last.obs, '');
      assert.ok(last.info);
      assert.equal(last.info.stop, 'invalid');
      assert.equal(last.info.submitted, false);
      assert.equal(last.info.hidden_pass, false);
      assert.equal(last.info.n_invalid, 1);
      assert.equal(last.info.n_turns, 2);
      assert.equal(last.info.reads, 1);
      assert.equal(last.reward, rewardOf(spec, last.info));
      assert.equal(last.reward, -0.2 - 0.5);
    }
  });

  it('with maxInvalid 2 answers the first error with an error observation and stops at the second', () => {
    const r = play(new EarlyStopEnv(6, makeReward(), 1, 2), task, [
      call('edit'),
      call('read'),
      call('fix'),
      call('submit'),
    ]);
    assert.equal(r.length, 3);
    assert.equal(r[0].obs, 'error malformed call');
    assert.equal(r[0].done, false);
    assert.equal(r[1].obs, compactSource(task.source));
    assert.equal(r[2].info?.stop, 'invalid');
    assert.equal(r[2].info?.n_invalid, 2);
    assert.equal(r[2].info?.n_turns, 3);
  });

  it('counts an edit beyond the budget as invalid (everything n_invalid counts)', () => {
    const r = play(new EarlyStopEnv(6, makeReward(), 1, 1), task, [
      call('edit', task.kind),
      call('edit', wrongOp),
      call('submit'),
    ]);
    assert.equal(r.length, 2);
    assert.equal(r[0].obs, 'ok');
    assert.equal(r[1].info?.stop, 'invalid');
    assert.equal(r[1].info?.edits, 1);
    assert.equal(r[1].info?.submitted, false, 'a correct edit is not graded without a submit');
  });

  it('lets the base env end an invalid call that spends the last turn (stop max_turns)', () => {
    const r = play(new EarlyStopEnv(2), task, [call('read'), call('edit')]);
    assert.equal(r[1].info?.stop, 'max_turns');
    assert.equal(r[1].info?.n_invalid, 1);
  });

  it('behaves as EditBudgetEnv on valid calls', () => {
    const seq = [call('read'), call('test'), call('edit', task.kind), call('test'), call('submit')];
    const a = play(new EarlyStopEnv(), task, seq);
    const b = play(new EditBudgetEnv(), task, seq);
    assert.deepEqual(a, b);
    assert.equal(a[a.length - 1].info?.hidden_pass, true);
    assert.equal(a[1].obs, 'FAIL');
    assert.equal(a[3].obs, 'PASS');
  });

  it('rejects maxInvalid < 1', () => {
    assert.throws(() => new EarlyStopEnv(6, makeReward(), 1, 0), /maxInvalid/);
  });

  it('ends every erroring scripted episode with pass 0, through Episode', () => {
    const rng = new Rng(5);
    let erred = 0;
    for (let i = 0; i < 300; i++) {
      const t = runScripted(
        uninformed,
        new EarlyStopEnv(),
        randomizeNames(tasks[i % tasks.length], rng),
        tok,
        rng,
      );
      if (t.info.n_invalid > 0) {
        erred++;
        assert.equal(t.info.hidden_pass, false);
        assert.ok(t.info.stop === 'invalid' || t.info.stop === 'max_turns');
        assert.equal(t.reward, 0);
      }
    }
    assert.ok(erred > 0, 'some episodes made an invalid call');
  });
});

describe('MixedTurnEnv', () => {
  const single = singleTurn(task);

  it('grades a single-turn task after its first call, as submitted', () => {
    const env = new MixedTurnEnv();
    const right = play(env, single, [call('edit', task.kind), call('submit')]);
    assert.equal(right.length, 1);
    assert.deepEqual(
      { ...right[0].info, task_id: '' },
      {
        submitted: true,
        hidden_pass: true,
        stop: 'submitted',
        n_invalid: 0,
        n_turns: 1,
        reads: 0,
        tests: 0,
        edits: 1,
        edit_op: task.kind,
        task_id: '',
        single_turn: true,
      },
    );
    assert.equal(right[0].reward, 1);
    const wrong = play(env, single, [call('edit', wrongOp)]);
    assert.equal(wrong[0].info?.hidden_pass, false);
    assert.equal(wrong[0].info?.submitted, true);
    // Any first call ends it: a read, a malformed call, a submit.
    for (const first of [call('read'), call('edit'), call('submit')]) {
      const r = play(env, single, [first, call('edit', task.kind)]);
      assert.equal(r.length, 1, first);
      assert.equal(r[0].info?.submitted, true);
      assert.equal(r[0].info?.hidden_pass, false);
      assert.equal(r[0].info?.n_turns, 1);
    }
  });

  it('runs multi-turn tasks normally, with one env instance serving a mixed sequence of tasks', () => {
    const env = new MixedTurnEnv(6, makeReward('hidden', { stepPenalty: 0.05 }));
    const multi = play(env, task, [call('read'), call('edit', task.kind), call('submit')]);
    assert.equal(multi.length, 3);
    assert.equal(multi[0].done, false);
    assert.equal(multi[2].info?.hidden_pass, true);
    assert.equal(multi[2].info?.single_turn, false);
    const one = play(env, single, [call('edit', task.kind)]);
    assert.equal(one[0].done, true);
    assert.ok(Math.abs(one[0].reward - 0.95) < 1e-12);
    const again = play(env, task, [call('test'), call('submit')]);
    assert.equal(again.length, 2, 'the env forgot the single-turn flag at reset');
  });

  it('works through Episode: single-turn episodes have one call whose verdict is the reward', () => {
    const rng = new Rng(3);
    const mixed = tasks.flatMap((t) => [t, singleTurn(t)]);
    for (const [i, t] of mixed.entries()) {
      const traj = runScripted(uninformed, new MixedTurnEnv(), randomizeNames(t, rng), tok, rng);
      if (i % 2 === 1) {
        assert.equal(traj.info.n_turns, 1);
        assert.equal(traj.info.submitted, true);
        assert.equal(traj.info.single_turn, true);
        assert.equal(traj.actionMask.reduce((s, x) => s + x, 0) > 0, true);
      } else assert.equal(traj.info.single_turn, false);
    }
  });
});

describe('remaining budget in the observation (showBudget, exercise 4)', () => {
  it('ends each observation with `turns left N`, digits as tokens, and the tokenizer reads it', () => {
    const env = new EditBudgetEnv(12, makeReward(), 1, { showBudget: true });
    const r = play(env, task, [call('read'), call('test'), call('edit'), call('submit')]);
    assert.equal(r[0].obs, `${compactSource(task.source)} turns left 1 1`);
    assert.equal(r[1].obs, 'FAIL turns left 1 0');
    assert.equal(r[2].obs, 'error malformed call turns left 9');
    for (const x of r.slice(0, 3)) tok.encode(x.obs);
    const plain = play(new EditBudgetEnv(12), task, [call('test')]);
    assert.equal(plain[0].obs, 'FAIL');
  });

  it('is passed through makeEnv and the variants', () => {
    assert.equal(
      play(makeEnv({ showBudget: true }) as EditBudgetEnv, task, [call('test')])[0].obs,
      'FAIL turns left 5',
    );
    assert.equal(
      play(new EarlyStopEnv(3, makeReward(), 1, 2, { showBudget: true }), task, [call('edit')])[0].obs,
      'error malformed call turns left 2',
    );
    assert.equal(
      play(new MixedTurnEnv(4, makeReward(), 1, { showBudget: true }), task, [call('test')])[0].obs,
      'FAIL turns left 3',
    );
  });
});

describe('capObservation and obsCap (section 12.7, context overflow)', () => {
  const words = 'a b c d e f g h i j'.split(' ');

  it('keeps short observations whole and cuts long ones to head, marker, tail', () => {
    assert.deepEqual(capObservation(words, 10), words);
    assert.deepEqual(capObservation(words, 20), words);
    assert.deepEqual(capObservation(words, 5), ['a', 'b', '...', 'i', 'j']);
    assert.deepEqual(capObservation(words, 6), ['a', 'b', 'c', '...', 'i', 'j']);
    assert.deepEqual(capObservation(words, 2), ['a', '...']);
    assert.deepEqual(capObservation(words, 1), ['...']);
    assert.deepEqual(capObservation([1, 2, 3, 4, 5], 3, -1), [1, -1, 5]);
    for (let n = 1; n < 12; n++) assert.equal(capObservation(words, n).length, Math.min(n, words.length));
    assert.throws(() => capObservation(words, 0), /obsCap/);
    assert.throws(() => capObservation(words, 2.5), /obsCap/);
  });

  it('caps the tool output in the env, before the budget suffix, with `...` from the vocabulary', () => {
    const env = new EditBudgetEnv(6, makeReward(), 1, { obsCap: 7, showBudget: true });
    const src = compactSource(task.source).split(' ');
    assert.ok(src.length > 7);
    const r = play(env, task, [call('read'), call('test')]);
    assert.equal(r[0].obs, [...src.slice(0, 3), '...', ...src.slice(-3), 'turns', 'left', '5'].join(' '));
    assert.equal(r[1].obs, 'FAIL turns left 4');
    tok.encode(r[0].obs);
    assert.equal(
      play(makeEnv({ obsCap: 5 }) as EditBudgetEnv, task, [call('read')])[0].obs.split(' ').length,
      5,
    );
    assert.throws(() => new EditBudgetEnv(6, makeReward(), 1, { obsCap: 0 }), /obsCap/);
  });

  it('keeps long read-heavy episodes inside the context', () => {
    const reader: ScriptedPolicy = {
      name: 'reader',
      next: (ep) => (ep.nCalls < 11 ? call('read') : call('submit')),
    };
    const run = (obsCap?: number) => {
      const ep = new Episode(makeEnv({ maxTurns: 12, obsCap }), tasks[3], tok);
      while (!ep.done) ep.act(tok.encode(reader.next(ep, new Rng(0))));
      return makeTrajectory(ep);
    };
    const uncapped = run();
    const capped = run(5);
    assert.equal(uncapped.info.stop, 'truncated');
    assert.equal(capped.info.stop, 'submitted');
    assert.equal(capped.info.reads, 11);
    assert.ok(capped.ids.length <= CONTEXT_LENGTH);
  });
});
