/** Section 12.3: turn budget and step penalty. */
import { makeReward } from '../gym/rewards.js';
import { armConfig, evalEpisodes } from './policy-arms.js';
import { trainArms, windowMean } from './train-arms.js';
import type { Figure, Recipe, Table } from './types.js';

export const recipe123: Recipe = {
  name: '12.3',
  section: '12.3',
  title: 'Turn budget and step penalty: default, penalty 0.05, penalty 0.3, max_turns 3',
  mechanism:
    'penalty 0.3 collapses to submit-at-once (pass 0, turns 1); max_turns 3 stops reading (pass near 0.2)',
  trains: true,
  async run(ctx) {
    const seed = ctx.seed;
    const arms = [
      { name: 'default', cfg: armConfig(ctx) },
      {
        name: 'penalty 0.05',
        cfg: armConfig(ctx, { reward: makeReward('hidden', { stepPenalty: 0.05 }) }),
      },
      {
        name: 'penalty 0.3',
        cfg: armConfig(ctx, { reward: makeReward('hidden', { stepPenalty: 0.3 }) }),
      },
      { name: 'max_turns 3', cfg: armConfig(ctx, { maxTurns: 3 }) },
    ];
    const trained = await trainArms(ctx, '12.3', arms);
    const last = Math.max(0, ctx.steps - 10);
    const table: Table = {
      title: `12.3 held-out (${evalEpisodes(ctx)} per task, seed 7) and batch reward of steps ${last}-${ctx.steps - 1} (training seed ${seed})`,
      columns: ['arm', 'held-out pass', 'reads', 'tests', 'edits', 'turns', 'batch reward, late steps'],
      rows: trained.map((t) => [
        t.arm.name,
        t.heldout.pass_rate,
        t.heldout.reads,
        t.heldout.tests,
        t.heldout.edits,
        t.heldout.turns,
        windowMean(t.history, 'reward', last, ctx.steps),
      ]),
      digits: [0, 3, 2, 2, 2, 2, 3],
    };
    const figures: Figure[] = ['pass_rate', 'reads', 'tests', 'turns'].map((key) => ({
      title: `figure 12.2: ${key} per step`,
      kind: 'curves',
      x: trained[0]?.history.map((h) => h.step) ?? [],
      series: trained.map((t) => ({ name: t.arm.name, values: t.history.map((h) => h[key] as number) })),
    }));
    const windows = (key: 'turns' | 'reads') =>
      trained.map((t) =>
        Array.from({ length: Math.ceil(ctx.steps / 10) }, (_, w) =>
          windowMean(t.history, key, w * 10, w * 10 + 10),
        ),
      );
    const turnsByWindow = windows('turns');
    const readsByWindow = windows('reads');
    return {
      tables: [table],
      figures,
      runs: trained.map((t) => t.runDir),
      notes: trained.map(
        (t, i) =>
          `${t.arm.name}: turns per 10-step window [${turnsByWindow[i].map((x) => x.toFixed(2)).join(', ')}], reads [${readsByWindow[i].map((x) => x.toFixed(2)).join(', ')}]`,
      ),
    };
  },
};
