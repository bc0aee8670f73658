/** The chapter's exercises as recipe variants: budget curriculum, remaining budget, loss mode (and more below). */
import type { Trajectory } from '../gym/episode.js';
import type { StepRecord } from '../rl/train.js';
import {
  armConfig,
  evalStats,
  finishArm,
  lossWeightShares,
  type PolicyArmRun,
  passByFormat,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import { bothFormats, FORMAT_COLUMNS, mixedFactory, mixtureTasks } from './s12-6.js';
import { DIP_COLUMNS, dipRow, everyFifth, neverConfig } from './s12-7.js';
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
    const mean = (xs: number[]) => {
      const ys = xs.filter((x) => !Number.isNaN(x));
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Number.NaN;
    };
    const windowRows = done.flatMap((r) => {
      const s = perStep.get(r.arm.name)!;
      return (
        [
          ['single-turn pass', s.single],
          ['multi-turn pass', s.multi],
          ['single-turn loss-weight share', s.share],
        ] as const
      ).map(([label, xs]) => [r.arm.name, label, ...windows.map((w) => mean(xs.slice(w.from, w.to)))]);
    });
    const tables: Table[] = [
      {
        title: `Exercise 5: held-out tasks in both formats under the mixed env (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
        columns: ['loss mode', ...FORMAT_COLUMNS],
        rows: held,
        digits: [0, 3, 2, 3, 2, 2],
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
