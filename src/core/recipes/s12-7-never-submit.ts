/** Section 12.7: the agent stops submitting under wrong_submit = -1 (the dip, and the race that decides the recovery). */
import { parseCall } from '../gym/env.js';
import { callTexts, type Trajectory } from '../gym/episode.js';
import { makeReward } from '../gym/rewards.js';
import type { RLConfig } from '../rl/config.js';
import type { StepRecord } from '../rl/train.js';
import { armConfig, evalStats, finishArm, trainPolicyArm } from './policy-arms.js';
import type { Recipe, RecipeContext } from './types.js';

/** The never-submit configuration: a failed submission scores -1. */
export const neverConfig = (ctx: Pick<RecipeContext, 'seed' | 'smoke'>, o: Partial<RLConfig> = {}) =>
  armConfig(ctx, { reward: makeReward('hidden', { wrongSubmit: -1 }), ...o });

/** Steps 0, 5, 10, ... and the last: the chapter's never-submit printout. */
export function everyFifth(steps: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < steps; k++) if (k % 5 === 0 || k === steps - 1) out.push(k);
  return out;
}

export interface SubmitDip {
  /** Submit rate of step 0. */
  start: number;
  /** Lowest mean submit rate over `width` consecutive steps, and the first step of that window. */
  low: number;
  lowAt: number;
  /** Mean reward over the same window, and at step 0. */
  rewardAtLow: number;
  rewardStart: number;
  /** Mean submit rate and pass rate of the last `width` steps. */
  end: number;
  endPass: number;
}

/** Where the submit rate of a run bottoms out (over sliding windows of `width` steps), and where it ends. */
export function submitDip(
  history: readonly Pick<StepRecord, 'submit_rate' | 'reward' | 'pass_rate'>[],
  width = 5,
): SubmitDip {
  const w = Math.max(1, Math.min(width, history.length));
  const mean = (from: number, key: 'submit_rate' | 'reward' | 'pass_rate') =>
    history.slice(from, from + w).reduce((a, h) => a + h[key], 0) / w;
  let lowAt = 0;
  for (let k = 1; k + w <= history.length; k++)
    if (mean(k, 'submit_rate') < mean(lowAt, 'submit_rate')) lowAt = k;
  const last = history.length - w;
  return {
    start: history[0].submit_rate,
    low: mean(lowAt, 'submit_rate'),
    lowAt,
    rewardAtLow: mean(lowAt, 'reward'),
    rewardStart: history[0].reward,
    end: mean(last, 'submit_rate'),
    endPass: mean(last, 'pass_rate'),
  };
}

export const DIP_COLUMNS = [
  'submit rate, step 0',
  'lowest 5-step submit rate',
  'from step',
  'reward there',
  'reward, step 0',
  'submit rate, last 5 steps',
  'pass, last 5 steps',
];

export function dipRow(name: string, history: readonly StepRecord[]): (string | number)[] {
  const d = submitDip(history);
  return [name, d.start, d.low, d.lowAt, d.rewardAtLow, d.rewardStart, d.end, d.endPass];
}

/** What a step's episodes show about the race that decides whether the never-submit dip recovers. */
export interface SubmitEvidence {
  /** Share of the episodes with an accepted edit whose edit fixes the bug (0.2 is the blind guess). */
  editAccuracy: number;
  /** Accepted edits per episode. */
  edits: number;
  /** Share of episodes that ran the visible test after their edit. */
  checked: number;
  /** Submit rate of the episodes whose last test after the edit said PASS, and FAIL (NaN when none). */
  submitAfterPass: number;
  submitAfterFail: number;
}

/**
 * The visible test catches every bug, so a policy that has learned when to submit under
 * wrong_submit = -1 submits after PASS and holds back after FAIL; and a submission can only pay once
 * the edits beat the blind guess. Calls are read from the tokens (`callTexts`).
 */
export function submitEvidence(
  trajs: readonly Pick<Trajectory, 'ids' | 'owner' | 'turn' | 'info' | 'task'>[],
  tok: { decode(ids: readonly number[]): string },
): SubmitEvidence {
  let edited = 0;
  let fixed = 0;
  let checked = 0;
  const after = { PASS: [0, 0], FAIL: [0, 0] };
  for (const t of trajs) {
    if (t.info.edit_op !== null) {
      edited++;
      if (t.info.edit_op === t.task.kind) fixed++;
    }
    let editDone = false;
    let verdict: 'PASS' | 'FAIL' | null = null;
    for (const { call, obs } of callTexts(t, tok)) {
      const parsed = parseCall(call);
      // The observation's first word (exercise 4 appends the turns left).
      const word = obs?.split(' ')[0];
      if (!parsed.ok) continue;
      if (parsed.tool === 'edit' && word === 'ok') editDone = true;
      else if (editDone && parsed.tool === 'test' && (word === 'PASS' || word === 'FAIL')) verdict = word;
    }
    if (verdict) {
      checked++;
      after[verdict][0] += t.info.submitted ? 1 : 0;
      after[verdict][1]++;
    }
  }
  const n = Math.max(trajs.length, 1);
  const rate = ([k, m]: number[]) => (m ? k / m : Number.NaN);
  return {
    editAccuracy: edited ? fixed / edited : Number.NaN,
    edits: edited / n,
    checked: checked / n,
    submitAfterPass: rate(after.PASS),
    submitAfterFail: rate(after.FAIL),
  };
}

export const recipe127NeverSubmit: Recipe = {
  name: '12.7-never-submit',
  section: '12.7',
  title: 'The agent stops submitting: wrong_submit = -1, submit rate, pass, reward and turns every 5 steps',
  mechanism:
    'the submit rate dips while the reward rises; it recovers only if the edits beat the blind guess before it reaches 0',
  trains: true,
  async run(ctx) {
    const cfg = neverConfig(ctx);
    const evidence: SubmitEvidence[] = [];
    const run = await trainPolicyArm(ctx, '12.7-never-submit', {
      name: 'wrong_submit -1',
      cfg,
      onStep: (_rec, trajs) => evidence.push(submitEvidence(trajs, ctx.tok)),
    });
    if (!run) return { tables: [], figures: [], runs: [], notes: [] };
    const heldout = evalStats(ctx, run.policy, cfg);
    finishArm(run, { heldout, evidence });
    const h = run.history;
    return {
      tables: [
        {
          title: `12.7 never submit: wrong_submit = -1 (training seed ${ctx.seed}), batch statistics`,
          columns: ['step', 'submit rate', 'pass', 'reward', 'turns'],
          rows: everyFifth(h.length).map((k) => [
            `step ${k}`,
            h[k].submit_rate,
            h[k].pass_rate,
            h[k].reward,
            h[k].turns,
          ]),
          digits: [0, 2, 2, 2, 2],
        },
        {
          title: '12.7 never submit: the dip and the recovery',
          columns: ['run', ...DIP_COLUMNS],
          rows: [dipRow('wrong_submit -1', h)],
          digits: [0, 2, 2, 0, 2, 2, 2, 2],
        },
        {
          title:
            '12.7 never submit: the race (edits that fix the bug, and submitting after the visible test)',
          columns: [
            'step',
            'submit rate',
            'edits',
            'edit fixes the bug',
            'tested after the edit',
            'submit after PASS',
            'submit after FAIL',
          ],
          rows: everyFifth(h.length).map((k) => {
            const e = evidence[k];
            return [
              `step ${k}`,
              h[k].submit_rate,
              e.edits,
              e.editAccuracy,
              e.checked,
              e.submitAfterPass,
              e.submitAfterFail,
            ];
          }),
          digits: [0, 2, 2, 2, 2, 2, 2],
        },
        {
          title: `12.7 never submit, final policy held out (${ctx.smoke ? 2 : 16} per task, seed 7)`,
          columns: ['run', 'held-out pass', 'submit rate', 'turns', 'reward'],
          rows: [['wrong_submit -1', heldout.pass_rate, heldout.submit_rate, heldout.turns, heldout.reward]],
          digits: [0, 3, 3, 2, 3],
        },
      ],
      figures: [
        {
          title: 'never submit: submit rate, pass and reward per step',
          kind: 'curves',
          x: h.map((r) => r.step),
          series: (['submit_rate', 'pass_rate', 'reward'] as const).map((k) => ({
            name: k,
            values: h.map((r) => r[k]),
          })),
        },
      ],
      runs: [run.runDir],
      notes: [],
    };
  },
};
