import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { EarlyStopEnv } from '../../../src/core/gym/variants.js';
import {
  collate,
  makeEnv,
  makeReward,
  makeTasks,
  malformed,
  OWNER,
  oracle,
  Rng,
  randomizeNames,
  rewardOf,
  runScripted,
  type Trajectory,
  uninformed,
} from '../../../src/core/index.js';
import {
  bootstrappedTruncationReturns,
  callSpans,
  callTable,
  explainedVariance,
  gaeAdvantages,
  groupAdvantages,
  maskedMeanRows,
  maskedTruncationAdvantages,
  maskedWhiten,
  outcomeRewards,
  perCallRewards,
  perCallRewardsOf,
  returnsToGo,
  turnAdvantages,
  turnGae,
} from '../../../src/core/rl/advantages.js';
import { valueLoss } from '../../../src/core/rl/value-loss.js';
import { tok } from '../../fixtures.js';

const tasks = makeTasks('train');

const close = (a: number, b: number, tol = 1e-9, what = '') =>
  assert.ok(Math.abs(a - b) <= tol, `${what} expected ${b}, got ${a} (|diff| ${Math.abs(a - b)})`);
const closeRows = (a: number[][], b: number[][], tol = 1e-9) => {
  assert.equal(a.length, b.length);
  a.forEach((row, r) => {
    assert.equal(row.length, b[r].length, `row ${r} length`);
    row.forEach((x, i) => {
      close(x, b[r][i], tol, `[${r}][${i}]`);
    });
  });
};

/**
 * A random batch over predicted positions: each row is a prompt, then K calls (1 to 6 policy
 * positions each) separated by observations (2 to 8 positions), then padding (turn -1).
 * Values and rewards are random everywhere, including off the mask (garbage that must be ignored).
 */
function randomBatch(rng: Rng, B: number) {
  const rows = Array.from({ length: B }, () => {
    const mask: number[] = [];
    const turn: number[] = [];
    const add = (n: number, m: number, k: number) => {
      for (let i = 0; i < n; i++) {
        mask.push(m);
        turn.push(k);
      }
    };
    add(1 + rng.int(5), 0, 0); // prompt
    const K = 1 + rng.int(5);
    for (let k = 0; k < K; k++) {
      add(1 + rng.int(6), 1, k); // call k
      if (k + 1 < K) add(2 + rng.int(7), 0, k); // its observation
    }
    return { mask, turn, K };
  });
  const T = Math.max(...rows.map((r) => r.mask.length)) + 2;
  const mask = rows.map((r) => [...r.mask, ...Array(T - r.mask.length).fill(0)]);
  const turnIds = rows.map((r) => [...r.turn, ...Array(T - r.turn.length).fill(-1)]);
  const values = mask.map((row) => row.map(() => rng.float() * 2 - 1));
  const rewards = mask.map((row) => row.map(() => (rng.float() < 0.5 ? rng.float() * 2 - 1 : 0)));
  return { mask, turnIds, values, rewards, K: rows.map((r) => r.K) };
}

/** The policy positions of call k of row b, computed from the turn ids (for expectations). */
const callPositions = (mask: number[], turn: number[], k: number) =>
  mask.flatMap((m, i) => (m === 1 && turn[i] === k ? [i] : []));

// A 3-call episode over 12 predicted positions: prompt (0), call 0 (1-2), observation (3-4),
// call 1 (5-6), observation (7-8), call 2 (9-10), padding (11). Values off the mask are garbage.
const M3 = [[0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0]];
const TURN3 = [[0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, -1]];
const V3 = [[7, 0.5, 0.6, 7, 7, 0.4, 0.3, 7, 7, 0.8, 0.9, 7]];
// Step cost 0.1 on each call's last token, verdict 1 on the episode's last: 0.9 = 1 - 0.1.
const R3 = [[0, 0, -0.1, 0, 0, 0, -0.1, 0, 0, 0, 0.9, 0]];

describe('token rewards', () => {
  it('outcomeRewards puts the verdict on the last policy token only', () => {
    const r = outcomeRewards([2, -1], [M3[0], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]);
    assert.deepEqual(r[0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]);
    assert.deepEqual(r[1], [0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert.throws(() => outcomeRewards([1], M3.concat(M3)), /verdicts/);
  });

  it('callSpans finds maximal runs of 1s', () => {
    assert.deepEqual(callSpans(M3[0]), [
      [1, 2],
      [5, 6],
      [9, 10],
    ]);
    assert.deepEqual(callSpans([1, 1, 0, 1]), [
      [0, 1],
      [3, 3],
    ]);
    assert.deepEqual(callSpans([0, 0]), []);
  });

  function sampleEpisodes(seed: number, n: number, env: () => ReturnType<typeof makeEnv>, maxLen?: number) {
    const rng = new Rng(seed);
    return Array.from({ length: n }, (_, i) =>
      runScripted(
        i % 7 === 3 ? malformed : uninformed,
        env(),
        randomizeNames(tasks[i % tasks.length], rng),
        tok,
        rng,
        maxLen,
      ),
    );
  }

  for (const stepPenalty of [0, 0.05, 0.3]) {
    it(`perCallRewards sums to the episode's reward on uninformed episodes (stepPenalty ${stepPenalty})`, () => {
      const spec = makeReward('hidden', { stepPenalty });
      const rng = new Rng(11);
      const trajs = Array.from({ length: 80 }, (_, i) =>
        runScripted(
          uninformed,
          makeEnv({ reward: spec }),
          randomizeNames(tasks[i % tasks.length], rng),
          tok,
          rng,
        ),
      );
      const batch = collate(trajs, tok.padId);
      const r = perCallRewards(trajs, batch.actionMask, stepPenalty);
      trajs.forEach((t, b) => {
        const sum = r[b].reduce((s, x) => s + x, 0);
        close(sum, rewardOf(spec, t.info), 1e-12, `episode ${b}`);
        close(sum, t.reward, 1e-12, `episode ${b} (the env's own reward)`);
        // Placement: -c on each call's last token, and the verdict on the episode's last.
        const spans = callSpans(batch.actionMask[b]);
        assert.equal(spans.length, t.info.n_turns);
        const verdict = t.info.submitted && t.info.hidden_pass ? 1 : 0;
        spans.forEach(([, end], k) => {
          close(r[b][end], -stepPenalty + (k === spans.length - 1 ? verdict : 0), 1e-12);
        });
        const ends = new Set(spans.map(([, e]) => e));
        r[b].forEach((x, i) => {
          if (!ends.has(i)) assert.equal(x, 0);
        });
      });
      assert.ok(
        trajs.some((t) => t.info.hidden_pass),
        'some episodes pass',
      );
    });
  }

  it('perCallRewards with wrongSubmit and invalidPenalty matches rewardOf, truncated and early-stopped episodes included', () => {
    const spec = makeReward('hidden', { stepPenalty: 0.05, wrongSubmit: -1, invalidPenalty: 0.2 });
    const opts = { wrongSubmit: -1, invalidPenalty: 0.2, tok };
    const envs = [
      () => makeEnv({ reward: spec }),
      () => makeEnv({ reward: spec, maxTurns: 12 }),
      () => new EarlyStopEnv(6, spec, 1, 2),
    ];
    const stops = new Set<string>();
    let lastInvalid = 0;
    for (const [e, env] of envs.entries()) {
      const trajs = sampleEpisodes(20 + e, 120, env, e === 1 ? 60 : undefined);
      const batch = collate(trajs, tok.padId);
      const r = perCallRewards(trajs, batch.actionMask, 0.05, opts);
      trajs.forEach((t, b) => {
        stops.add(t.info.stop);
        close(
          r[b].reduce((s, x) => s + x, 0),
          rewardOf(spec, t.info),
          1e-12,
          `env ${e} episode ${b} (${t.info.stop})`,
        );
        // the last call invalid with no observation to show it
        if (t.info.n_invalid > 0 && t.info.stop !== 'submitted') lastInvalid++;
      });
    }
    for (const s of ['submitted', 'max_turns', 'truncated', 'invalid'])
      assert.ok(stops.has(s), `saw stop ${s}`);
    // Every term of a spec, the unsubmitted verdict included, through perCallRewardsOf.
    const all = makeReward('hidden', {
      stepPenalty: 0.05,
      wrongSubmit: -1,
      invalidPenalty: 0.2,
      unsubmitted: -0.5,
    });
    const trajs = sampleEpisodes(23, 120, () => new EarlyStopEnv(6, all, 1, 2));
    const r = perCallRewardsOf(trajs, collate(trajs, tok.padId).actionMask, all, tok);
    assert.ok(trajs.some((t) => !t.info.submitted));
    for (const [b, t] of trajs.entries())
      close(
        r[b].reduce((s, x) => s + x, 0),
        rewardOf(all, t.info),
        1e-12,
        `episode ${b}`,
      );
    assert.ok(lastInvalid > 0);
    assert.throws(() => perCallRewards([], [], 0, { invalidPenalty: 1 }), /needs opts.tok/);
  });
});

describe('group advantages', () => {
  it('normalise within groups with the population std by default, sample on request', () => {
    const p = groupAdvantages([1, 0, 0, 1], 2); // population std of {1, 0}: 0.5
    [1, -1, -1, 1].forEach((x, i) => {
      close(p[i], x, 1e-5);
    });
    const a = groupAdvantages([1, 0, 0, 1], 2, { std: 'sample' });
    const s = Math.SQRT1_2; // sample std of {1, 0}: sqrt(0.5 / 1)
    [0.5 / s, -0.5 / s, -0.5 / s, 0.5 / s].forEach((x, i) => {
      close(a[i], x, 1e-5);
    });
    const g = groupAdvantages([3, 1, 2, 2], 4, { eps: 0 }); // mean 2, population std sqrt(2/4)
    [1, -1, 0, 0].forEach((x, i) => {
      close(g[i], x / Math.sqrt(0.5), 1e-12);
    });
    const gs = groupAdvantages([3, 1, 2, 2], 4, { eps: 0, std: 'sample' }); // sample std sqrt(2/3)
    [1, -1, 0, 0].forEach((x, i) => {
      close(gs[i], x / Math.sqrt(2 / 3), 1e-12);
    });
  });

  it('give 0 to a group whose rewards are all equal (and to a group of one)', () => {
    assert.deepEqual(groupAdvantages([0.3, 0.3, 0.3, 1, 0, 1], 3).slice(0, 3), [0, 0, 0]);
    assert.deepEqual(groupAdvantages([5], 1), [0]);
    assert.deepEqual(groupAdvantages([5], 1, { std: 'sample' }), [0]);
  });

  it('refuse a batch that does not split into groups', () => {
    assert.throws(() => groupAdvantages([1, 2, 3], 2), /groups of 2/);
    assert.throws(() => groupAdvantages([1, 2], 0), /groupSize/);
  });

  it('maskedTruncationAdvantages uses submitted episodes only, zero for the others', () => {
    const r = [1, 0, -1, 0, 0.5, 0, 0, 0, 1, 1, 0, 0];
    const sub = [true, true, false, false, true, false, false, false, false, false, false, false];
    const a = maskedTruncationAdvantages(r, sub, 4);
    // group 1: n = 2, mean 0.5, sample std sqrt((0.25 + 0.25) / 1)
    const s = Math.sqrt(0.5);
    close(a[0], 0.5 / (s + 1e-6), 1e-12);
    close(a[1], -0.5 / (s + 1e-6), 1e-12);
    assert.equal(a[2], 0);
    assert.equal(a[3], 0);
    // group 2: one submitted episode: mean = its reward, std 0 (n-1 clamped to 1) -> 0
    assert.deepEqual(a.slice(4, 8), [0, 0, 0, 0]);
    // group 3: none submitted -> all 0, whatever the rewards
    assert.deepEqual(a.slice(8), [0, 0, 0, 0]);
    // The unmasked baseline would differ: it counts the unsubmitted -1 and 0.
    assert.notEqual(groupAdvantages(r, 4)[0], a[0]);
  });

  it('bootstrappedTruncationReturns adds V(s_K) to truncated episodes only', () => {
    assert.deepEqual(
      bootstrappedTruncationReturns([1, -0.25, 0], [false, true, true], [0.5, 0.375, 0.75]),
      [1, 0.125, 0.75],
    );
    assert.throws(() => bootstrappedTruncationReturns([1], [true, false], [0]), /one entry per episode/);
  });
});

describe('returns and GAE on a hand-computed 3-call episode', () => {
  it('returnsToGo discounts once per policy token and skips observations', () => {
    const g = 0.9;
    // Policy positions 1, 2, 5, 6, 9, 10 with rewards 0, -0.1, 0, -0.1, 0, 0.9.
    const G10 = 0.9;
    const G9 = 0.81;
    const G6 = -0.1 + 0.729; // 0.629
    const G5 = 0.5661;
    const G2 = -0.1 + 0.50949; // 0.40949
    const G1 = 0.368541;
    closeRows(returnsToGo(R3, M3, g), [[0, G1, G2, 0, 0, G5, G6, 0, 0, G9, G10, 0]], 1e-12);
    closeRows(returnsToGo(R3, M3), [[0, 0.7, 0.7, 0, 0, 0.8, 0.8, 0, 0, 0.9, 0.9, 0]], 1e-12);
  });

  it('token-level GAE (gamma 0.9, lambda 0.5)', () => {
    // deltas, from the last policy position back (next value of a call's last token = the value
    // at the next call's first token; after the last token it is 0):
    // p10: 0.9 + 0 - 0.9 = 0;      p9: 0 + 0.9*0.9 - 0.8 = 0.01
    // p6: -0.1 + 0.9*0.8 - 0.3 = 0.32;  p5: 0 + 0.9*0.3 - 0.4 = -0.13
    // p2: -0.1 + 0.9*0.4 - 0.6 = -0.34; p1: 0 + 0.9*0.6 - 0.5 = 0.04
    // A = delta + 0.45 * A_next
    const A10 = 0;
    const A9 = 0.01;
    const A6 = 0.3245;
    const A5 = 0.016025;
    const A2 = -0.33278875;
    const A1 = -0.1097549375;
    const { advantages, returns } = gaeAdvantages(R3, V3, M3, 0.9, 0.5);
    closeRows(advantages, [[0, A1, A2, 0, 0, A5, A6, 0, 0, A9, A10, 0]], 1e-12);
    closeRows(
      returns,
      [[0, A1 + 0.5, A2 + 0.6, 0, 0, A5 + 0.4, A6 + 0.3, 0, 0, A9 + 0.8, A10 + 0.9, 0]],
      1e-12,
    );
  });

  it('turn-level GAE (gamma 0.9, lambda 0.5)', () => {
    // V(s_0) = 0.5, V(s_1) = 0.4, V(s_2) = 0.8 (values at each call's first policy position)
    // r_0 = -0.1, r_1 = -0.1, r_2 = 0.9
    // delta_2 = 0.9 - 0.8 = 0.1; delta_1 = -0.1 + 0.9*0.8 - 0.4 = 0.22; delta_0 = -0.1 + 0.9*0.4 - 0.5 = -0.24
    // A_2 = 0.1; A_1 = 0.22 + 0.45*0.1 = 0.265; A_0 = -0.24 + 0.45*0.265 = -0.12075
    const a = turnAdvantages(R3, V3, M3, TURN3, 0.9, 0.5);
    closeRows(a, [[0, -0.12075, -0.12075, 0, 0, 0.265, 0.265, 0, 0, 0.1, 0.1, 0]], 1e-12);
    const { rows } = turnGae(R3, V3, M3, TURN3, 0.9, 0.5);
    closeRows([rows[0].tdError], [[-0.24, 0.22, 0.1]], 1e-12);
    assert.deepEqual(rows[0].valueStart, [0.5, 0.4, 0.8]);
    assert.deepEqual(rows[0].valueNext, [0.4, 0.8, 0]);
  });

  it('turn-level GAE with gamma = lambda = 1 on the 3-call episode', () => {
    // A_k = (r_k + ... + r_2) - V(s_k): 0.7 - 0.5, 0.8 - 0.4, 0.9 - 0.8
    closeRows(
      turnAdvantages(R3, V3, M3, TURN3, 1, 1),
      [[0, 0.2, 0.2, 0, 0, 0.4, 0.4, 0, 0, 0.1, 0.1, 0]],
      1e-12,
    );
  });

  it('turnAdvantages refuses a policy position without a turn id', () => {
    assert.throws(
      () => turnAdvantages(R3, V3, M3, [[0, -1, 0, 0, 0, 1, 1, 1, 1, 2, 2, -1]], 1, 1),
      /no turn id/,
    );
  });
});

describe('estimators on random batches (seeded)', () => {
  it('exercise 1: with gamma = lambda = 1 the turn advantage of call k is sum_{j>=k} r_j - V(s_k)', () => {
    const rng = new Rng(1);
    for (let trial = 0; trial < 20; trial++) {
      const { mask, turnIds, values, rewards, K } = randomBatch(rng, 6);
      const adv = turnAdvantages(rewards, values, mask, turnIds, 1, 1);
      mask.forEach((row, b) => {
        for (let k = 0; k < K[b]; k++) {
          const pos = callPositions(row, turnIds[b], k);
          let future = 0;
          for (let j = k; j < K[b]; j++)
            for (const p of callPositions(row, turnIds[b], j)) future += rewards[b][p];
          const expected = future - values[b][pos[0]];
          for (const p of pos) close(adv[b][p], expected, 1e-12, `trial ${trial} row ${b} call ${k}`);
        }
      });
    }
  });

  it('with lambda = 1 and a zero critic, token-GAE advantages equal returns-to-go', () => {
    const rng = new Rng(2);
    for (const gamma of [1, 0.97, 0.5]) {
      const { mask, rewards } = randomBatch(rng, 8);
      const zero = mask.map((row) => row.map(() => 0));
      const { advantages, returns } = gaeAdvantages(rewards, zero, mask, gamma, 1);
      const rtg = returnsToGo(rewards, mask, gamma);
      closeRows(advantages, rtg, 1e-12);
      closeRows(returns, rtg, 1e-12);
    }
  });

  it('padding and observation positions never get a non-zero advantage, and off-mask inputs are ignored', () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 10; trial++) {
      const { mask, turnIds, values, rewards } = randomBatch(rng, 5);
      const outputs = (r: number[][], v: number[][]) => {
        const gae = gaeAdvantages(r, v, mask, 0.95, 0.9);
        const turn = turnAdvantages(r, v, mask, turnIds, 0.95, 0.9);
        return {
          gae: gae.advantages,
          gaeReturns: gae.returns,
          turn,
          rtg: returnsToGo(r, mask, 0.95),
          whitenedGae: maskedWhiten(gae.advantages, mask),
          whitenedTurn: maskedWhiten(turn, mask),
          outcome: outcomeRewards(
            mask.map(() => rng.float()),
            mask,
          ),
        };
      };
      const out = outputs(rewards, values);
      for (const [name, x] of Object.entries(out))
        x.forEach((row, b) => {
          row.forEach((v, i) => {
            if (mask[b][i] === 0) assert.equal(v, 0, `${name}[${b}][${i}] is off the mask`);
          });
        });
      // Changing rewards and values off the mask changes nothing.
      const noise = (x: number[][]) =>
        x.map((row, b) => row.map((v, i) => (mask[b][i] ? v : v + 100 * rng.float())));
      const again = outputs(noise(rewards), noise(values));
      for (const name of ['gae', 'gaeReturns', 'turn', 'rtg'] as const) closeRows(again[name], out[name], 0);
    }
  });

  it('token GAE with lambda = 0 is the one-step TD error, chained across observations', () => {
    const rng = new Rng(4);
    const { mask, values, rewards } = randomBatch(rng, 4);
    const { advantages } = gaeAdvantages(rewards, values, mask, 0.9, 0);
    mask.forEach((row, b) => {
      const pos = row.flatMap((m, i) => (m ? [i] : []));
      pos.forEach((p, j) => {
        const next = j + 1 < pos.length ? values[b][pos[j + 1]] : 0;
        close(advantages[b][p], rewards[b][p] + 0.9 * next - values[b][p], 1e-12);
      });
    });
  });
});

describe('masked statistics', () => {
  it('maskedWhiten gives mean 0 and std 1 over the mask and 0 elsewhere', () => {
    const rng = new Rng(5);
    const { mask } = randomBatch(rng, 7);
    const x = mask.map((row) => row.map(() => 3 + 10 * rng.float()));
    const w = maskedWhiten(x, mask);
    const vals = w.flatMap((row, b) => row.filter((_, i) => mask[b][i] === 1));
    const mean = vals.reduce((s, v) => s + v, 0) / vals.length;
    const std = Math.sqrt(vals.reduce((s, v) => s + (v - mean) ** 2, 0) / vals.length);
    close(mean, 0, 1e-9, 'mean');
    close(std, 1, 1e-5, 'std');
    w.forEach((row, b) => {
      row.forEach((v, i) => {
        if (mask[b][i] === 0) assert.equal(v, 0);
      });
    });
    // A constant input whitens to 0, not NaN.
    assert.ok(maskedWhiten([[2, 2, 2]], [[1, 1, 0]])[0].every((v) => v === 0));
  });

  it('maskedMeanRows averages over the mask only', () => {
    assert.equal(
      maskedMeanRows(
        [
          [1, 100, 3],
          [5, 0, 0],
        ],
        [
          [1, 0, 1],
          [1, 0, 0],
        ],
      ),
      3,
    );
    assert.equal(maskedMeanRows([[1]], [[0]]), 0);
  });

  it('explainedVariance is 1 for a perfect critic, 0 for a constant-mean one, NaN for constant returns', () => {
    const mask = [[1, 1, 1, 0]];
    const returns = [[1, 2, 3, 50]];
    close(explainedVariance([[1, 2, 3, -9]], returns, mask), 1, 1e-12);
    close(explainedVariance([[2, 2, 2, 0]], returns, mask), 0, 1e-12);
    // R - V = [0, 0, -1]: variance 2/9; Var(R) = 2/3 -> 1 - 1/3
    close(explainedVariance([[1, 2, 4, 0]], returns, mask), 2 / 3, 1e-12);
    assert.ok(Number.isNaN(explainedVariance([[0, 0, 0, 0]], [[1, 1, 1, 2]], mask)));
  });
});

describe('valueLoss (TF.js, cpu backend)', () => {
  it('is 0.5 * masked mean squared error, and PPO-clipped when clip is a number', async () => {
    await tf.setBackend('cpu');
    const v = tf.tensor2d([[1, 2, 3]]);
    const old = tf.tensor2d([[0.5, 2.5, 0]]);
    const R = tf.tensor2d([[0, 0, 0]]);
    const m = tf.tensor2d([[1, 1, 0]]);
    close((await valueLoss(v, old, R, m, null).data())[0], 0.5 * ((1 + 4) / 2), 1e-6);
    // clip 0.2: V_clipped = [0.7, 2.3, .]; squared errors max([1, 4], [0.49, 5.29]) = [1, 5.29]
    close((await valueLoss(v, old, R, m, 0.2).data())[0], 0.5 * ((1 + 5.29) / 2), 1e-5);
    assert.throws(() => valueLoss(v, old, R, m, -1), /clip/);
  });

  it('sends no gradient to masked-out positions or through the clipped branch when it is chosen', async () => {
    await tf.setBackend('cpu');
    const old = tf.tensor2d([[0.5, 2.5, 0]]);
    const R = tf.tensor2d([[0, 0, 0]]);
    const m = tf.tensor2d([[1, 1, 0]]);
    const g = tf.grad((x: tf.Tensor) => valueLoss(x as tf.Tensor2D, old, R, m, 0.2))(
      tf.tensor2d([[1, 2, 3]]),
    );
    const grad = Array.from(await g.data());
    // d/dV of 0.5 * mean: position 0 unclipped (V - R) / 2 = 0.5; position 1 the clipped branch
    // wins and is constant in V (V - V_old = -0.5 is clipped): 0; position 2 masked: 0.
    close(grad[0], 0.5, 1e-6);
    close(grad[1], 0, 1e-6);
    close(grad[2], 0, 1e-6);
  });
});

describe('callTable (figure 12.1)', () => {
  it('gives each call of an oracle episode its text, reward, values, TD error and advantages', () => {
    const rng = new Rng(9);
    const spec = makeReward('hidden', { stepPenalty: 0.05 });
    const t: Trajectory = runScripted(oracle, makeEnv({ reward: spec }), tasks[2], tok, rng);
    const batch = collate([t], tok.padId);
    const mask = batch.actionMask;
    const rewards = perCallRewards([t], mask, 0.05);
    const values = [mask[0].map((_, i) => 0.01 * i)];
    const tokAdv = gaeAdvantages(rewards, values, mask, 1, 0.95).advantages;
    const turnAdv = turnAdvantages(rewards, values, mask, batch.turnIds, 1, 0.95);
    const turn = turnGae(rewards, values, mask, batch.turnIds, 1, 0.95).rows[0];
    const rows = callTable(t, turn, tokAdv[0], 0.42, tok);
    assert.deepEqual(
      rows.map((r) => r.text),
      ['<call> read </call>', `<call> edit ${tasks[2].kind} </call>`, '<call> submit </call>'],
    );
    const starts = rows.map((r) => r.start);
    // The first policy position of call k predicts the first token of call k.
    starts.forEach((s, k) => {
      assert.equal(t.owner[s + 1], OWNER.policy);
      assert.equal(t.turn[s + 1], k);
      assert.notEqual(t.owner[s], OWNER.policy);
    });
    close(rows[0].reward, -0.05, 1e-12);
    close(rows[1].reward, -0.05, 1e-12);
    close(rows[2].reward, 0.95, 1e-12);
    rows.forEach((r, k) => {
      close(r.valueStart, 0.01 * starts[k], 1e-12);
      close(r.valueNext, k < 2 ? 0.01 * starts[k + 1] : 0, 1e-12);
      close(r.tdError, r.reward + r.valueNext - r.valueStart, 1e-12);
      assert.equal(r.advOutcome, 0.42);
      const tokens = tokAdv[0].slice(r.start, r.end + 1);
      close(r.advToken, tokens.reduce((s, x) => s + x, 0) / tokens.length, 1e-12);
      assert.equal(r.advTurn, turnAdv[0][r.start]);
    });
    // Turn-level advantages chain the TD errors back with lambda = 0.95.
    close(rows[2].advTurn, rows[2].tdError, 1e-12);
    close(rows[1].advTurn, rows[1].tdError + 0.95 * rows[2].tdError, 1e-12);
    close(rows[0].advTurn, rows[0].tdError + 0.95 * rows[1].tdError + 0.95 ** 2 * rows[2].tdError, 1e-12);
  });
});
