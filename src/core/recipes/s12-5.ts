/** Section 12.5: tool errors, malformed calls and early termination. */
import { LoggedEnv, logByStep, makeEnv } from '../gym/env.js';
import type { Trajectory } from '../gym/episode.js';
import type { EpisodeInfo } from '../gym/rewards.js';
import { makeTasks } from '../gym/tasks.js';
import { EarlyStopEnv } from '../gym/variants.js';
import { envOptions } from '../rl/config.js';
import { defaultEnvFactory, type EnvFactory, sampleGroups } from '../rl/grpo.js';
import { Rng } from '../rng.js';
import {
  armConfig,
  errorStats,
  evalStats,
  finishArm,
  invalidPerTurn,
  loadBase,
  trainPolicyArm,
} from './policy-arms.js';
import type { Recipe, Table } from './types.js';

export const recipe125: Recipe = {
  name: '12.5',
  section: '12.5',
  title:
    'Error observation vs early stop on the RL base; invalid calls per turn early and late in a default run',
  mechanism:
    'erroring episodes recover under error observations and pass 0 under early stop; the malformed-call rate barely falls under GRPO',
  trains: true,
  async run(ctx) {
    const cfg = armConfig(ctx);
    const tasks = ctx.smoke ? makeTasks('train').slice(0, 4) : makeTasks('train');
    // The chapter samples one pass (160 episodes, ~7 erring); 4 passes make "their pass rate" less noisy.
    const passes = ctx.smoke ? 1 : 4;
    const envs: [string, EnvFactory][] = [
      ['error observation', defaultEnvFactory(cfg)],
      ['early stop', () => new EarlyStopEnv(cfg.maxTurns, cfg.reward, cfg.maxEdits)],
    ];
    const base = loadBase(ctx);
    const envRows = envs.map(([name, factory]) => {
      const rng = new Rng(ctx.seed + 2);
      const trajs: Trajectory[] = [];
      for (let p = 0; p < passes; p++) trajs.push(...sampleGroups(base, factory, tasks, ctx.tok, cfg, rng));
      const s = errorStats(trajs);
      ctx.log(`12.5 ${name}: ${trajs.length} episodes, ${Math.round(s.erred * trajs.length)} with an error`);
      return [
        name,
        s.episodes,
        s.erred,
        Math.round(s.erred * s.episodes),
        s.erredPass,
        s.erredSubmit,
        s.pass,
        s.policyTokens,
      ];
    });
    base.dispose();
    const envTable: Table = {
      title: `12.5 RL base on ${tasks.length} training tasks x ${cfg.groupSize} x ${passes} (seed ${ctx.seed + 2}): error observation vs early stop`,
      columns: [
        'env',
        'episodes',
        'with an error',
        '(count)',
        'their pass rate',
        'their submit rate',
        'overall pass',
        'policy tokens per episode',
      ],
      rows: envRows,
      digits: [0, 0, 3, 0, 3, 3, 3, 1],
    };

    // The default run, logged, for the invalid-call rate per turn early and late in training.
    const log: EpisodeInfo[] = [];
    const run = await trainPolicyArm(ctx, '12.5', {
      name: 'default',
      cfg,
      envFactory: () => new LoggedEnv(makeEnv(envOptions(cfg)), log),
    });
    const tables = [envTable];
    const runs: string[] = [];
    if (run) {
      const steps = logByStep(run.history, log);
      const S = steps.length;
      const w = Math.min(5, S);
      const windows = [
        [0, w],
        [S - w, S],
      ];
      const heldout = evalStats(ctx, run.policy, cfg);
      tables.push({
        title: `12.5 default run (seed ${ctx.seed}): invalid calls per turn (malformed, unknown, or beyond the edit budget)`,
        columns: ['when', 'invalid calls per turn', 'episodes with an error', 'turns per episode'],
        rows: [
          ...windows.map(([a, b]) => {
            const infos = steps.slice(a, b).flat();
            return [
              `steps ${a}-${b - 1}`,
              invalidPerTurn(infos),
              infos.filter((i) => i.n_invalid > 0).length / Math.max(infos.length, 1),
              infos.reduce((x, i) => x + i.n_turns, 0) / Math.max(infos.length, 1),
            ];
          }),
          ['held-out, final policy', heldout.invalid_per_turn, Number.NaN, heldout.turns],
        ],
        digits: [0, 4, 3, 2],
      });
      finishArm(run, { heldout });
      runs.push(run.runDir);
    }
    return { tables, figures: [], runs, notes: [] };
  },
};
