import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ContextPolicy,
  contextView,
  describeContextPolicy,
  MAX_VIEW_TOKENS,
  parseContextPolicy,
} from '../../../src/core/context/policy.js';
import {
  CONTEXT_LENGTH,
  Episode,
  inferOp,
  makeEnv,
  makeTasks,
  malformed,
  OWNER,
  Rng,
  randomizeNames,
  runScripted,
  type ScriptedPolicy,
  type Trajectory,
  uninformed,
} from '../../../src/core/index.js';
import { tok } from '../../fixtures.js';

const tasks = makeTasks('train');
const call = (...inner: string[]) => `<call> ${inner.join(' ')} </call>`;

/** Uninformed episodes with long budgets (some are long enough to end truncated). */
function episodes(seed: number, n: number, maxTurns = 12): Trajectory[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) =>
    runScripted(
      i % 9 === 4 ? malformed : uninformed,
      makeEnv({ maxTurns, showBudget: i % 2 === 1 }),
      randomizeNames(tasks[i % tasks.length], rng),
      tok,
      rng,
    ),
  );
}
const nCalls = (t: Trajectory) => t.info.n_turns;
const firstOfCall = (t: Trajectory, k: number) => {
  const i = t.ids.findIndex((_, j) => t.owner[j] === OWNER.policy && t.turn[j] === k);
  return i < 0 ? t.ids.length : i;
};

describe('parseContextPolicy', () => {
  it('accepts the four kinds', () => {
    const ok: ContextPolicy[] = [
      { kind: 'full' },
      { kind: 'keepObs', k: 0 },
      { kind: 'keepObs', k: 3 },
      { kind: 'truncateOldest', maxTokens: 64 },
      { kind: 'summarize' },
    ];
    for (const p of ok) assert.deepEqual(parseContextPolicy(JSON.parse(JSON.stringify(p))), p);
  });

  it('rejects bad values with a message that names the field', () => {
    const bad: [unknown, RegExp][] = [
      [null, /^Error: contextPolicy: expected an object like \{"kind": "keepObs", "k": 1\}, got null/],
      [[], /contextPolicy\.kind: expected one of/],
      ['full', /contextPolicy: expected an object/],
      [{}, /contextPolicy\.kind: expected one of "full", "keepObs".*got nothing/],
      [{ kind: 'keep_obs', k: 1 }, /contextPolicy\.kind: expected one of .*got "keep_obs"/],
      [{ kind: 'keepObs' }, /contextPolicy\.k: is required/],
      [{ kind: 'keepObs', k: -1 }, /contextPolicy\.k: expected an integer from 0 to 64, got -1/],
      [{ kind: 'keepObs', k: 1.5 }, /contextPolicy\.k: expected an integer from 0 to 64, got 1\.5/],
      [{ kind: 'keepObs', k: '1' }, /contextPolicy\.k: expected an integer from 0 to 64, got "1"/],
      [{ kind: 'keepObs', k: 65 }, /contextPolicy\.k: expected an integer from 0 to 64, got 65/],
      [
        { kind: 'keepObs', k: 1, maxTokens: 3 },
        /contextPolicy\.maxTokens: unknown key "maxTokens"; known keys: kind, k/,
      ],
      [{ kind: 'full', k: 1 }, /contextPolicy\.k: unknown key "k"; known keys: kind$/],
      [{ kind: 'truncateOldest', maxTokens: 0 }, /maxTokens: expected an integer from 1 to 250, got 0/],
      [{ kind: 'truncateOldest', maxTokens: 251 }, /maxTokens: expected an integer from 1 to 250, got 251/],
    ];
    for (const [x, re] of bad) assert.throws(() => parseContextPolicy(x), re, JSON.stringify(x));
    assert.throws(() => parseContextPolicy({ kind: 'nope' }, 'eval.context'), /^Error: eval\.context\.kind/);
  });

  it('describes each policy in one distinct line', () => {
    const lines = [
      { kind: 'full' },
      { kind: 'keepObs', k: 0 },
      { kind: 'keepObs', k: 1 },
      { kind: 'keepObs', k: 2 },
      { kind: 'truncateOldest', maxTokens: 100 },
      { kind: 'summarize' },
    ].map((p) => describeContextPolicy(p as ContextPolicy));
    assert.equal(new Set(lines).size, lines.length);
    for (const l of lines) assert.ok(l.length > 0 && !l.includes('\n'), l);
    assert.match(lines[2], /keep_obs=1/);
    assert.match(lines[4], /100/);
  });
});

describe('contextView', () => {
  const trajs = episodes(1, 200);

  it('full returns the episode unchanged (and each call its prefix)', () => {
    for (const t of trajs.slice(0, 50)) {
      const v = contextView(t, nCalls(t), { kind: 'full' }, tok);
      assert.deepEqual(v.ids, t.ids);
      assert.deepEqual(v.owner, t.owner);
      assert.deepEqual(v.turn, t.turn);
      assert.ok(v.kept.every(Boolean));
      assert.deepEqual(v.placeholders, []);
      for (let k = 0; k < nCalls(t); k++) {
        const p = firstOfCall(t, k);
        const vk = contextView(t, k, { kind: 'full' }, tok);
        assert.deepEqual(vk.ids, t.ids.slice(0, p));
        assert.equal(vk.prefixLength, p);
        assert.deepEqual(
          vk.kept,
          t.ids.map((_, i) => i < p),
        );
      }
    }
    // Call 0 sees the prompt only.
    const v0 = contextView(trajs[0], 0, { kind: 'full' }, tok);
    assert.ok(v0.owner.every((o) => o === OWNER.prompt));
  });

  it("keepObs(k) is the chapter's context_view: never a tool token older than allowed, templates stay", () => {
    let dropped = 0;
    for (const keep of [0, 1, 2]) {
      for (const t of trajs) {
        for (let k = 0; k <= nCalls(t); k++) {
          const v = contextView(t, k, { kind: 'keepObs', k: keep }, tok);
          // The chapter's rule, on the prefix before call k.
          const p = firstOfCall(t, k);
          const expected = t.ids.filter(
            (_, i) => i < p && !(t.owner[i] === OWNER.tool && t.turn[i] < k - keep),
          );
          assert.deepEqual(v.ids, expected);
          v.owner.forEach((o, i) => {
            if (o === OWNER.tool)
              assert.ok(v.turn[i] >= k - keep, `call ${k} sees tool output of turn ${v.turn[i]}`);
          });
          // Every template token of the prefix stays (the placeholders).
          const templates = t.owner.slice(0, p).filter((o) => o === OWNER.template).length;
          assert.equal(v.owner.filter((o) => o === OWNER.template).length, templates);
          for (const ph of v.placeholders) {
            assert.equal(v.ids[ph.at], tok.obsStartId);
            assert.equal(v.ids[ph.at + 1], tok.obsEndId, 'an empty <obs> </obs> placeholder');
            assert.ok(ph.turn < k - keep && ph.dropped > 0);
          }
          dropped += v.kept.filter((x, i) => !x && i < p).length;
          assert.ok(v.ids.length <= (k < nCalls(t) ? MAX_VIEW_TOKENS : CONTEXT_LENGTH));
        }
      }
    }
    assert.ok(dropped > 0, 'the test exercised some dropping');
  });

  it('keepObs(1) under an Episode in progress shows only the latest observation', () => {
    const ep = new Episode(makeEnv(), tasks[0], tok);
    for (const c of [call('read'), call('test'), call('test')]) ep.act(tok.encode(c));
    const v = contextView(ep, ep.nCalls, { kind: 'keepObs', k: 1 }, tok);
    const tool = v.ids.filter((_, i) => v.owner[i] === OWNER.tool).map((id) => tok.token(id));
    assert.deepEqual(tool, ['FAIL']);
    assert.equal(v.placeholders.length, 2);
    assert.equal(
      tok.decode(v.ids.slice(v.placeholders[0].at - 3)),
      '<call> read </call> <obs> </obs> <call> test </call> <obs> </obs> <call> test </call> <obs> FAIL </obs>',
    );
  });

  it('summarize replaces a read source by the operation inferOp reads off it, and keeps the rest', () => {
    const rng = new Rng(2);
    for (const [i, task] of tasks.entries()) {
      const showBudget = i % 2 === 0;
      // read, test, edit with the right op, read again (the fixed source), submit
      const script: ScriptedPolicy = {
        name: 'script',
        next: (ep) =>
          [call('read'), call('test'), call('edit', task.kind), call('read'), call('submit')][ep.nCalls],
      };
      const t = runScripted(script, makeEnv({ showBudget }), randomizeNames(task, rng), tok, rng);
      assert.equal(t.info.stop, 'submitted');
      const v = contextView(t, 4, { kind: 'summarize' }, tok);
      const obs = (turn: number) =>
        tok.decode(v.ids.filter((_, j) => v.owner[j] === OWNER.tool && v.turn[j] === turn)).split(' ');
      const budget = (left: number) => (showBudget ? ['turns', 'left', String(left)] : []);
      assert.deepEqual(obs(0), [task.kind, ...budget(5)]);
      assert.equal(inferOp(task.source), task.kind);
      assert.deepEqual(obs(1), ['FAIL', ...budget(4)]);
      assert.deepEqual(obs(2), ['ok', ...budget(3)]);
      assert.deepEqual(obs(3), ['ok', ...budget(2)], 'a fixed source shows no bug: summarised as ok');
      assert.deepEqual(
        v.placeholders.map((p) => [p.turn, p.summary]),
        [
          [0, task.kind],
          [3, 'ok'],
        ],
      );
      // The summary token stands right after its <obs>, and is owned by the tool.
      assert.equal(v.ids[v.placeholders[0].at + 1], tok.id(task.kind));
      // Nothing but the read sources changed.
      const full = contextView(t, 4, { kind: 'full' }, tok);
      assert.equal(
        full.ids.length - v.ids.length,
        v.placeholders.reduce((s, p) => s + p.dropped - 1, 0),
      );
    }
  });

  it('summarize leaves an invalid read alone', () => {
    const ep = new Episode(makeEnv(), tasks[1], tok);
    ep.act(tok.encode(call('read', 'read')));
    const v = contextView(ep, 1, { kind: 'summarize' }, tok);
    assert.deepEqual(contextView(ep, 1, { kind: 'full' }, tok).ids, v.ids);
    assert.deepEqual(v.placeholders, []);
  });

  it('truncateOldest drops the fewest oldest whole turns that make the view fit, never the prompt', () => {
    const rng = new Rng(4);
    let cut = 0;
    for (const t of trajs) {
      for (let k = 0; k <= nCalls(t); k++) {
        const maxTokens = 8 + rng.int(80);
        const v = contextView(t, k, { kind: 'truncateOldest', maxTokens }, tok);
        const p = firstOfCall(t, k);
        const prompt = t.owner.filter((o) => o === OWNER.prompt).length;
        // the prompt is always there, first
        assert.ok(v.owner.slice(0, prompt).every((o) => o === OWNER.prompt));
        // the dropped turns are 0..m-1, dropped whole
        const m = v.droppedTurns.length;
        assert.deepEqual(
          v.droppedTurns,
          Array.from({ length: m }, (_, j) => j),
        );
        const expected = t.ids.filter((_, i) => i < p && (t.owner[i] === OWNER.prompt || t.turn[i] >= m));
        assert.deepEqual(v.ids, expected);
        // it fits (or only the prompt is left) ...
        assert.ok(v.ids.length <= maxTokens || v.ids.length === prompt);
        // ... and dropping one turn fewer would not fit
        if (m > 0) {
          const fewer = t.ids.filter((_, i) => i < p && (t.owner[i] === OWNER.prompt || t.turn[i] >= m - 1));
          assert.ok(fewer.length > maxTokens);
          cut++;
        }
        assert.ok(v.ids.length <= (k < nCalls(t) ? MAX_VIEW_TOKENS : CONTEXT_LENGTH));
      }
    }
    assert.ok(cut > 100);
  });

  it('never exceeds 250 tokens before a call (room for it in 256), on long episodes, for every policy', () => {
    // A chatty policy that reads and tests until the context runs out, with some invalid calls.
    const chatty: ScriptedPolicy = {
      name: 'chatty',
      next: (_, r) =>
        r.choice([call('read'), call('read'), call('test'), call('edit'), call('edit', 'fix_init')]),
    };
    const rng = new Rng(7);
    const long = [
      ...episodes(7, 60, 24),
      ...Array.from({ length: 60 }, (_, i) =>
        runScripted(
          chatty,
          makeEnv({ maxTurns: 24, showBudget: i % 2 === 0 }),
          tasks[i % tasks.length],
          tok,
          rng,
        ),
      ),
    ];
    assert.ok(
      long.some((t) => t.info.stop === 'truncated'),
      'some episodes hit the context',
    );
    const policies: ContextPolicy[] = [
      { kind: 'full' },
      { kind: 'keepObs', k: 1 },
      { kind: 'summarize' },
      { kind: 'truncateOldest', maxTokens: 40 },
    ];
    for (const t of long)
      for (const p of policies)
        for (let k = 0; k <= nCalls(t); k++) {
          const n = contextView(t, k, p, tok).ids.length;
          assert.ok(
            n <= (k < nCalls(t) ? MAX_VIEW_TOKENS : CONTEXT_LENGTH),
            `${p.kind} call ${k}: ${n} tokens`,
          );
          if (p.kind === 'truncateOldest') assert.ok(n <= 40);
        }
    // A history longer than any Episode keeps is refused rather than shown.
    const t = long[0];
    const big = {
      ids: [...Array(300).fill(tok.id('fix')), ...t.ids],
      owner: [...Array(300).fill(OWNER.prompt), ...t.owner],
      turn: [...Array(300).fill(0), ...t.turn],
    };
    assert.throws(() => contextView(big, 0, { kind: 'full' }, tok), /leave room for a call/);
  });

  it('refuses a call index outside the episode and mismatched arrays', () => {
    const t = trajs[0];
    assert.throws(() => contextView(t, nCalls(t) + 1, { kind: 'full' }, tok), /outside 0\.\./);
    assert.throws(() => contextView(t, -1, { kind: 'full' }, tok), /outside 0\.\./);
    assert.throws(
      () => contextView({ ids: [1, 2], owner: [1], turn: [0, 0] }, 0, { kind: 'full' }, tok),
      /one entry per token/,
    );
  });
});
