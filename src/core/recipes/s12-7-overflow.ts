/** Section 12.7: context overflow as the turn budget grows, and capping each observation. */
import { makeEnv } from '../gym/env.js';
import type { Trajectory } from '../gym/episode.js';
import { longReader, runScripted } from '../gym/scripted.js';
import { makeTasks, randomizeNames } from '../gym/tasks.js';
import { envOptions } from '../rl/config.js';
import { behaviorStats, sampleGroups } from '../rl/grpo.js';
import { Rng } from '../rng.js';
import { armConfig, loadBase } from './policy-arms.js';
import type { Recipe, Table } from './types.js';

export const OVERFLOW_BUDGETS = [6, 12, 24, 48];
export const OBS_CAPS: (number | null)[] = [null, 24, 12];

const capLabel = (cap: number | null) => (cap === null ? 'none' : `${cap} tokens`);

/** One row of the overflow table from a batch of episodes. */
export function overflowCells(trajs: readonly Trajectory[]): number[] {
  const s = behaviorStats(trajs);
  return [s.tokens, Math.max(...trajs.map((t) => t.ids.length)), s.truncated, s.pass_rate, s.turns];
}

export const recipe127Overflow: Recipe = {
  name: '12.7-overflow',
  section: '12.7',
  title: 'Context overflow as the turn budget grows (6, 12, 24, 48), and capping each observation',
  mechanism:
    'overflow appears only at large budgets and for long-reading policies; a cap delays it but can cut the information out',
  trains: false,
  async run(ctx) {
    const tasks = ctx.smoke ? makeTasks('train').slice(0, 4) : makeTasks('train');
    const base = loadBase(ctx);
    const rows: (string | number)[][] = [];
    const budgets = ctx.smoke ? [6, 24] : OVERFLOW_BUDGETS;
    for (const maxTurns of budgets)
      for (const cap of OBS_CAPS) {
        const cfg = armConfig(ctx, { maxTurns });
        const factory = () => makeEnv({ ...envOptions(cfg), obsCap: cap ?? undefined });
        const model = sampleGroups(base, factory, tasks, ctx.tok, cfg, new Rng(ctx.seed + 1));
        rows.push(['RL base', String(maxTurns), capLabel(cap), ...overflowCells(model)]);
        const rng = new Rng(ctx.seed + 1);
        const scripted = tasks.flatMap((t) =>
          Array.from({ length: cfg.groupSize }, () =>
            runScripted(longReader, factory(), randomizeNames(t, rng), ctx.tok, rng),
          ),
        );
        rows.push([longReader.name, String(maxTurns), capLabel(cap), ...overflowCells(scripted)]);
      }
    base.dispose();
    rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]));
    const table: Table = {
      title: `12.7 context overflow (256 tokens): ${tasks.length} training tasks x ${armConfig(ctx).groupSize} per setting (seed ${ctx.seed + 1}); obs cap = head and tail of each tool output, '...' between`,
      columns: [
        'policy',
        'max_turns',
        'obs cap',
        'tokens per episode',
        'max tokens',
        'context overflow',
        'pass',
        'turns',
      ],
      rows,
      digits: [0, 0, 0, 1, 0, 3, 3, 2],
    };
    return { tables: [table], figures: [], runs: [], notes: [] };
  },
};
