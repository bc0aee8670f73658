/** Section 12.4: context management changes the policy's input. */
import * as tf from '@tensorflow/tfjs-core';
import type { ContextPolicy } from '../context/policy.js';
import { contextRolloutBatch } from '../context/rollout.js';
import { makeEnv } from '../gym/env.js';
import type { Trajectory } from '../gym/episode.js';
import { makeTasks } from '../gym/tasks.js';
import { loadCheckpoint } from '../model/checkpoint.js';
import { sequenceLogProbs } from '../model/logprobs.js';
import { rolloutBatch } from '../model/sampler.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { baseCheckpointDir } from '../paths.js';
import { makeRLConfig } from '../rl/config.js';
import { Rng } from '../rng.js';
import { armConfig } from './policy-arms.js';
import { evaluateArm, trainArms } from './train-arms.js';
import type { Recipe, RecipeContext } from './types.js';

/** Sum of the policy's log-probs over a trajectory's action mask. */
function scoreOnMask(model: TinyAgent, t: Pick<Trajectory, 'ids' | 'actionMask'>): number {
  return tf.tidy(() => {
    const lp = sequenceLogProbs(model, tf.tensor2d([t.ids], undefined, 'int32')).arraySync()[0];
    return lp.reduce((a, x, i) => a + x * t.actionMask[i], 0);
  });
}

/**
 * The chapter's two checks on a model: with the full context, the per-call sampler reproduces the
 * single-sequence sampler; and per-call log-probs summed per episode equal the episode's log-prob.
 */
export function equivalenceChecks(model: TinyAgent, ctx: Pick<RecipeContext, 'tok'>, seed = 0) {
  const tasks = makeTasks('train')
    .slice(0, 4)
    .flatMap((t) => [t, t, t, t]);
  const reference = rolloutBatch(
    model,
    tasks.map(() => makeEnv()),
    tasks,
    ctx.tok,
    new Rng(seed),
  );
  const { trajs, samples } = contextRolloutBatch(
    model,
    tasks.map(() => makeEnv()),
    tasks,
    ctx.tok,
    { kind: 'full' },
    new Rng(seed),
  );
  const identical = reference.every(
    (r, i) => r.ids.length === trajs[i].ids.length && r.ids.every((x, j) => x === trajs[i].ids[j]),
  );
  const perEpisode = trajs.map((t) => scoreOnMask(model, t));
  const perCall = trajs.map(() => 0);
  for (const s of samples) perCall[s.episode] += scoreOnMask(model, s.traj);
  const maxDiff = Math.max(...perEpisode.map((x, i) => Math.abs(x - perCall[i])));
  return { identical, calls: samples.length, episodes: trajs.length, maxDiff };
}

export const recipe124: Recipe = {
  name: '12.4',
  section: '12.4',
  title: 'Context policies: train full vs keep_obs=1, evaluate each under full, keep_obs=1, keep_obs=0',
  mechanism: 'each policy best in its own training context; the mismatch is asymmetric; keep_obs=0 fails',
  trains: true,
  async run(ctx) {
    const seed = ctx.seed;
    const base = loadCheckpoint(baseCheckpointDir(), ctx.tok, { expect: 'policy' });
    const check = equivalenceChecks(base, ctx);
    base.dispose();
    const notes = [
      `identical episodes: ${check.identical} | calls: ${check.calls} (${check.episodes} episodes, RL base, seed 0)`,
      `max |log p(episode) - sum of per-call log p| = ${check.maxDiff.toExponential(1)}`,
    ];
    ctx.log(notes.join('\n'));
    const keep1: ContextPolicy = { kind: 'keepObs', k: 1 };
    const trained = await trainArms(ctx, '12.4', [
      { name: 'full', cfg: armConfig(ctx) },
      { name: 'keep_obs=1', cfg: armConfig(ctx, { contextPolicy: keep1 }) },
    ]);
    const evals: [string, ContextPolicy][] = [
      ['full', { kind: 'full' }],
      ['keep_obs=1', keep1],
      ['keep_obs=0', { kind: 'keepObs', k: 0 }],
    ];
    const rows: (string | number)[][] = [];
    const pass: number[][] = [];
    for (const t of trained) {
      const line: number[] = [];
      for (const [name, policy] of evals) {
        const s = evaluateArm(ctx, t, makeRLConfig({ seed, contextPolicy: policy }));
        rows.push([t.arm.name, name, s.pass_rate, s.reads, s.tests, s.turns]);
        line.push(s.pass_rate);
      }
      pass.push(line);
    }
    return {
      tables: [
        {
          title: `12.4 held-out (16 per task, seed 7) by training and evaluation context (training seed ${seed})`,
          columns: ['trained', 'evaluated', 'pass', 'reads', 'tests', 'turns'],
          rows,
          digits: [0, 0, 3, 2, 2, 2],
        },
      ],
      figures: [
        {
          title: 'figure 12.3: held-out pass by training context (series) and evaluation context (x)',
          kind: 'bars',
          x: evals.map((_, i) => i),
          labels: evals.map(([n]) => n),
          series: trained.map((t, i) => ({ name: `trained ${t.arm.name}`, values: pass[i] })),
        },
      ],
      runs: trained.map((t) => t.runDir),
      notes,
    };
  },
};
