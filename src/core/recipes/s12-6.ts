/** Section 12.6: mixing single-turn and multi-turn data. */
import * as tf from '@tensorflow/tfjs-core';
import { makeTasks, randomizeNames, singleTurn, type Task } from '../gym/tasks.js';
import { CALL_START, type Tokenizer } from '../gym/tokenizer.js';
import { MixedTurnEnv } from '../gym/variants.js';
import type { TinyAgent } from '../model/tinyagent.js';
import type { RLConfig } from '../rl/config.js';
import { type EnvFactory, sampleGroups } from '../rl/grpo.js';
import { Rng } from '../rng.js';
import {
  armConfig,
  evalStats,
  finishArm,
  loadBase,
  lossWeightShares,
  type PolicyArmRun,
  trainPolicyArm,
} from './policy-arms.js';
import type { Recipe, RecipeContext, Table } from './types.js';

/** The chapter's `mixed_factory`: one MixedTurnEnv factory for batches of both formats. */
export function mixedFactory(cfg: RLConfig): EnvFactory {
  return () => new MixedTurnEnv(cfg.maxTurns, cfg.reward, cfg.maxEdits, { showBudget: cfg.showBudget });
}

/** The 50/50 mixture: every training task and its single-turn copy. */
export function mixtureTasks(): Task[] {
  const train = makeTasks('train');
  return [...train, ...train.map(singleTurn)];
}

/**
 * Held-out statistics of a policy on both formats, under the mixed env: multi-turn pass and reads;
 * single-turn pass, reads, edits and invalid calls (a single-turn episode is one call, so these are
 * shares of first calls).
 */
export function bothFormats(ctx: RecipeContext, policy: TinyAgent, cfg: RLConfig): number[] {
  const heldout = makeTasks('heldout');
  const multi = evalStats(ctx, policy, cfg, { tasks: heldout, envFactory: mixedFactory(cfg) });
  const single = evalStats(ctx, policy, cfg, {
    tasks: heldout.map(singleTurn),
    envFactory: mixedFactory(cfg),
  });
  return [
    multi.pass_rate,
    multi.reads,
    single.pass_rate,
    single.reads,
    single.edits,
    single.invalid_per_turn,
    callOpenProbability(policy, heldout.map(singleTurn), ctx.tok),
  ];
}

/**
 * Mean probability that the policy's first token after each task's prompt opens a call (`<call>`),
 * over the tasks renamed with seed 7: whether sampling can find a well-formed call at all.
 */
export function callOpenProbability(policy: TinyAgent, tasks: readonly Task[], tok: Tokenizer): number {
  const names = new Rng(7);
  const callId = tok.id(CALL_START);
  const ps = tasks.map((t) => {
    const ids = tok.encode(randomizeNames(t, names).issue);
    return tf.tidy(() => {
      const logits = policy.logits(tf.tensor2d([ids], undefined, 'int32')) as tf.Tensor3D;
      const last = tf.reshape(tf.slice(logits, [0, ids.length - 1, 0], [1, 1, -1]), [-1]);
      return tf.softmax(last).arraySync() as number[];
    })[callId];
  });
  return ps.reduce((a, b) => a + b, 0) / Math.max(ps.length, 1);
}

export const FORMAT_COLUMNS = [
  'multi-turn pass',
  '(reads)',
  'single-turn pass',
  '(reads)',
  '(edits as first call)',
  '(invalid first call)',
  'P(<call> first), single-turn prompt',
];

/**
 * Section 12.6's loss-weight measurement: 4 multi-turn and 4 single-turn training tasks sampled
 * from `policy` (seed + 3); the single-turn share of episodes and of the loss weight.
 */
export function lossWeightRow(ctx: RecipeContext, policy: TinyAgent, cfg: RLConfig): number[] {
  const train = makeTasks('train');
  const half = [
    ...train.filter((_, i) => i % 5 === 0),
    ...train.filter((_, i) => i % 5 === 1).map(singleTurn),
  ];
  const kept = sampleGroups(policy, mixedFactory(cfg), half, ctx.tok, cfg, new Rng(ctx.seed + 3));
  const s = lossWeightShares(kept, cfg.minibatchSize);
  const tokens = (single: boolean) => {
    const ts = kept.filter((t) => t.info.single_turn === single);
    return ts.reduce((a, t) => a + t.actionMask.reduce((x, y) => x + y, 0), 0) / Math.max(ts.length, 1);
  };
  return [s.episodes, s.tokenMean, s.seqMean, s.tokenMeanMinibatch, tokens(true), tokens(false)];
}

export const LOSS_WEIGHT_COLUMNS = [
  'single-turn share of episodes',
  'of loss weight: token_mean',
  'seq_mean_token_mean',
  'token_mean per length-bucketed minibatch (trainer)',
  'policy tokens: single-turn',
  'multi-turn',
];

export const recipe126: Recipe = {
  name: '12.6',
  section: '12.6',
  title:
    'Multi-turn-only vs a 50/50 mixture of single- and multi-turn tasks; loss-weight share of single-turn episodes',
  mechanism:
    'the multi-turn-only policy fails single-turn tasks, the mixture learns them; single-turn episodes get far less than half of the token_mean loss weight',
  trains: true,
  async run(ctx) {
    const cfg = armConfig(ctx);
    const runs: PolicyArmRun[] = [];
    const rows: (string | number)[][] = [];
    const base = loadBase(ctx);
    rows.push(['RL base (untrained)', ...bothFormats(ctx, base, cfg)]);
    base.dispose();
    let weights: number[] | null = null;
    for (const arm of [
      { name: 'multi-turn only', cfg },
      { name: '50/50 mixture', cfg, tasks: mixtureTasks(), envFactory: mixedFactory(cfg) },
    ]) {
      const run = await trainPolicyArm(ctx, '12.6', arm);
      if (!run) break;
      const cells = bothFormats(ctx, run.policy, cfg);
      rows.push([arm.name, ...cells]);
      if (arm.tasks) weights = lossWeightRow(ctx, run.policy, cfg);
      finishArm(run, { heldout: Object.fromEntries(FORMAT_COLUMNS.map((c, i) => [c, cells[i]])) });
      runs.push(run);
    }
    const tables: Table[] = [
      {
        title: `12.6 held-out tasks in both formats under the mixed env (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
        columns: ['policy', ...FORMAT_COLUMNS],
        rows,
        digits: [0, 3, 2, 3, 2, 2, 2, 4],
      },
    ];
    if (weights)
      tables.push({
        title: `12.6 loss weight: 4 multi-turn + 4 single-turn training tasks x ${cfg.groupSize} from the mixture policy (seed ${ctx.seed + 3})`,
        columns: ['batch', ...LOSS_WEIGHT_COLUMNS],
        rows: [['mixture policy', ...weights]],
        digits: [0, 2, 2, 2, 2, 1, 1],
      });
    return { tables, figures: [], runs: runs.map((r) => r.runDir), notes: [] };
  },
};
