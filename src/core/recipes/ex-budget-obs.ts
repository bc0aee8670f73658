import type { StepRecord } from '../rl/train.js';
import { evalStats, finishArm, type PolicyArmRun, trainPolicyArm } from './policy-arms.js';
import { DIP_COLUMNS, dipRow, everyFifth, neverConfig } from './s12-7-never-submit.js';
import type { Recipe } from './types.js';

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
