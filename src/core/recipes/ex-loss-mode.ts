import type { Trajectory } from '../gym/episode.js';
import {
  armConfig,
  finishArm,
  lossWeightShares,
  type PolicyArmRun,
  passByFormat,
  stepWindows,
  trainPolicyArm,
} from './policy-arms.js';
import { bothFormats, FORMAT_COLUMNS, mixedFactory, mixtureTasks } from './s12-6.js';
import { nanMean } from './train-arms.js';
import type { Recipe, Table } from './types.js';

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
