/**
 * Per-step figures of a run and its health advisories. Pure computation over normalised samples
 * (sample.ts); reading files is step-scan.ts.
 *
 * A sample's facts (`factsOf`) are what is kept of it once read: where its line is, and its figures.
 * A step's summary (`StepSummaryAccumulator`) folds facts one at a time, so a step is summarised in
 * one streaming pass with one sample in memory:
 * - `sequences`: samples summarised (a prime-rl branch is one, as the trainer trains on each);
 * - `reward_mean`, `reward_std` (population) over the samples that carry a reward (`rewarded`);
 * - `groups`: groups (the sample's `group` id, where the format has one) with at least two rewarded
 *   samples; `zero_std_groups`: the fraction of those whose rewards are all exactly equal (zero
 *   standard deviation, so no GRPO signal); null without groups;
 * - `truncated`: the fraction of samples cut at the length limit, among those where it is known (the
 *   file says so, or the chat template shows the final assistant turn without its end marker);
 * - `response_tokens_mean` / `_max` (tokens with loss mask 1), `tokens_mean`, `turns_mean` (a turn: a
 *   contiguous run of mask 1);
 * - `weight_versions`: distinct policy versions among the samples that record one, and
 *   `mixed_versions`: the fraction of those samples whose tokens come from more than one version;
 * - `mismatch`: the train-inference mismatch of the step over the tokens mismatch.ts counts (k1, k3,
 *   abs_mean, abs_max, mean_exp_abs: the figures that add up across samples and files);
 * - `findings`: lint findings by rule (rules without findings left out).
 */
import * as v from 'valibot';
import { int, num, oneOf } from '../schema.js';
import { sampleDeltas } from './mismatch.js';
import type { Owners } from './owners.js';
import type { Finding, RuleId } from './rules.js';
import type { DumpSample } from './sample.js';

const maybe = v.nullable(v.number());

/** What is kept of one sample (the index cache stores these): its line, and its per-sample figures. */
export const SampleFactsSchema = v.object({
  /** 0-based line of the record in its file, and the line's byte offset and length. */
  record: v.number(),
  offset: v.number(),
  bytes: v.number(),
  tokens: v.number(),
  /** Tokens with loss mask 1, and the contiguous runs of them. */
  trained: v.number(),
  turns: v.number(),
  reward: maybe,
  group: maybe,
  /** 1 cut at the length limit, 0 not, null unknown. */
  truncated: maybe,
  version_min: maybe,
  version_max: maybe,
  /** The mismatch sums over the sample's counted tokens: n, Σd, Σ|d|, Σ(r − 1 − d), Σexp|d|, max |d|. */
  mm_n: v.number(),
  mm_d: v.number(),
  mm_abs: v.number(),
  mm_k3: v.number(),
  mm_exp_abs: v.number(),
  mm_abs_max: v.number(),
});
export type SampleFacts = v.InferOutput<typeof SampleFactsSchema>;

/** The facts of a sample, given its owners (from the lint) and its line's offset and length. */
export function factsOf(s: DumpSample, owners: Owners, line: { offset: number; bytes: number }): SampleFacts {
  let trained = 0;
  let turns = 0;
  for (let i = 0; i < s.ids.length; i++)
    if (s.lossMask[i]) {
      trained++;
      if (i === 0 || !s.lossMask[i - 1]) turns++;
    }
  const last = owners.turns[owners.turns.length - 1];
  const truncated =
    s.truncated !== undefined
      ? Number(s.truncated)
      : owners.source === 'template' && last
        ? Number(last.role === 'assistant' && last.endMarker < 0)
        : null;
  const vs = s.weightVersions?.length ? s.weightVersions : undefined;
  const d = sampleDeltas(s, owners.source === 'mask' ? undefined : owners.owner).d;
  const mm = { mm_n: 0, mm_d: 0, mm_abs: 0, mm_k3: 0, mm_exp_abs: 0, mm_abs_max: 0 };
  for (let i = 0; i < d.length; i++) {
    const x = d[i];
    if (Number.isNaN(x)) continue;
    const a = Math.abs(x);
    mm.mm_n++;
    mm.mm_d += x;
    mm.mm_abs += a;
    mm.mm_k3 += Math.expm1(x) - x;
    mm.mm_exp_abs += Math.exp(a);
    if (a > mm.mm_abs_max) mm.mm_abs_max = a;
  }
  return {
    record: s.record,
    offset: line.offset,
    bytes: line.bytes,
    tokens: s.ids.length,
    trained,
    turns,
    reward: s.reward ?? null,
    group: s.group ?? null,
    truncated,
    version_min: vs ? Math.min(...vs) : null,
    version_max: vs ? Math.max(...vs) : null,
    ...mm,
  };
}

/** The step mismatch figures that add up across samples (null where no token counts). */
export interface StepMismatchFigures {
  tokens: number;
  k1: number | null;
  k3: number | null;
  abs_mean: number | null;
  abs_max: number | null;
  mean_exp_abs: number | null;
}

/** A step's figures (the module comment defines each). */
export interface StepSummary {
  sequences: number;
  rewarded: number;
  reward_mean: number | null;
  reward_std: number | null;
  groups: number;
  zero_std_groups: number | null;
  truncated: number | null;
  response_tokens_mean: number | null;
  response_tokens_max: number | null;
  tokens_mean: number | null;
  turns_mean: number | null;
  weight_versions: number | null;
  mixed_versions: number | null;
  mismatch: StepMismatchFigures;
  findings: Partial<Record<RuleId, number>>;
}

/** Folds samples' facts (and findings) into a step's summary, one at a time. */
export class StepSummaryAccumulator {
  private n = 0;
  private rewards = 0;
  private rewardSum = 0;
  private rewardSq = 0;
  private rewardShift: number | null = null;
  private readonly groups = new Map<number, { n: number; first: number; equal: boolean }>();
  private truncKnown = 0;
  private truncCount = 0;
  private trainedSum = 0;
  private trainedMax = 0;
  private tokenSum = 0;
  private turnSum = 0;
  private readonly versions = new Set<number>();
  private versioned = 0;
  private mixed = 0;
  private readonly mm = { n: 0, d: 0, abs: 0, k3: 0, expAbs: 0, absMax: 0 };
  private readonly rules = new Map<RuleId, number>();

  /** Add one sample's facts. */
  add(f: SampleFacts): void {
    this.n++;
    if (f.reward !== null) {
      // Sums of squares about the first reward: no cancellation when rewards sit far from 0.
      this.rewardShift ??= f.reward;
      const x = f.reward - this.rewardShift;
      this.rewards++;
      this.rewardSum += x;
      this.rewardSq += x * x;
      if (f.group !== null) {
        const g = this.groups.get(f.group);
        if (!g) this.groups.set(f.group, { n: 1, first: f.reward, equal: true });
        else {
          g.n++;
          if (f.reward !== g.first) g.equal = false;
        }
      }
    }
    if (f.truncated !== null) {
      this.truncKnown++;
      this.truncCount += f.truncated;
    }
    this.trainedSum += f.trained;
    this.trainedMax = Math.max(this.trainedMax, f.trained);
    this.tokenSum += f.tokens;
    this.turnSum += f.turns;
    if (f.version_min !== null && f.version_max !== null) {
      this.versioned++;
      this.versions.add(f.version_min).add(f.version_max);
      if (f.version_min !== f.version_max) this.mixed++;
    }
    const m = this.mm;
    m.n += f.mm_n;
    m.d += f.mm_d;
    m.abs += f.mm_abs;
    m.k3 += f.mm_k3;
    m.expAbs += f.mm_exp_abs;
    m.absMax = Math.max(m.absMax, f.mm_abs_max);
  }

  /** Count findings by rule. */
  addFindings(findings: readonly Finding[]): void {
    for (const x of findings) this.rules.set(x.rule, (this.rules.get(x.rule) ?? 0) + 1);
  }

  finish(): StepSummary {
    const n = this.n;
    const per = (sum: number, count: number) => (count === 0 ? null : sum / count);
    const k = this.rewards;
    const mean = per(this.rewardSum, k);
    let groups = 0;
    let flat = 0;
    for (const g of this.groups.values())
      if (g.n >= 2) {
        groups++;
        if (g.equal) flat++;
      }
    const m = this.mm;
    const findings: Partial<Record<RuleId, number>> = {};
    for (const [rule, c] of [...this.rules].sort((a, b) => (a[0] < b[0] ? -1 : 1))) findings[rule] = c;
    return {
      sequences: n,
      rewarded: k,
      reward_mean: mean === null ? null : mean + (this.rewardShift ?? 0),
      reward_std: mean === null ? null : Math.sqrt(Math.max(0, this.rewardSq / k - mean * mean)),
      groups,
      zero_std_groups: per(flat, groups),
      truncated: per(this.truncCount, this.truncKnown),
      response_tokens_mean: per(this.trainedSum, n),
      response_tokens_max: n === 0 ? null : this.trainedMax,
      tokens_mean: per(this.tokenSum, n),
      turns_mean: per(this.turnSum, n),
      weight_versions: this.versioned === 0 ? null : this.versions.size,
      mixed_versions: per(this.mixed, this.versioned),
      mismatch: {
        tokens: m.n,
        k1: per(-m.d, m.n),
        k3: per(m.k3, m.n),
        abs_mean: per(m.abs, m.n),
        abs_max: m.n === 0 ? null : m.absMax,
        mean_exp_abs: per(m.expAbs, m.n),
      },
      findings,
    };
  }
}

// --- health advisories ------------------------------------------------------------------------

/** The advisories' thresholds (adjustable; ADVISORY_DEFAULTS holds the defaults, docs/runs.md explains them). */
export const AdvisoryThresholdsSchema = v.strictObject({
  /** zero-std-groups: a step's `zero_std_groups` above this. */
  zero_std_groups: num(0, 1),
  /** truncation: a step's `truncated` above this. */
  truncated: num(0, 1),
  /** mask-onset: a rule's first findings come after at least this many steps without any. */
  onset_clean_steps: int(1, 1_000_000),
  /** mismatch-rising: the figure, the window of last steps, the ratio of medians and the floor. */
  rising_figure: oneOf(['k3', 'abs_mean'] as const),
  rising_window: int(4, 1_000_000),
  rising_ratio: num(1, Number.MAX_VALUE, { min: true }),
  rising_floor: num(0, Number.MAX_VALUE),
});
export type AdvisoryThresholds = v.InferOutput<typeof AdvisoryThresholdsSchema>;

export const ADVISORY_DEFAULTS: AdvisoryThresholds = {
  zero_std_groups: 0.5,
  truncated: 0.25,
  onset_clean_steps: 2,
  rising_figure: 'k3',
  rising_window: 8,
  rising_ratio: 2,
  rising_floor: 1e-4,
};

export const ADVISORY_IDS = ['zero-std-groups', 'truncation', 'mask-onset', 'mismatch-rising'] as const;
export type AdvisoryId = (typeof ADVISORY_IDS)[number];

/** A health advisory: what holds, and the steps that show it with the figure's value at each. */
export interface Advisory {
  id: AdvisoryId;
  /** One line. */
  message: string;
  evidence: { step: number; value: number }[];
  /** mask-onset: the lint rule. */
  rule?: RuleId;
  /** mismatch-rising: the medians of the earlier and the later half of the window. */
  before?: number;
  after?: number;
}

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * Whether a figure is rising across steps (pure). Over the last `window` points that have a value
 * (W of them, at least 4): the median of the last ⌊W/2⌋ values is at least `ratio` times the median
 * of the first ⌊W/2⌋ (the middle point of an odd W is in neither), and at least `floor`.
 * Returns the window's points and both medians when it holds, else null.
 */
export function rising(
  series: readonly { step: number; value: number | null }[],
  t: Pick<AdvisoryThresholds, 'rising_window' | 'rising_ratio' | 'rising_floor'>,
): { points: { step: number; value: number }[]; before: number; after: number } | null {
  const pts = series
    .filter((p): p is { step: number; value: number } => p.value !== null && Number.isFinite(p.value))
    .sort((a, b) => a.step - b.step)
    .slice(-t.rising_window);
  if (pts.length < 4) return null;
  const h = pts.length >> 1;
  const before = median(pts.slice(0, h).map((p) => p.value));
  const after = median(pts.slice(pts.length - h).map((p) => p.value));
  return after >= t.rising_ratio * before && after >= t.rising_floor ? { points: pts, before, after } : null;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/** One advisory per step figure above its threshold, with every step above it. */
function above(
  id: AdvisoryId,
  steps: readonly { step: number; summary: StepSummary }[],
  value: (s: StepSummary) => number | null,
  threshold: number,
  what: string,
): Advisory[] {
  const evidence = steps
    .map((s) => ({ step: s.step, value: value(s.summary) }))
    .filter((p): p is { step: number; value: number } => p.value !== null && p.value > threshold);
  if (!evidence.length) return [];
  const last = evidence[evidence.length - 1];
  return [
    {
      id,
      message: `${what} above ${pct(threshold)} at ${evidence.length} of ${steps.length} steps (latest step ${last.step}: ${pct(last.value)})`,
      evidence,
    },
  ];
}

/**
 * The health advisories of a run's steps (pure; steps in any order, summarised by StepSummaryAccumulator):
 * - zero-std-groups: steps whose `zero_std_groups` is above its threshold;
 * - truncation: steps whose `truncated` is above its threshold;
 * - mask-onset: a lint rule with no finding in its first `onset_clean_steps` (or more) steps and
 *   findings from some step on: evidence the steps with findings and their counts;
 * - mismatch-rising: `rising` holds for the mismatch figure (`rising_figure`) across the steps.
 */
export function advise(
  steps: readonly { step: number; summary: StepSummary }[],
  t: AdvisoryThresholds = ADVISORY_DEFAULTS,
): Advisory[] {
  const sorted = [...steps].sort((a, b) => a.step - b.step);
  const out: Advisory[] = [
    ...above(
      'zero-std-groups',
      sorted,
      (s) => s.zero_std_groups,
      t.zero_std_groups,
      'groups with all rewards equal (no GRPO signal)',
    ),
    ...above('truncation', sorted, (s) => s.truncated, t.truncated, 'truncated samples'),
  ];
  const rules = new Set(sorted.flatMap((s) => Object.keys(s.summary.findings) as RuleId[]));
  for (const rule of [...rules].sort()) {
    const counts = sorted.map((s) => ({ step: s.step, value: s.summary.findings[rule] ?? 0 }));
    const first = counts.findIndex((c) => c.value > 0);
    if (first < t.onset_clean_steps) continue;
    const evidence = counts.slice(first).filter((c) => c.value > 0);
    out.push({
      id: 'mask-onset',
      rule,
      message: `${rule} starts at step ${counts[first].step}: no finding in the ${first} steps before, ${evidence.reduce((n, c) => n + c.value, 0)} in ${evidence.length} of the ${counts.length - first} steps since`,
      evidence,
    });
  }
  const fig = t.rising_figure;
  const r = rising(
    sorted.map((s) => ({ step: s.step, value: s.summary.mismatch[fig] })),
    t,
  );
  if (r) {
    const a = r.points[0].step;
    const b = r.points[r.points.length - 1].step;
    out.push({
      id: 'mismatch-rising',
      message: `mismatch ${fig} rising over steps ${a}-${b}: median ${r.before.toPrecision(3)} in the earlier half, ${r.after.toPrecision(3)} in the later${r.before > 0 ? ` (x${(r.after / r.before).toPrecision(3)})` : ''}`,
      evidence: r.points,
      before: r.before,
      after: r.after,
    });
  }
  return out;
}
