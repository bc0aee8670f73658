import type { Trajectory } from '../gym/episode.js';
import { makeReward } from '../gym/rewards.js';
import { groupAdvantageFn } from '../rl/train.js';
import { maskedTruncation } from '../rl/truncation.js';
import {
  evalStats,
  finishArm,
  type PolicyArmRun,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import {
  DIP_COLUMNS,
  dipRow,
  neverConfig,
  type SubmitEvidence,
  submitEvidence,
} from './s12-7-never-submit.js';
import { nanMean, stepCurves } from './train-arms.js';
import type { Recipe, Table } from './types.js';

export interface AdvantageSignal {
  /** Share of episodes whose advantage is not 0. */
  nonzero: number;
  /** Share of unsubmitted episodes, and their mean advantage (NaN when there are none). */
  unsubmitted: number;
  unsubmittedAdvantage: number;
}

/** What an episode-level advantage vector tells the update about submitting and not submitting. */
export function advantageSignal(
  trajs: readonly Pick<Trajectory, 'info'>[],
  advantages: readonly number[],
): AdvantageSignal {
  const n = Math.max(trajs.length, 1);
  const unsub = advantages.filter((_, i) => !trajs[i].info.submitted);
  return {
    nonzero: advantages.filter((a) => Math.abs(a) > 1e-6).length / n,
    unsubmitted: unsub.length / n,
    unsubmittedAdvantage: unsub.length ? unsub.reduce((a, b) => a + b, 0) / unsub.length : Number.NaN,
  };
}

/** Rows (arm, statistic) by step window: the mean of each statistic of each arm's per-step records. */
function armWindowTable<T>(
  title: string,
  done: readonly PolicyArmRun[],
  windows: ReturnType<typeof stepWindows>,
  perStep: ReadonlyMap<string, readonly T[]>,
  stats: [string, (x: T) => number][],
): Table {
  return {
    title,
    columns: ['arm', 'statistic', ...windows.map((w) => w.label)],
    rows: done.flatMap((r) => {
      const xs = perStep.get(r.arm.name) ?? [];
      return stats.map(([label, f]) => [
        r.arm.name,
        label,
        ...windows.map((w) => nanMean(xs.slice(w.from, w.to).map(f))),
      ]);
    }),
    digits: [0, 0, ...windows.map(() => 2)],
  };
}

export const recipe127Truncation: Recipe = {
  name: '12.7-truncation',
  section: '12.7',
  title:
    'Truncated episodes under wrong_submit = -1: scored 0, masked from the loss, or scored -1 like a failed submission',
  mechanism:
    'masking truncated episodes makes procrastination free: the submit rate falls and stays low; scoring them -1 removes the incentive to wait',
  trains: true,
  async run(ctx) {
    const cfg = neverConfig(ctx);
    const done: PolicyArmRun[] = [];
    const rows: (string | number)[][] = [];
    const signal = new Map<string, AdvantageSignal[]>();
    const evidence = new Map<string, SubmitEvidence[]>();
    // Option (a) of the chapter: running out of turns scores like a failed submission.
    const failCfg = neverConfig(ctx, { reward: makeReward('hidden', { wrongSubmit: -1, unsubmitted: -1 }) });
    for (const arm of [
      { name: 'truncation = 0', cfg, advantages: groupAdvantageFn },
      { name: 'truncation masked', cfg, advantages: maskedTruncation },
      { name: 'truncation = -1', cfg: failCfg, advantages: groupAdvantageFn },
    ]) {
      const perStep: AdvantageSignal[] = [];
      const race: SubmitEvidence[] = [];
      signal.set(arm.name, perStep);
      evidence.set(arm.name, race);
      const run = await trainPolicyArm(ctx, '12.7-truncation', {
        ...arm,
        // The advantage functions are pure: recomputing them shows what the update saw.
        onStep: (_rec, trajs) => {
          perStep.push(advantageSignal(trajs, arm.advantages(trajs, arm.cfg) as number[]));
          race.push(submitEvidence(trajs, ctx.tok));
        },
      });
      if (!run) break;
      const s = evalStats(ctx, run.policy, arm.cfg);
      rows.push([arm.name, s.pass_rate, s.turns, s.submit_rate]);
      finishArm(run, { heldout: s });
      done.push(run);
    }
    const windows = stepWindows(done[0]?.history.length ?? 0, 10);
    return {
      tables: [
        {
          title: `12.7 truncation under wrong_submit = -1: held out (${ctx.smoke ? 2 : 16} per task, seed 7; training seed ${ctx.seed})`,
          columns: ['arm', 'held-out pass', 'turns', 'submit rate'],
          rows,
          digits: [0, 3, 2, 3],
        },
        {
          title: '12.7 truncation: batch submit rate by 10-step window',
          columns: ['arm', ...windows.map((w) => w.label)],
          rows: done.map((r) => [r.arm.name, ...windowMeansOf(r.history, 'submit_rate', 10)]),
          digits: [0, ...windows.map(() => 2)],
        },
        {
          title: '12.7 truncation: the submit-rate dip of each arm',
          columns: ['arm', ...DIP_COLUMNS],
          rows: done.map((r) => dipRow(r.arm.name, r.history)),
          digits: [0, 2, 2, 0, 2, 2, 2, 2],
        },
        armWindowTable(
          '12.7 truncation: what the update sees, by 10-step window (episodes with a nonzero advantage; unsubmitted share and their mean advantage)',
          done,
          windows,
          signal,
          [
            ['nonzero advantage', (x) => x.nonzero],
            ['unsubmitted', (x) => x.unsubmitted],
            ['advantage of unsubmitted', (x) => x.unsubmittedAdvantage],
          ],
        ),
        armWindowTable(
          '12.7 truncation: does the policy know the fix, and does it submit it? (by 10-step window)',
          done,
          windows,
          evidence,
          [
            ['edit fixes the bug', (x) => x.editAccuracy],
            ['submit after PASS', (x) => x.submitAfterPass],
            ['submit after FAIL', (x) => x.submitAfterFail],
          ],
        ),
      ],
      figures: [stepCurves('truncation: submit rate per step', done, 'submit_rate')],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};
