import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { OWNER, type Trajectory } from '../../../src/core/index.js';
import { injectMaskBug, lastCallStart, MASK_BUGS, maskCheck } from '../../../src/core/rl/mask-check.js';
import { initBackend } from '../../../src/core/tf/backend.js';
import { scriptedEpisodes, tok } from '../../fixtures.js';

const episodes = scriptedEpisodes(8);
const positionsWhere = (t: Trajectory, pred: (i: number) => boolean) =>
  Array.from({ length: t.ids.length - 1 }, (_, i) => i).filter(pred);

before(async () => {
  await initBackend('cpu');
});

describe('mask check', () => {
  test('the correct mask: gradient exactly on policy positions, zero flags', () => {
    for (const t of episodes) {
      const r = maskCheck(t, { vocabSize: tok.size, padId: tok.padId });
      assert.equal(r.totalFlags, 0);
      assert.deepEqual(r.hasGradient, t.actionMask);
      for (const row of r.byOwner) {
        if (row.owner === 'policy') assert.equal(row.withGradient, row.positions);
        else assert.equal(row.withGradient, 0, `${row.owner} has no gradient`);
      }
      assert.ok(r.byOwner[OWNER.policy].positions > 0);
      assert.ok(Number.isFinite(r.loss));
    }
  });

  /** Under `bug`, exactly the positions that predict an `owner` token are flagged. */
  function flagsExactly(bug: 'tool' | 'template', owner: number, opts: { vocabSize?: number } = {}): void {
    for (const t of episodes) {
      const r = maskCheck(t, { bug, ...opts });
      const owned = positionsWhere(t, (i) => t.owner[i + 1] === owner);
      assert.ok(owned.length > 0);
      assert.deepEqual(
        positionsWhere(t, (i) => r.flags[i] === 1),
        owned,
      );
      assert.equal(r.byOwner[owner].flags, owned.length);
      assert.equal(r.totalFlags, owned.length);
    }
  }

  test('train on tool tokens: every tool position flagged, nothing else', () => {
    flagsExactly('tool', OWNER.tool, { vocabSize: tok.size });
  });

  test('train on template tokens: every <obs> and </obs> position flagged', () => {
    flagsExactly('template', OWNER.template);
  });

  test('off-by-one shift: the first token of each call loses gradient, the token after each call gains it', () => {
    for (const t of episodes) {
      const r = maskCheck(t, { bug: 'shift' });
      const starts = positionsWhere(t, (i) => t.owner[i + 1] === OWNER.policy && t.owner[i] !== OWNER.policy);
      const after = positionsWhere(t, (i) => t.owner[i] === OWNER.policy && t.owner[i + 1] !== OWNER.policy);
      assert.deepEqual(
        positionsWhere(t, (i) => r.flags[i] === 1),
        [...starts, ...after].sort((a, b) => a - b),
      );
      const calls = t.info.n_turns;
      // Every call but the last is followed by its observation.
      assert.equal(r.totalFlags, calls + calls - 1);
      for (const i of starts) assert.equal(r.hasGradient[i], 0);
      for (const i of after) assert.equal(t.owner[i + 1], OWNER.template, 'the token after a call is <obs>');
    }
  });

  test('all-zero mask: no gradient anywhere, every policy position flagged', () => {
    for (const t of episodes) {
      const r = maskCheck(t, { bug: 'zero' });
      assert.ok(r.hasGradient.every((g) => g === 0));
      const policy = t.actionMask.reduce((a, b) => a + b, 0);
      assert.equal(r.totalFlags, policy);
      assert.equal(r.byOwner[OWNER.policy].flags, policy);
    }
  });

  test('truncated, mask not updated: the cut last call gets gradient on padding, and only it is flagged', () => {
    for (const t of episodes) {
      const c = lastCallStart(t);
      const lastCall = positionsWhere(t, (i) => i + 1 >= c && t.owner[i + 1] === OWNER.policy);
      assert.ok(lastCall.length >= 3);
      const inj = injectMaskBug(t, 'truncated', tok.padId);
      assert.ok(inj.ids.slice(c).every((id) => id === tok.padId));
      const r = maskCheck(t, { bug: 'truncated', vocabSize: tok.size, padId: tok.padId });
      assert.deepEqual(
        positionsWhere(t, (i) => r.flags[i] === 1),
        lastCall,
      );
      for (const i of lastCall) assert.equal(r.hasGradient[i], 1);
      assert.equal(r.byOwner[OWNER.policy].flags, lastCall.length);
    }
  });

  test('the logits source is a parameter, and the result does not depend on its values', () => {
    const t = episodes[0];
    let called = 0;
    const r = maskCheck(t, {
      bug: 'tool',
      logits: (inputs, V) => {
        called++;
        assert.equal(inputs.length, t.ids.length - 1);
        return tf.zeros([1, inputs.length, V]) as tf.Tensor3D;
      },
    });
    assert.equal(called, 1);
    assert.deepEqual(r.flags, maskCheck(t, { bug: 'tool', seed: 7 }).flags);
  });

  test('every bug has a name and a label', () => {
    assert.equal(MASK_BUGS.length, 6);
  });
});
