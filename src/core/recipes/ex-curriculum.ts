import {
  armConfig,
  evalStats,
  finishArm,
  type PolicyArmRun,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import { stepCurves } from './train-arms.js';
import type { Recipe } from './types.js';

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
      figures: [stepCurves('curriculum: reads per step', done, 'reads')],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};
