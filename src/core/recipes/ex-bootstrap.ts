/** Exercise 6: truncated episodes bootstrapped from a critic, against scored 0 and masked. */
import * as tf from '@tensorflow/tfjs-core';
import { makeTasks } from '../gym/tasks.js';
import { warmCritic } from '../rl/critic.js';
import { defaultEnvFactory, sampleGroups } from '../rl/grpo.js';
import {
  type BootstrapState,
  bootstrapAdvantages,
  bootstrappedTokenRewards,
  maskedTruncation,
} from '../rl/truncation.js';
import { Rng } from '../rng.js';
import {
  evalStats,
  finishArm,
  loadBase,
  type PolicyArmRun,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import { neverConfig } from './s12-7-never-submit.js';
import { nanMean } from './train-arms.js';
import type { Recipe } from './types.js';

export const recipeExBootstrap: Recipe = {
  name: 'ex-bootstrap',
  section: 'exercises',
  title: 'Exercise 6: truncated episodes scored 0, masked, or bootstrapped from a critic (wrong_submit = -1)',
  mechanism:
    'bootstrapping values an unfinished episode at what the critic expects of it, neither 0 nor free',
  trains: true,
  async run(ctx) {
    const cfg = neverConfig(ctx);
    // The critic: warmed on base-agent episodes under the same reward (the chapter: 60 steps of 64).
    const base = loadBase(ctx);
    const warmTasks = ctx.smoke ? makeTasks('train').slice(0, 4) : makeTasks('train');
    const warmRng = new Rng(ctx.seed + 11);
    const warmTrajs = sampleGroups(base, defaultEnvFactory(cfg), warmTasks, ctx.tok, cfg, warmRng);
    const warm = warmCritic(base, warmTrajs, ctx.tok, warmRng, {
      steps: ctx.smoke ? 2 : 60,
      tokenRewards: (trajs, mask) => bootstrappedTokenRewards(trajs, mask, cfg, null),
    });
    base.dispose();
    ctx.log(
      `ex-bootstrap: critic explained variance ${warm.evBefore.toFixed(3)} -> ${warm.evAfter.toFixed(3)}`,
    );
    const state: BootstrapState = {
      critic: warm.critic,
      opt: tf.train.adam(1e-3),
      tok: ctx.tok,
      last: { explained_variance: Number.NaN, bootstrap_mean: Number.NaN, limit_share: Number.NaN },
    };
    const critic: { ev: number[]; v: number[]; limit: number[] } = { ev: [], v: [], limit: [] };
    const done: PolicyArmRun[] = [];
    const rows: (string | number)[][] = [];
    try {
      for (const arm of [
        { name: 'truncation = 0', cfg },
        { name: 'truncation masked', cfg, advantages: maskedTruncation },
        {
          name: 'bootstrapped',
          cfg,
          advantages: bootstrapAdvantages(state),
          onStep: () => {
            critic.ev.push(state.last.explained_variance);
            critic.v.push(state.last.bootstrap_mean);
            critic.limit.push(state.last.limit_share);
          },
        },
      ]) {
        const run = await trainPolicyArm(ctx, 'ex-bootstrap', arm);
        if (!run) break;
        const s = evalStats(ctx, run.policy, cfg);
        rows.push([arm.name, s.pass_rate, s.submit_rate, s.turns]);
        finishArm(run, { heldout: s });
        done.push(run);
      }
    } finally {
      state.critic.dispose();
      state.opt.dispose();
    }
    const windows = stepWindows(done[0]?.history.length ?? 0, 10);
    return {
      tables: [
        {
          title: `Exercise 6 under wrong_submit = -1: held out (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
          columns: ['arm', 'held-out pass', 'submit rate', 'turns'],
          rows,
          digits: [0, 3, 3, 2],
        },
        {
          title: 'Exercise 6: batch submit rate by 10-step window',
          columns: ['arm', ...windows.map((w) => w.label)],
          rows: done.map((r) => [r.arm.name, ...windowMeansOf(r.history, 'submit_rate', 10)]),
          digits: [0, ...windows.map(() => 2)],
        },
        {
          title: `Exercise 6: the critic (warm-up explained variance ${warm.evBefore.toFixed(2)} -> ${warm.evAfter.toFixed(2)}) during the bootstrapped run, by 10-step window`,
          columns: ['statistic', ...windows.map((w) => w.label)],
          rows: [
            ['explained variance', ...windows.map((w) => nanMean(critic.ev.slice(w.from, w.to)))],
            [
              'mean V(s_K) of limit-ended episodes',
              ...windows.map((w) => nanMean(critic.v.slice(w.from, w.to))),
            ],
            [
              'share of limit-ended episodes',
              ...windows.map((w) => nanMean(critic.limit.slice(w.from, w.to))),
            ],
          ],
          digits: [0, ...windows.map(() => 3)],
        },
      ],
      figures: [],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};
