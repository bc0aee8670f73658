import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyOp,
  blindGuesser,
  buildTokenizer,
  CONTEXT_LENGTH,
  commonestOp,
  compactSource,
  EditBudgetEnv,
  Episode,
  inferOp,
  MAX_CALL_TOKENS,
  makeEnv,
  makeReward,
  makeTasks,
  makeTrajectory,
  malformed,
  OPS,
  OWNER,
  oracle,
  parseCall,
  passes,
  Rng,
  randomizeNames,
  runCase,
  runScripted,
  type StopReason,
  scriptedCorpus,
  singleTurn,
  type Task,
  templateNames,
  uninformed,
} from '../../../src/core/index.js';

const all = makeTasks('all');
const tok = buildTokenizer(all);

describe('tasks', () => {
  it('has about 20 training tasks and 8 or more held-out tasks from unseen templates', () => {
    const train = makeTasks('train');
    const heldout = makeTasks('heldout');
    assert.equal(train.length, 20);
    assert.ok(heldout.length >= 8);
    const trainTemplates = new Set(train.map((t) => t.template));
    for (const t of heldout)
      assert.ok(!trainTemplates.has(t.template), `${t.template} is also a training template`);
    assert.deepEqual(templateNames('heldout').sort(), [...new Set(heldout.map((t) => t.template))].sort());
  });

  it('balances the five bug kinds in each split', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = makeTasks(split);
      for (const op of OPS)
        assert.equal(tasks.filter((t) => t.kind === op).length, tasks.length / OPS.length, `${split} ${op}`);
    }
  });

  it('each task fails its tests, passes them after its own operation, and fails after any other', () => {
    for (const t of all) {
      assert.equal(runCase(t.source, t.visible), false, `${t.id} visible test passes unfixed`);
      assert.equal(passes(t.source, t.hidden), false, `${t.id} hidden test passes unfixed`);
      const fixed = applyOp(t.source, t.kind);
      assert.equal(runCase(fixed, t.visible), true, `${t.id} visible test fails after ${t.kind}`);
      assert.equal(passes(fixed, t.hidden), true, `${t.id} hidden test fails after ${t.kind}`);
      for (const op of OPS.filter((o) => o !== t.kind))
        assert.equal(
          passes(applyOp(t.source, op), t.hidden),
          false,
          `${t.id} passes after the wrong op ${op}`,
        );
    }
  });

  it('inferOp recovers the operation from the source, also after renaming', () => {
    const rng = new Rng(11);
    for (let s = 0; s < 20; s++)
      for (const t of all) {
        const r = randomizeNames(t, rng);
        assert.equal(r.kind, t.kind);
        assert.equal(inferOp(r.source), t.kind, `${t.id} renamed:\n${r.source}`);
        assert.equal(inferOp(compactSource(r.source)), t.kind);
        assert.equal(
          passes(applyOp(r.source, r.kind), r.hidden),
          true,
          `${t.id} renamed does not pass when fixed`,
        );
      }
  });

  it('the issue names the function but not the kind', () => {
    const rng = new Rng(3);
    for (const t of all) {
      const r = randomizeNames(t, rng);
      assert.ok(r.issue.split(' ').includes(r.fname));
      for (const op of OPS) assert.ok(!r.issue.includes(op));
      assert.ok(!r.issue.includes('\n'));
    }
    // Symptoms are drawn independently of the kind: every kind shows every symptom.
    const seen = new Map<string, Set<string>>();
    for (let s = 0; s < 40; s++)
      for (const t of all) {
        const r = randomizeNames(t, rng);
        const symptom = r.issue.split(' : ')[1];
        if (!seen.has(t.kind)) seen.set(t.kind, new Set());
        seen.get(t.kind)?.add(symptom);
      }
    const sizes = [...seen.values()].map((s) => s.size);
    assert.ok(
      sizes.every((n) => n === sizes[0] && n >= 2),
      `symptoms per kind: ${sizes}`,
    );
  });

  it('randomizeNames is deterministic for a seed and changes identifiers', () => {
    const a = randomizeNames(all[0], new Rng(5));
    const b = randomizeNames(all[0], new Rng(5));
    assert.deepEqual(a, b);
    const names = new Set<string>();
    for (let s = 0; s < 30; s++) names.add(randomizeNames(all[0], new Rng(s)).fname);
    assert.ok(names.size >= 5);
  });

  it('compact source is about 15 to 30 tokens and the single-turn copy carries it in its prompt', () => {
    for (const t of all) {
      const n = compactSource(t.source).split(' ').length;
      assert.ok(n >= 15 && n <= 38, `${t.id}: ${n} tokens`);
      const s = singleTurn(t);
      assert.equal(s.issue, `${compactSource(t.source)}\n${t.issue}`);
      assert.equal(singleTurn(s), s);
      const r = randomizeNames(s, new Rng(1));
      assert.ok(
        r.issue.startsWith(`${compactSource(r.source)}\n`),
        'renaming keeps the source in the prompt',
      );
      assert.ok(r.issue.endsWith(`\n${randomizeNames(t, new Rng(1)).issue}`), 'and ends it with the issue');
    }
  });
});

describe('tokenizer', () => {
  it('has 100 to 150 tokens and round-trips every task text', () => {
    assert.ok(tok.size >= 100 && tok.size <= 150, `vocab ${tok.size}`);
    for (const t of all) {
      for (const text of [t.issue, compactSource(t.source), singleTurn(t).issue])
        assert.equal(tok.decode(tok.encode(text)), text);
    }
  });

  it('rejects an unknown token with a message that names it', () => {
    assert.throws(() => tok.encode('fix frobnicate : wrong result'), /unknown token 'frobnicate'/);
    assert.throws(() => tok.token(9999), /outside the vocabulary/);
  });

  it('is the same for the same tasks, and survives JSON', () => {
    assert.ok(buildTokenizer(makeTasks('all')).sameAs(tok));
    const back = JSON.parse(JSON.stringify(tok.toJSON()));
    assert.ok(
      tok.sameAs((tok.constructor as typeof import('../../../src/core/index.js').Tokenizer).fromJSON(back)),
    );
  });
});

describe('calls and the environment', () => {
  it('parses calls', () => {
    assert.deepEqual(parseCall('<call> read </call>'), { ok: true, tool: 'read' });
    assert.deepEqual(parseCall('<call> edit fix_init </call>'), { ok: true, tool: 'edit', op: 'fix_init' });
    assert.deepEqual(parseCall('<call> edit </call>'), { ok: false, error: 'malformed call' });
    assert.deepEqual(parseCall('<call> fix </call>'), { ok: false, error: 'unknown tool' });
    assert.deepEqual(parseCall('<call> edit ok </call>'), { ok: false, error: 'unknown op' });
    assert.deepEqual(parseCall('<call> read'), { ok: false, error: 'malformed call' });
    assert.deepEqual(parseCall('<call> <call> read </call>'), { ok: false, error: 'malformed call' });
  });

  it('answers every error path with its error observation and counts it in n_invalid', () => {
    const env = new EditBudgetEnv(10, makeReward(), 1);
    env.reset(all[0]);
    const expect: [string, string, number][] = [
      ['<call> edit </call>', 'error malformed call', 1],
      ['<call> fix </call>', 'error unknown tool', 2],
      ['<call> edit ok </call>', 'error unknown op', 3],
      ['<call> read read </call>', 'error malformed call', 4],
      ['<call> edit fix_init </call>', 'ok', 4],
      ['<call> edit fix_comparison </call>', 'error edit budget', 5],
    ];
    for (const [call, obs, nInvalid] of expect) {
      const r = env.step(call);
      assert.equal(r.obs, obs, call);
      assert.equal(env.nInvalid, nInvalid, call);
      assert.equal(r.done, false);
    }
    const end = env.step('<call> submit </call>');
    assert.equal(end.done, true);
    assert.equal(end.info?.n_invalid, 5);
    assert.equal(end.info?.n_turns, 7);
    assert.equal(end.info?.edits, 1);
    assert.equal(end.info?.stop, 'submitted');
  });

  it('test says FAIL before the right edit and PASS after it; read shows the current code', () => {
    const task = all.find((t) => t.kind === 'fix_operator') as Task;
    const env = makeEnv({ maxTurns: 6 });
    env.reset(task);
    assert.equal(env.step('<call> test </call>').obs, 'FAIL');
    assert.match(env.step('<call> read </call>').obs, /-=/);
    env.step('<call> edit fix_operator </call>');
    assert.equal(env.step('<call> test </call>').obs, 'PASS');
    assert.doesNotMatch(env.step('<call> read </call>').obs, /-=/);
  });

  it('ends unsubmitted at max_turns', () => {
    const env = makeEnv({ maxTurns: 2 });
    env.reset(all[0]);
    assert.equal(env.step('<call> read </call>').done, false);
    const r = env.step('<call> test </call>');
    assert.equal(r.done, true);
    assert.equal(r.info?.stop, 'max_turns');
    assert.equal(r.info?.submitted, false);
    assert.equal(r.reward, 0);
  });
});

describe('rewards', () => {
  const base = {
    hidden_pass: false,
    stop: 'submitted' as StopReason,
    n_invalid: 0,
    n_turns: 4,
    reads: 1,
    tests: 1,
    edits: 1,
    edit_op: null,
    task_id: 'x',
    single_turn: false,
  };
  const cases: [
    string,
    Parameters<typeof makeReward>[1],
    Partial<typeof base> & { submitted: boolean },
    number,
  ][] = [
    ['pass', {}, { submitted: true, hidden_pass: true }, 1],
    ['wrong submit, default 0', {}, { submitted: true }, 0],
    ['wrong submit -1', { wrongSubmit: -1 }, { submitted: true }, -1],
    [
      'unsubmitted is 0 even with wrongSubmit',
      { wrongSubmit: -1 },
      { submitted: false, stop: 'max_turns' },
      0,
    ],
    [
      "unsubmitted -1: 12.7's option (a), waiting is as bad as a wrong submission",
      { wrongSubmit: -1, unsubmitted: -1 },
      { submitted: false, stop: 'truncated' },
      -1,
    ],
    ['step penalty per call', { stepPenalty: 0.05 }, { submitted: true, hidden_pass: true }, 1 - 0.05 * 4],
    ['step penalty unsubmitted', { stepPenalty: 0.3 }, { submitted: false, n_turns: 6 }, -0.3 * 6],
    [
      'invalid penalty',
      { invalidPenalty: 0.1 },
      { submitted: true, hidden_pass: true, n_invalid: 2 },
      1 - 0.2,
    ],
    [
      'all three',
      { stepPenalty: 0.05, wrongSubmit: -1, invalidPenalty: 0.5 },
      { submitted: true, n_invalid: 1 },
      -1 - 0.2 - 0.5,
    ],
  ];
  for (const [name, opts, info, want] of cases)
    it(name, async () => {
      const { rewardOf } = await import('../../../src/core/index.js');
      assert.ok(Math.abs(rewardOf(makeReward('hidden', opts), { ...base, ...info }) - want) < 1e-12);
    });

  it('rejects a reward option with a typo, naming it', async () => {
    const { validateReward } = await import('../../../src/core/index.js');
    assert.throws(
      () => validateReward({ kind: 'hidden', stepPenallty: 0.1 }),
      /reward\.stepPenallty: unknown key "stepPenallty" \(did you mean "stepPenalty"\?\)/,
    );
    assert.throws(
      () => validateReward({ kind: 'hidden', stepPenalty: 'a' }),
      /reward\.stepPenalty: expected a number in \[-10, 10\], got "a"/,
    );
    assert.throws(
      () => validateReward({ unsubmitted: null }),
      /reward\.unsubmitted: expected a number in \[-10, 10\], got null/,
    );
    // a run file written before `unsubmitted` existed reads as 0
    assert.equal(validateReward({ kind: 'hidden', wrongSubmit: -1 }).unsubmitted, 0);
  });

  it('the episode reward equals the reward of its info', () => {
    const rng = new Rng(2);
    const spec = makeReward('hidden', { stepPenalty: 0.05, wrongSubmit: -1, invalidPenalty: 0.2 });
    for (const t of all) {
      const traj = runScripted(uninformed, makeEnv({ reward: spec }), randomizeNames(t, rng), tok, rng);
      const i = traj.info;
      const verdict = i.submitted ? (i.hidden_pass ? 1 : -1) : 0;
      assert.ok(Math.abs(traj.reward - (verdict - 0.05 * i.n_turns - 0.2 * i.n_invalid)) < 1e-12);
    }
  });
});

describe('episodes and trajectories', () => {
  it('over many seeds and all tasks: shapes, mask == policy owner, at most 256 tokens', () => {
    for (let seed = 0; seed < 25; seed++) {
      const rng = new Rng(seed);
      for (const t of all) {
        for (const maxTurns of [6, 24]) {
          const traj = runScripted(uninformed, makeEnv({ maxTurns }), randomizeNames(t, rng), tok, rng);
          const T = traj.ids.length;
          assert.equal(traj.owner.length, T);
          assert.equal(traj.turn.length, T);
          assert.equal(traj.actionMask.length, T - 1);
          assert.equal(traj.logps.length, T - 1);
          assert.ok(T <= CONTEXT_LENGTH);
          traj.actionMask.forEach((m, i) => {
            assert.equal(m, traj.owner[i + 1] === OWNER.policy ? 1 : 0);
          });
          assert.ok(traj.info.n_turns <= maxTurns);
          // turns never decrease and every call is followed by its own observation
          for (let i = 1; i < T; i++) assert.ok(traj.turn[i] >= traj.turn[i - 1]);
        }
      }
    }
  });

  it('truncates exactly when the next call cannot fit', () => {
    // A policy that reads forever: each turn adds 3 call tokens and 2 + |source| observation tokens.
    const reader = { name: 'reader', next: () => '<call> read </call>' };
    const task = randomizeNames(all[1], new Rng(4));
    const prompt = tok.encode(task.issue).length;
    const obs = compactSource(task.source).split(' ').length + 2;
    for (let maxLen = 40; maxLen <= CONTEXT_LENGTH; maxLen += 7) {
      const traj = runScripted(reader, makeEnv({ maxTurns: 50 }), task, tok, new Rng(0), maxLen);
      // Simulate: after each call, the observation is kept only if it and a next call still fit.
      let len = prompt;
      let turns = 0;
      for (;;) {
        len += 3;
        turns++;
        if (len + obs + MAX_CALL_TOKENS > maxLen) break;
        len += obs;
      }
      assert.equal(traj.info.stop, 'truncated', `maxLen ${maxLen}`);
      assert.equal(traj.ids.length, len, `maxLen ${maxLen}`);
      assert.equal(traj.info.n_turns, turns);
      assert.ok(traj.ids.length <= maxLen);
    }
    // With room to spare the same policy stops at max_turns, never truncated.
    const traj = runScripted(reader, makeEnv({ maxTurns: 3 }), task, tok, new Rng(0));
    assert.equal(traj.info.stop, 'max_turns');
  });

  it('the oracle passes every train and held-out task', () => {
    const rng = new Rng(9);
    for (let s = 0; s < 5; s++)
      for (const t of all) {
        const traj = runScripted(oracle, makeEnv(), randomizeNames(t, rng), tok, rng);
        assert.equal(traj.info.hidden_pass, true, `${t.id}`);
        assert.equal(traj.reward, 1);
        assert.equal(traj.info.n_turns, 3);
      }
  });

  it('the blind guesser passes 0.15 to 0.25 of all tasks', () => {
    const op = commonestOp(makeTasks('train'));
    const rng = new Rng(1);
    let passed = 0;
    let n = 0;
    for (let s = 0; s < 4; s++)
      for (const t of all) {
        passed += runScripted(blindGuesser(op), makeEnv(), randomizeNames(t, rng), tok, rng).info.hidden_pass
          ? 1
          : 0;
        n++;
      }
    const rate = passed / n;
    assert.ok(rate >= 0.15 && rate <= 0.25, `blind pass rate ${rate}`);
  });

  it('the uninformed habits: pass 0.10 to 0.20, reading neutral, and reading rarely fits in 3 turns', () => {
    const train = makeTasks('train');
    const habits = (maxTurns: number) => {
      const rng = new Rng(5);
      const n = { read: 0, readPass: 0, noRead: 0, noReadPass: 0, readFits: 0, turns: 0 };
      for (let i = 0; i < 4000; i++) {
        const { info } = runScripted(
          uninformed,
          makeEnv({ maxTurns }),
          randomizeNames(train[i % 20], rng),
          tok,
          rng,
        );
        n.turns += info.n_turns / 4000;
        if (info.reads > 0) {
          n.read++;
          n.readPass += info.hidden_pass ? 1 : 0;
          n.readFits += info.submitted && info.edits > 0 ? 1 : 0;
        } else {
          n.noRead++;
          n.noReadPass += info.hidden_pass ? 1 : 0;
        }
      }
      return n;
    };
    const six = habits(6);
    const pass = (six.readPass + six.noReadPass) / 4000;
    assert.ok(pass >= 0.1 && pass <= 0.2, `pass ${pass}`);
    assert.ok(six.turns >= 3 && six.turns <= 4, `turns ${six.turns}`);
    assert.ok(six.read / 4000 > 0.25, 'it reads sometimes');
    const gap = six.readPass / six.read - six.noReadPass / six.noRead;
    assert.ok(Math.abs(gap) < 0.03, `reading does not change the outcome (${gap})`);
    assert.ok(six.readFits / six.read > 0.7, 'at max_turns 6 most reading episodes edit and submit');
    const three = habits(3);
    assert.ok(three.readFits / three.read < 0.2, `at max_turns 3 few do (${three.readFits / three.read})`);
  });

  it('the base corpus mixes in the single-turn format at the share asked', () => {
    const corpus = scriptedCorpus(makeTasks('train'), tok, 800, 3, 6, 0.125);
    const single = corpus.filter((t) => t.info.single_turn);
    assert.ok(single.length > 70 && single.length < 130, `${single.length} single-turn episodes of 800`);
    for (const t of single) assert.equal(t.info.n_turns, 1);
    assert.equal(scriptedCorpus(makeTasks('train'), tok, 200, 3).filter((t) => t.info.single_turn).length, 0);
  });

  it('the malformed policy makes every invalid call and still ends', () => {
    const traj = runScripted(malformed, makeEnv({ maxTurns: 12 }), all[4], tok, new Rng(0));
    assert.equal(traj.info.n_invalid, 6);
    assert.equal(traj.info.submitted, true);
    assert.equal(traj.info.hidden_pass, true, 'the one accepted edit (fix_init) fixes train-04');
    const text = tok.decode(traj.ids);
    for (const e of ['error malformed call', 'error unknown tool', 'error unknown op', 'error edit budget'])
      assert.ok(text.includes(e), e);
  });

  it('records the sampling log-probs on policy tokens only', () => {
    const ep = new Episode(makeEnv(), all[0], tok);
    ep.act(tok.encode('<call> read </call>'), [-0.1, -0.2, -0.3]);
    ep.act(tok.encode('<call> submit </call>'), [-0.4, -0.5, -0.6]);
    const traj = makeTrajectory(ep);
    const onMask = traj.logps.filter((_, i) => traj.actionMask[i] === 1);
    assert.deepEqual(onMask, [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]);
    assert.ok(traj.logps.every((lp, i) => traj.actionMask[i] === 1 || lp === 0));
    assert.throws(() => ep.act(tok.encode('<call> read </call>')), /finished episode/);
  });
});
