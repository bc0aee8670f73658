/** The chapter's exercises as recipe variants: budget curriculum, remaining budget, loss mode (and more below). */
import * as tf from '@tensorflow/tfjs-core';
import type { ContextPolicy } from '../context/policy.js';
import { parseCall } from '../gym/env.js';
import { type CallText, callTexts, collate, type Trajectory } from '../gym/episode.js';
import { makeTasks } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { makeCritic, type TinyAgent } from '../model/tinyagent.js';
import {
  bootstrappedTruncationReturns,
  explainedVariance,
  groupAdvantages,
  outcomeRewards,
  perCallRewardsOf,
  returnsToGo,
} from '../rl/advantages.js';
import type { RLConfig } from '../rl/config.js';
import { criticStep, criticValues, criticValuesOf } from '../rl/critic.js';
import { defaultEnvFactory, sampleGroups } from '../rl/grpo.js';
import type { AdvantageFn, StepRecord } from '../rl/train.js';
import { Rng } from '../rng.js';
import {
  armConfig,
  evalStats,
  finishArm,
  loadBase,
  lossWeightShares,
  type PolicyArmRun,
  passByFormat,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import { bothFormats, FORMAT_COLUMNS, mixedFactory, mixtureTasks } from './s12-6.js';
import { DIP_COLUMNS, dipRow, everyFifth, maskedTruncation, nanMean, neverConfig } from './s12-7.js';
import type { Recipe, Table } from './types.js';

// ---------------------------------------------------------------------------------------------
// Exercise 2: budget curriculum
// ---------------------------------------------------------------------------------------------

export const recipeExCurriculum: Recipe = {
  name: 'ex-curriculum',
  section: 'exercises',
  title:
    'Exercise 2: max_turns 3 from the base vs a curriculum (first half of the steps at max_turns 6, then 3)',
  mechanism:
    'a policy that already reads may keep reading under the tight budget; one trained at 3 from the start stops reading',
  trains: true,
  async run(ctx) {
    const cfg6 = armConfig(ctx);
    const cfg3 = armConfig(ctx, { maxTurns: 3 });
    const switchAt = Math.floor(ctx.steps / 2);
    const done: PolicyArmRun[] = [];
    const rows: (string | number)[][] = [];
    for (const arm of [
      { name: 'max_turns 3', cfg: cfg3 },
      {
        name: `curriculum: 6 for ${switchAt} steps, then 3`,
        cfg: cfg3,
        cfgAt: (step: number) => (step < switchAt ? cfg6 : cfg3),
      },
    ]) {
      const run = await trainPolicyArm(ctx, 'ex-curriculum', arm);
      if (!run) break;
      const at3 = evalStats(ctx, run.policy, cfg3);
      const at6 = evalStats(ctx, run.policy, cfg6);
      rows.push([
        arm.name,
        at3.pass_rate,
        at3.reads,
        at3.tests,
        at3.edits,
        at3.turns,
        at6.pass_rate,
        at6.reads,
      ]);
      finishArm(run, { heldout_max_turns_3: at3, heldout_max_turns_6: at6 });
      done.push(run);
    }
    const windows = stepWindows(done[0]?.history.length ?? 0, 10);
    return {
      tables: [
        {
          title: `Exercise 2: held out at max_turns 3 (and 6) (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
          columns: ['arm', 'pass @3', 'reads @3', 'tests @3', 'edits @3', 'turns @3', 'pass @6', 'reads @6'],
          rows,
          digits: [0, 3, 2, 2, 2, 2, 3, 2],
        },
        {
          title: 'Exercise 2: batch reads and pass by 10-step window',
          columns: ['arm', 'statistic', ...windows.map((w) => w.label)],
          rows: done.flatMap((r) => [
            [r.arm.name, 'reads', ...windowMeansOf(r.history, 'reads', 10)],
            [r.arm.name, 'pass', ...windowMeansOf(r.history, 'pass_rate', 10)],
          ]),
          digits: [0, 0, ...windows.map(() => 2)],
        },
      ],
      figures: [
        {
          title: 'curriculum: reads per step',
          kind: 'curves',
          x: done[0]?.history.map((h) => h.step) ?? [],
          series: done.map((r) => ({ name: r.arm.name, values: r.history.map((h) => h.reads) })),
        },
      ],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Exercise 4: remaining budget in the observation
// ---------------------------------------------------------------------------------------------

export const recipeExBudgetObs: Recipe = {
  name: 'ex-budget-obs',
  section: 'exercises',
  title: 'Exercise 4: wrong_submit = -1 with and without the turns left at the end of each observation',
  mechanism: 'does the policy still procrastinate when it sees the remaining budget?',
  trains: true,
  async run(ctx) {
    const done: PolicyArmRun[] = [];
    const held: (string | number)[][] = [];
    for (const arm of [
      { name: 'wrong_submit -1', cfg: neverConfig(ctx) },
      { name: 'wrong_submit -1, turns left shown', cfg: neverConfig(ctx, { showBudget: true }) },
    ]) {
      const run = await trainPolicyArm(ctx, 'ex-budget-obs', arm);
      if (!run) break;
      const s = evalStats(ctx, run.policy, arm.cfg);
      held.push([arm.name, s.pass_rate, s.submit_rate, s.turns, s.reward]);
      finishArm(run, { heldout: s });
      done.push(run);
    }
    const steps = everyFifth(done[0]?.history.length ?? 0);
    const perStep = (key: keyof StepRecord) =>
      steps.map((k) => [`step ${k}`, ...done.map((r) => r.history[k][key] as number)]);
    return {
      tables: [
        {
          title: `Exercise 4: batch submit rate every 5 steps (training seed ${ctx.seed})`,
          columns: ['step', ...done.map((r) => r.arm.name)],
          rows: perStep('submit_rate'),
          digits: [0, ...done.map(() => 2)],
        },
        {
          title: 'Exercise 4: batch turns per episode every 5 steps',
          columns: ['step', ...done.map((r) => r.arm.name)],
          rows: perStep('turns'),
          digits: [0, ...done.map(() => 2)],
        },
        {
          title: 'Exercise 4: the submit-rate dip of each arm',
          columns: ['arm', ...DIP_COLUMNS],
          rows: done.map((r) => dipRow(r.arm.name, r.history)),
          digits: [0, 2, 2, 0, 2, 2, 2, 2],
        },
        {
          title: `Exercise 4: held out, each arm in its own env (${ctx.smoke ? 2 : 16} per task, seed 7)`,
          columns: ['arm', 'held-out pass', 'submit rate', 'turns', 'reward'],
          rows: held,
          digits: [0, 3, 3, 2, 3],
        },
      ],
      figures: [],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Exercise 5: loss mode on the mixture
// ---------------------------------------------------------------------------------------------

export const recipeExLossMode: Recipe = {
  name: 'ex-loss-mode',
  section: 'exercises',
  title: 'Exercise 5: token_mean vs seq_mean_token_mean on the 50/50 single-/multi-turn mixture',
  mechanism:
    'single-turn episodes get a small share of the token_mean weight and half of the seq_mean weight; which format improves faster?',
  trains: true,
  async run(ctx) {
    const done: PolicyArmRun[] = [];
    const held: (string | number)[][] = [];
    const perStep = new Map<string, { single: number[]; multi: number[]; share: number[] }>();
    for (const lossMode of ['token_mean', 'seq_mean_token_mean'] as const) {
      const cfg = armConfig(ctx, { lossMode });
      const stats = { single: [] as number[], multi: [] as number[], share: [] as number[] };
      perStep.set(lossMode, stats);
      const run = await trainPolicyArm(ctx, 'ex-loss-mode', {
        name: lossMode,
        cfg,
        tasks: mixtureTasks(),
        envFactory: mixedFactory(cfg),
        onStep: (_rec, trajs: Trajectory[]) => {
          const infos = trajs.map((t) => t.info);
          stats.single.push(passByFormat(infos, true));
          stats.multi.push(passByFormat(infos, false));
          const w = lossWeightShares(trajs, cfg.minibatchSize);
          stats.share.push(lossMode === 'token_mean' ? w.tokenMean : w.seqMean);
        },
      });
      if (!run) break;
      const cells = bothFormats(ctx, run.policy, cfg);
      held.push([lossMode, ...cells]);
      finishArm(run, { heldout: Object.fromEntries(FORMAT_COLUMNS.map((c, i) => [c, cells[i]])) });
      done.push(run);
    }
    const windows = stepWindows(done[0]?.history.length ?? 0, 10);
    const windowRows = done.flatMap((r) => {
      const s = perStep.get(r.arm.name)!;
      return (
        [
          ['single-turn pass', s.single],
          ['multi-turn pass', s.multi],
          ['single-turn loss-weight share', s.share],
        ] as const
      ).map(([label, xs]) => [r.arm.name, label, ...windows.map((w) => nanMean(xs.slice(w.from, w.to)))]);
    });
    const tables: Table[] = [
      {
        title: `Exercise 5: held-out tasks in both formats under the mixed env (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
        columns: ['loss mode', ...FORMAT_COLUMNS],
        rows: held,
        digits: [0, 3, 2, 3, 2, 2, 2, 4],
      },
      {
        title:
          'Exercise 5: training batches by 10-step window (pass per format; single-turn share of the loss weight)',
        columns: ['loss mode', 'statistic', ...windows.map((w) => w.label)],
        rows: windowRows,
        digits: [0, 0, ...windows.map(() => 2)],
      },
    ];
    return { tables, figures: [], runs: done.map((r) => r.runDir), notes: [] };
  },
};

// ---------------------------------------------------------------------------------------------
// Exercise 3: summarisation context policy
// ---------------------------------------------------------------------------------------------

const CONTEXTS: [string, ContextPolicy][] = [
  ['full', { kind: 'full' }],
  ['keep_obs=1', { kind: 'keepObs', k: 1 }],
  ['summarize', { kind: 'summarize' }],
];

/**
 * Of the episodes that read, the share that edit after their first read: under summarisation the
 * read's answer is one operation token, which the base has never seen after a read (NaN: none read).
 */
export function editAfterRead(
  trajs: readonly Pick<Trajectory, 'ids' | 'owner' | 'turn' | 'info'>[],
  tok: { decode(ids: readonly number[]): string },
): number {
  const isCall = (tool: string) => (c: CallText) => {
    const parsed = parseCall(c.call);
    return parsed.ok && parsed.tool === tool;
  };
  const readers = trajs.filter((t) => t.info.reads > 0).map((t) => callTexts(t, tok));
  const editing = readers.filter((calls) =>
    calls.slice(calls.findIndex(isCall('read'))).some(isCall('edit')),
  );
  return readers.length ? editing.length / readers.length : Number.NaN;
}

export const recipeExSummarize: Recipe = {
  name: 'ex-summarize',
  section: 'exercises',
  title:
    'Exercise 3: train with summarisation (each read replaced by its inferOp) vs keep_obs=1; evaluate under full context',
  mechanism: 'which context policy transfers better to the full context: masking or summarising?',
  trains: true,
  async run(ctx) {
    const done: PolicyArmRun[] = [];
    const rows: (string | number)[][] = [];
    const gaps: (string | number)[][] = [];
    for (const [name, contextPolicy] of CONTEXTS.slice(1)) {
      const cfg = armConfig(ctx, { contextPolicy });
      let firstStep = Number.NaN;
      const run = await trainPolicyArm(ctx, 'ex-summarize', {
        name: `trained ${name}`,
        cfg,
        onStep: (rec, trajs) => {
          if (rec.step === 0) firstStep = editAfterRead(trajs, ctx.tok);
        },
      });
      if (!run) break;
      const byEval: Record<string, number> = {};
      for (const [evalName, evalPolicy] of CONTEXTS) {
        const s = evalStats(ctx, run.policy, armConfig(ctx, { contextPolicy: evalPolicy }));
        rows.push([name, evalName, s.pass_rate, s.reads, s.edits, s.turns]);
        byEval[evalName] = s.pass_rate;
      }
      const reads = run.history.map((h) => h.reads);
      gaps.push([
        name,
        firstStep,
        reads[0],
        reads[reads.length - 1],
        byEval[name],
        byEval.full,
        byEval.full - byEval[name],
      ]);
      finishArm(run, { heldout_pass_by_eval_context: byEval });
      done.push(run);
    }
    return {
      tables: [
        {
          title: `Exercise 3: held out by training and evaluation context (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
          columns: ['trained', 'evaluated', 'pass', 'reads', 'edits', 'turns'],
          rows,
          digits: [0, 0, 3, 2, 2, 2],
        },
        {
          title: 'Exercise 3: transfer to the full context',
          columns: [
            'trained',
            'edit after the read, step 0',
            'reads, step 0',
            'reads, last step',
            'pass in own context',
            'pass under full',
            'full - own',
          ],
          rows: gaps,
          digits: [0, 2, 2, 2, 3, 3, 3],
        },
      ],
      figures: [],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Exercise 6: bootstrapped truncation
// ---------------------------------------------------------------------------------------------

/** True for an episode that ended on a limit (turn budget or context) rather than by submitting. */
export const endedOnLimit = (info: { submitted: boolean; stop: string }) =>
  !info.submitted && (info.stop === 'max_turns' || info.stop === 'truncated');

/**
 * The critic's value of the state each episode ended in, V(s_K) [B]: its value of the whole
 * episode as a prefix (one pad token is appended so that the longest row has that position too).
 */
export function endValues(critic: TinyAgent, trajs: readonly Trajectory[], tok: Tokenizer): number[] {
  const batch = collate(trajs, tok.padId);
  const ids = batch.ids.map((row) => [...row, tok.padId]);
  const values = tf.tidy(() => criticValues(critic, tf.tensor2d(ids, undefined, 'int32')).arraySync());
  return trajs.map((t, b) => values[b][t.ids.length - 1]);
}

/** Token rewards [B, T-1] of a batch under cfg's reward, plus bootstrap values on the last call of limit-ended episodes. */
function bootstrappedTokenRewards(
  trajs: readonly Trajectory[],
  mask: number[][],
  cfg: RLConfig,
  bootstrap: readonly number[] | null,
): number[][] {
  const rewards = perCallRewardsOf(trajs, mask, cfg.reward);
  if (bootstrap) {
    const last = outcomeRewards(
      trajs.map((t, b) => (endedOnLimit(t.info) ? bootstrap[b] : 0)),
      mask,
    );
    return rewards.map((row, b) => row.map((r, i) => r + last[b][i]));
  }
  return rewards;
}

export interface BootstrapState {
  critic: TinyAgent;
  opt: tf.Optimizer;
  tok: Tokenizer;
  /** Statistics of the last step. */
  last: { explained_variance: number; bootstrap_mean: number; limit_share: number };
}

/**
 * A critic for exercise 6, copied from `policy` and regressed on the returns-to-go of `trajs`
 * under cfg's reward (wrongSubmit included), `steps` steps of 64 episodes (Adam 1e-3).
 */
export function warmBootstrapCritic(
  policy: TinyAgent,
  trajs: readonly Trajectory[],
  tok: Tokenizer,
  cfg: RLConfig,
  rng: Rng,
  steps: number,
): { critic: TinyAgent; evBefore: number; evAfter: number } {
  const critic = makeCritic(policy);
  const opt = tf.train.adam(1e-3);
  const all = collate(trajs, tok.padId);
  const returns = returnsToGo(bootstrappedTokenRewards(trajs, all.actionMask, cfg, null), all.actionMask);
  const ev = () => explainedVariance(criticValuesOf(critic, all), returns, all.actionMask);
  const evBefore = ev();
  for (let s = 0; s < steps; s++) {
    const idx = Array.from({ length: 64 }, () => rng.int(trajs.length));
    const sub = collate(
      idx.map((i) => trajs[i]),
      tok.padId,
    );
    const T1 = sub.ids[0].length - 1;
    const ret = idx.map((i) => {
      const row = returns[i].slice(0, T1);
      while (row.length < T1) row.push(0);
      return row;
    });
    criticStep(critic, opt, sub.ids, ret, ret, sub.actionMask);
  }
  opt.dispose();
  return { critic, evBefore, evAfter: ev() };
}

/**
 * Exercise 6 as a trainer AdvantageFn: R_hat = R + V(s_K) for episodes that ended on a limit, R
 * otherwise (`bootstrappedTruncationReturns`), group-normalised; then one critic step on the
 * batch's bootstrapped returns-to-go (the step does not change this batch's advantages).
 */
export function bootstrapAdvantages(state: BootstrapState): AdvantageFn {
  return (trajs, cfg) => {
    const v = endValues(state.critic, trajs, state.tok);
    const limit = trajs.map((t) => endedOnLimit(t.info));
    const rHat = bootstrappedTruncationReturns(
      trajs.map((t) => t.reward),
      limit,
      v,
    );
    const batch = collate(trajs, state.tok.padId);
    const returns = returnsToGo(bootstrappedTokenRewards(trajs, batch.actionMask, cfg, v), batch.actionMask);
    const values = criticValuesOf(state.critic, batch);
    const nLimit = limit.filter(Boolean).length;
    state.last = {
      explained_variance: explainedVariance(values, returns, batch.actionMask),
      bootstrap_mean: nLimit ? v.filter((_, b) => limit[b]).reduce((a, x) => a + x, 0) / nLimit : Number.NaN,
      limit_share: nLimit / trajs.length,
    };
    criticStep(state.critic, state.opt, batch.ids, values, returns, batch.actionMask);
    return groupAdvantages(rHat, cfg.groupSize);
  };
}

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
    const warm = warmBootstrapCritic(base, warmTrajs, ctx.tok, cfg, warmRng, ctx.smoke ? 2 : 60);
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
