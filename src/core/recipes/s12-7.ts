/** Section 12.7: the design questions: immediate submit, never submit, truncation, context overflow. */
import { makeEnv, parseCall } from '../gym/env.js';
import { callTexts, type Trajectory } from '../gym/episode.js';
import { makeReward } from '../gym/rewards.js';
import { observationOf, runScripted, type ScriptedPolicy } from '../gym/scripted.js';
import { inferOp, makeTasks, OPS, randomizeNames } from '../gym/tasks.js';
import { maskedTruncationAdvantages } from '../rl/advantages.js';
import { envOptions, type RLConfig } from '../rl/config.js';
import { behaviorStats, sampleGroups } from '../rl/grpo.js';
import { type AdvantageFn, groupAdvantageFn, type StepRecord } from '../rl/train.js';
import { Rng } from '../rng.js';
import {
  armConfig,
  evalStats,
  finishArm,
  loadBase,
  type PolicyArmRun,
  stepWindows,
  trainPolicyArm,
  windowMeansOf,
} from './policy-arms.js';
import type { Recipe, RecipeContext, Table } from './types.js';

// ---------------------------------------------------------------------------------------------
// Immediate submit
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Never submit
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------------

/** Section 12.7's masked truncation as a trainer AdvantageFn: baseline over submitted episodes, 0 for the rest. */
export const maskedTruncation: AdvantageFn = (trajs, cfg) =>
  maskedTruncationAdvantages(
    trajs.map((t) => t.reward),
    trajs.map((t) => t.info.submitted),
    cfg.groupSize,
  );

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

/** Mean of the numbers that are not NaN (NaN if none). */
export function nanMean(xs: readonly number[]): number {
  const ys = xs.filter((x) => !Number.isNaN(x));
  return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Number.NaN;
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
      figures: [
        {
          title: 'truncation: submit rate per step',
          kind: 'curves',
          x: done[0]?.history.map((h) => h.step) ?? [],
          series: done.map((r) => ({ name: r.arm.name, values: r.history.map((h) => h.submit_rate) })),
        },
      ],
      runs: done.map((r) => r.runDir),
      notes: [],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// Context overflow
// ---------------------------------------------------------------------------------------------

/**
 * A long-horizon scripted policy: reads until two turns remain, then edits with the operation
 * `inferOp` reads off the last observation it got (the first operation if none shows), then
 * submits. It makes the 256-token context overflow once the budget allows enough reads.
 */
export const longReader: ScriptedPolicy = {
  name: 'long reader',
  next(ep) {
    const left = ep.env.maxTurns - ep.nCalls;
    if (left > 2) return '<call> read </call>';
    if (left === 2) {
      const op = ep.nCalls > 0 ? inferOp(observationOf(ep, ep.nCalls - 1)) : null;
      return `<call> edit ${op ?? OPS[0]} </call>`;
    }
    return '<call> submit </call>';
  },
};

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
