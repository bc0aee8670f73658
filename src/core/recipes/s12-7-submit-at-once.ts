import { makeReward } from '../gym/rewards.js';
import type { StepRecord } from '../rl/train.js';
import {
  armConfig,
  evalStats,
  finishArm,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import type { Recipe } from './types.js';

/**
 * The chapter's arithmetic check on the starting policy: with step cost c, an attempt of K calls
 * that passes with probability p is worth p - cK; submitting at once is worth -c.
 */
export function submitAtOnceCheck(start: Pick<StepRecord, 'pass_rate' | 'turns'>, c: number) {
  const p = start.pass_rate;
  const K = start.turns;
  return { p, K, attempt: p - c * K, submitAtOnce: -c };
}

export const recipe127SubmitAtOnce: Recipe = {
  name: '12.7-submit-at-once',
  section: '12.7',
  title:
    'The agent learns to submit immediately: the arithmetic check and turns per window under penalty 0.3',
  mechanism: 'p - 0.3K of the starting policy is below -0.3, so turns collapse to 1 and pass to 0',
  trains: true,
  async run(ctx) {
    const c = 0.3;
    const cfg = armConfig(ctx, { reward: makeReward('hidden', { stepPenalty: c }) });
    const run = await trainPolicyArm(ctx, '12.7-submit-at-once', { name: 'penalty 0.3', cfg });
    if (!run) return { tables: [], figures: [], runs: [], notes: [] };
    const h0 = run.history[0];
    const chk = submitAtOnceCheck(h0, c);
    const heldout = evalStats(ctx, run.policy, cfg);
    finishArm(run, { heldout, check: chk });
    const windows = stepWindows(run.history.length, 10);
    const byWindow = (key: keyof StepRecord) => windowMeansOf(run.history, key, 10);
    return {
      tables: [
        {
          title: `12.7 immediate submit: the starting policy (step 0 batch, training seed ${ctx.seed}) under step cost ${c}`,
          columns: [
            'run',
            'pass p',
            'turns K',
            `attempt worth p - ${c}K`,
            'submit at once worth',
            'batch reward, step 0',
          ],
          rows: [['penalty 0.3', chk.p, chk.K, chk.attempt, chk.submitAtOnce, h0.reward]],
          digits: [0, 3, 2, 3, 2, 3],
        },
        {
          title: '12.7 penalty 0.3 run by 10-step window (batch statistics)',
          columns: ['statistic', ...windows.map((w) => w.label)],
          rows: [
            ['turns per episode', ...byWindow('turns')],
            ['pass rate', ...byWindow('pass_rate')],
            ['reward', ...byWindow('reward')],
          ],
          digits: [0, ...windows.map(() => 3)],
        },
        {
          title: `12.7 penalty 0.3, final policy held out (${ctx.smoke ? 2 : 16} per task, seed 7)`,
          columns: ['run', 'held-out pass', 'turns', 'reads', 'edits', 'reward'],
          rows: [
            ['penalty 0.3', heldout.pass_rate, heldout.turns, heldout.reads, heldout.edits, heldout.reward],
          ],
          digits: [0, 3, 2, 2, 2, 3],
        },
      ],
      figures: [],
      runs: [run.runDir],
      notes: [
        `starting policy: pass ${chk.p.toFixed(2)}, turns ${chk.K.toFixed(2)} -> attempt worth ${chk.attempt >= 0 ? '+' : ''}${chk.attempt.toFixed(2)}; submit at once worth ${chk.submitAtOnce.toFixed(2)}`,
      ],
    };
  },
};
