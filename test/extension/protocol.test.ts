import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  buildTokenizer,
  makeEnv,
  makeTasks,
  oracle,
  Rng,
  runScripted,
  toTrajectoryJSON,
} from '../../src/core/index.js';
import { parseFromWebview, parseInspectorState, parseToWebview } from '../../src/core/inspector-protocol.js';
import { checkJob, parseHostMessage, parseTrainerMessage } from '../../src/core/protocol.js';

const tok = buildTokenizer(makeTasks('all'));
const episode = toTrajectoryJSON(runScripted(oracle, makeEnv(), makeTasks('train')[0], tok, new Rng(1)), tok);
const sample = {
  kind: 'sampleScripted',
  runsDir: '/tmp/x',
  policy: 'oracle',
  split: 'train',
  episodes: 8,
  batch: 4,
  seed: 1,
  maxTurns: 6,
};

describe('trainer protocol', () => {
  test('well-formed host messages pass', () => {
    assert.ok(parseHostMessage({ type: 'start', id: 'a', job: sample }).ok);
    assert.ok(
      parseHostMessage({ type: 'start', id: 'b', job: { kind: 'maskCheck', episode, bug: 'tool', seed: 0 } })
        .ok,
    );
    assert.ok(parseHostMessage({ type: 'cancel', id: 'a' }).ok);
    assert.ok(parseHostMessage({ type: 'shutdown' }).ok);
  });

  test('malformed host messages are rejected with the field named', () => {
    const bad = (m: unknown, re: RegExp) => {
      const r = parseHostMessage(m);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.error, re);
    };
    bad(null, /object/);
    bad({ type: 'explode' }, /unknown message type/);
    bad({ type: 'start', id: 1, job: sample }, /start\.id/);
    bad({ type: 'start', id: 'a', job: { ...sample, policy: 'genius' } }, /job\.policy/);
    bad({ type: 'start', id: 'a', job: { ...sample, episodes: 0 } }, /job\.episodes/);
    bad({ type: 'start', id: 'a', job: { kind: 'maskCheck', episode, bug: 'nope', seed: 0 } }, /job\.bug/);
    bad(
      { type: 'start', id: 'a', job: { kind: 'maskCheck', episode: { v: 1 }, bug: 'tool', seed: 0 } },
      /trajectory/,
    );
    bad({ type: 'start', id: 'a', job: { kind: 'fly' } }, /job\.kind/);
    assert.throws(() => checkJob({ ...sample, name: '../escape' }), /job\.name/);
  });

  test('trainer messages are checked', () => {
    assert.ok(parseTrainerMessage({ type: 'ready', backend: 'cpu', pid: 3 }).ok);
    assert.ok(parseTrainerMessage({ type: 'progress', id: 'a', step: 1, total: 2, message: 'x' }).ok);
    assert.ok(
      parseTrainerMessage({
        type: 'done',
        id: 'a',
        result: { runDir: '/r', steps: 1, episodes: 2, complete: true },
      }).ok,
    );
    assert.equal(
      parseTrainerMessage({ type: 'progress', id: 'a', step: -1, total: 2, message: 'x' }).ok,
      false,
    );
    assert.equal(parseTrainerMessage({ type: 'done', id: 'a', result: { bug: 'tool' } }).ok, false);
    assert.equal(parseTrainerMessage({ type: 'failed', id: 'a', message: 'm' }).ok, false);
    assert.equal(parseTrainerMessage('ready').ok, false);
  });
});

describe('inspector protocol', () => {
  test('both directions are checked', () => {
    assert.ok(parseToWebview({ type: 'show', episode, title: 't' }).ok);
    assert.equal(parseToWebview({ type: 'show', episode: { ...episode, owner: [9] }, title: 't' }).ok, false);
    assert.equal(parseToWebview({ type: 'maskResult', requestId: 1, result: {}, backend: 'cpu' }).ok, false);
    assert.equal(parseToWebview({ type: 'eval', code: 'alert(1)' }).ok, false);
    assert.ok(parseFromWebview({ type: 'ready' }).ok);
    assert.ok(parseFromWebview({ type: 'maskCheck', requestId: 2, bug: 'shift' }).ok);
    assert.equal(parseFromWebview({ type: 'maskCheck', requestId: 2, bug: 'rm -rf' }).ok, false);
    assert.equal(parseFromWebview({ type: 'maskCheck', requestId: -1, bug: 'tool' }).ok, false);
    assert.equal(parseFromWebview({ type: 'openFile', path: '/etc/passwd' }).ok, false);
  });

  test('saved state is restored only when it is whole', () => {
    assert.ok(parseInspectorState({ episode, title: 't', bug: 'zero' }));
    assert.equal(parseInspectorState({ episode, title: 't', bug: 'zzz' }), null);
    assert.equal(parseInspectorState({ episode: { v: 2 }, title: 't', bug: 'zero' }), null);
    assert.equal(parseInspectorState(undefined), null);
  });
});
