/**
 * The run view's per-step charts (d3): one chart per step figure of a run folder (docs/runs.md's
 * step figures), x the step, one line per series, reference lines where the field has a threshold
 * (k3 1e-3, NeMo-RL's 1.05 for mean_exp_abs), the unit on the y axis and each figure's name in the
 * trainers' own logs in its tooltip. Every point is a button: clicking it picks that step. Pure:
 * data in, DOM out.
 */
import { area, axisBottom, line, scaleLinear, select } from 'd3';
import type { RunStepRow } from '../../src/protocol/runs.js';
import { drawXLabel, drawYAxis, SVG, yAxisLeft } from '../axes.js';
import { el } from '../dom.js';
import { RULE_PATTERNS, type RulePattern, ruleClasses, ruleStyle } from './rule-style.js';

/** A series of a chart: a name and its value at a step (null: none recorded there). */
export interface FigureSeries {
  name: string;
  value: (s: RunStepRow) => number | null;
  /** A band drawn around the line (mean ± sd). */
  band?: (s: RunStepRow) => [number, number] | null;
  /**
   * The lint rule the series counts (the findings chart): its look is the rule's own, the same in
   * every run (rule-style.ts), not its place among the series.
   */
  rule?: string;
}

/** A series' classes: a rule's own look, else the series palette's slot by its place `k`. */
const seriesClasses = (s: FigureSeries, k: number) => (s.rule ? ruleClasses(s.rule) : `series-c${k % 8}`);

/** A chart of the run view. */
export interface FigureSpec {
  id: string;
  title: string;
  /** The y axis label, with its unit. */
  unit: string;
  /** What the figure is, and its name in the trainers' logs (the tooltip). */
  about: string;
  series: FigureSeries[];
  refs?: { value: number; label: string }[];
  /** Drawn as stacked bars (the series add up: counts by rule) instead of lines. */
  stacked?: boolean;
}

const mm = (k: keyof RunStepRow['summary']['mismatch']) => (s: RunStepRow) =>
  k === 'tokens' ? s.summary.mismatch.tokens : s.summary.mismatch[k];

/** The fixed figures (the findings chart, one line per rule, is built from the rows: findingsFigure). */
export const FIGURES: FigureSpec[] = [
  {
    id: 'k3',
    title: 'mismatch k3',
    unit: 'k3 (nats)',
    about:
      'k3 = mean(r − 1 − d), d = log p_trainer − log p_sampler over trained tokens with both log-probs. prime-rl: mismatch_kl; verl: rollout_corr/k3_kl. Reference line: 1e-3.',
    series: [{ name: 'k3', value: mm('k3') }],
    refs: [{ value: 1e-3, label: 'k3 = 1e-3' }],
  },
  {
    id: 'mean_exp_abs',
    title: 'mismatch mean exp|d|',
    unit: 'mean exp|d| (ratio)',
    about:
      'mean(exp|d|) over trained tokens with both log-probs. NeMo-RL: token_mult_prob_error. Reference line: 1.05.',
    series: [{ name: 'mean exp|d|', value: mm('mean_exp_abs') }],
    refs: [{ value: 1.05, label: 'NeMo-RL 1.05' }],
  },
  {
    id: 'k1',
    title: 'mismatch k1',
    unit: 'k1 (nats)',
    about:
      'k1 = mean(−d), an estimate of KL(sampler ‖ trainer). verl: rollout_corr/kl; Tinker: optim/kl_sample_train_v1.',
    series: [{ name: 'k1', value: mm('k1') }],
  },
  {
    id: 'abs_d',
    title: 'mismatch |d|',
    unit: '|d| (nats)',
    about:
      'mean and largest |d| per step. slime: train/train_rollout_logprob_abs_diff; SkyRL: policy/rollout_train_logprobs_abs_diff_mean and _max; TRL: sampling/sampling_logp_difference/mean and /max.',
    series: [
      { name: 'mean |d|', value: mm('abs_mean') },
      { name: 'max |d|', value: mm('abs_max') },
    ],
  },
  {
    id: 'reward',
    title: 'reward',
    unit: 'reward (mean ± sd)',
    about:
      'mean and population standard deviation of the rewards of the step’s samples (the band: mean ± sd).',
    series: [
      {
        name: 'reward',
        value: (s) => s.summary.reward_mean,
        band: (s) =>
          s.summary.reward_mean === null || s.summary.reward_std === null
            ? null
            : [s.summary.reward_mean - s.summary.reward_std, s.summary.reward_mean + s.summary.reward_std],
      },
    ],
  },
  {
    id: 'zero_std',
    title: 'zero-std groups',
    unit: 'fraction of groups',
    about:
      'groups whose rewards are all equal (no GRPO signal). miles dashboard: zero_std_group_frac. Advisory above 0.5.',
    series: [{ name: 'zero-std groups', value: (s) => s.summary.zero_std_groups }],
    refs: [{ value: 0.5, label: 'advisory 0.5' }],
  },
  {
    id: 'truncated',
    title: 'truncated samples',
    unit: 'fraction of samples',
    about:
      'samples cut at the length limit, among those where it is known. miles dashboard: truncated_frac. Advisory above 0.25.',
    series: [{ name: 'truncated', value: (s) => s.summary.truncated }],
    refs: [{ value: 0.25, label: 'advisory 0.25' }],
  },
  {
    id: 'length',
    title: 'response length',
    unit: 'tokens (loss mask 1)',
    about: 'trained tokens (loss mask 1) per sample, mean and largest, and all tokens per sample.',
    series: [
      { name: 'trained mean', value: (s) => s.summary.response_tokens_mean },
      { name: 'trained max', value: (s) => s.summary.response_tokens_max },
      { name: 'all tokens mean', value: (s) => s.summary.tokens_mean },
    ],
  },
  {
    id: 'turns',
    title: 'turns',
    unit: 'turns per sample',
    about: 'contiguous runs of trained tokens per sample (policy turns).',
    series: [{ name: 'turns', value: (s) => s.summary.turns_mean }],
  },
  {
    id: 'versions',
    title: 'mixed weight versions',
    unit: 'fraction of samples',
    about:
      'samples whose tokens come from more than one policy version (where the dump records one). miles dashboard: mixed_version_frac.',
    series: [{ name: 'mixed', value: (s) => s.summary.mixed_versions }],
  },
];

/**
 * The findings chart: a bar segment per lint rule that fired in any step (0 where it did not), each
 * rule in its own fixed hue and pattern (rule-style.ts), named by the chart's legend.
 */
export function findingsFigure(rows: readonly RunStepRow[]): FigureSpec {
  const rules = [...new Set(rows.flatMap((r) => Object.keys(r.summary.findings)))].sort();
  return {
    id: 'findings',
    title: 'lint findings per rule',
    unit: 'findings',
    about: 'mask-lint findings of the step, by rule (docs/lint-rules.md). No trainer logs these.',
    series: rules.map((rule) => ({ name: rule, rule, value: (s) => s.summary.findings[rule] ?? 0 })),
    stacked: true,
  };
}

/** A value for a tooltip: a whole number as it is, else 4 significant digits (exponent below 1e-3). */
export const fmt = (x: number) =>
  Number.isInteger(x)
    ? String(x)
    : x === 0
      ? '0'
      : Math.abs(x) >= 1000
        ? String(Math.round(x))
        : Math.abs(x) < 1e-3
          ? x.toExponential(2)
          : x.toPrecision(4);

const M = { top: 12, right: 12, bottom: 36, left: 58 };

/**
 * The y domain: the values, their bands and the reference lines, from zero when they are all above
 * it. A flat series (one step, or every value alike) gets room up to zero when it is below it, else
 * up to 1: never a span of rounding error (whose ticks would be ten digits long).
 */
function yDomain(spec: FigureSpec, rows: readonly RunStepRow[]): [number, number] {
  const vals: number[] = [];
  for (const s of spec.series)
    for (const r of rows) {
      const v = s.value(r);
      if (v !== null && Number.isFinite(v)) vals.push(v);
      const b = s.band?.(r);
      if (b) vals.push(...b);
    }
  for (const ref of spec.refs ?? []) vals.push(ref.value);
  if (spec.stacked) for (const r of rows) vals.push(spec.series.reduce((n, s) => n + (s.value(r) ?? 0), 0));
  let lo = Math.min(0, ...vals);
  let hi = Math.max(...vals);
  if (!Number.isFinite(lo)) lo = 0;
  if (!Number.isFinite(hi) || hi - lo < 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi)))
    hi = lo < 0 ? 0 : lo + 1;
  return [lo, hi];
}

/**
 * One chart as `figure.chart.run-chart[data-figure=id]`: a titled SVG with labelled axes, a
 * `path.curve` per series in `g.series.series-cN`, a `circle.pt` button per point (its <title>:
 * series, step, value, unit), `line.ref` + `text.ref-label` per reference line, and a legend
 * when there are several series (a stacked chart's always: its colours name rules). A stacked
 * chart's series are `g.series[data-rule]` with their rule's classes, and its `<defs>` the fill
 * patterns. `onPick(step)` on a point's click or Enter. `empty`: what a chart with no series says
 * (default "none in any step").
 */
export function renderStepChart(
  doc: Document,
  spec: FigureSpec,
  rows: readonly RunStepRow[],
  onPick: (step: number) => void,
  size = { width: 480, height: 210 },
  empty = 'none in any step',
): HTMLElement {
  const { width, height } = size;
  const fig = el(doc, 'figure', 'chart run-chart');
  fig.dataset.figure = spec.id;
  const head = el(doc, 'figcaption', 'run-chart-title', spec.title);
  head.title = spec.about;
  fig.appendChild(head);
  const steps = rows.map((r) => r.step);
  const x0 = Math.min(...steps);
  const x1 = Math.max(...steps);
  // Bars are centred on their step: half a step of room on each side keeps them off the axis.
  const pad = spec.stacked ? 0.5 : 0;
  const y = scaleLinear()
    .domain(yDomain(spec, rows))
    .nice()
    .range([height - M.bottom, M.top]);
  // Wide tick labels ("−0.015") move the axis right, clear of its rotated label.
  const left = yAxisLeft(y, 12, M.left);
  const x = scaleLinear()
    .domain([x0 - pad, Math.max(x1, x0 + 1) + pad])
    .range([left, width - M.right]);
  const svg = doc.createElementNS(SVG, 'svg') as SVGSVGElement;
  const root = select(svg)
    .attr('class', 'curve-chart')
    .attr('viewBox', `0 0 ${width} ${height}`)
    .attr('role', 'img')
    .attr('aria-label', `${spec.title} per step (${spec.unit})`);
  root.append('title').text(spec.about);
  root
    .append('g')
    .attr('class', 'axis x-axis')
    .attr('transform', `translate(0,${height - M.bottom})`)
    .call(
      // A few steps: a tick at each; more: about 6, whole steps only.
      steps.length <= 8
        ? axisBottom(x)
            .tickValues(steps)
            .tickFormat((d) => String(d))
        : axisBottom(x)
            .ticks(Math.min(6, Math.max(1, x1 - x0)))
            .tickFormat((d) => (Number.isInteger(Number(d)) ? String(d) : '')),
    );
  drawXLabel(root, { left, right: width - M.right, y: height - 4 }, 'step');
  drawYAxis(root, y, { left, labelX: 12, top: M.top, bottom: height - M.bottom }, spec.unit);
  for (const ref of spec.refs ?? []) {
    const g = root.append('g').attr('class', 'ref');
    g.append('line')
      .attr('class', 'ref-line')
      .attr('x1', left)
      .attr('x2', width - M.right)
      .attr('y1', y(ref.value))
      .attr('y2', y(ref.value));
    g.append('text')
      .attr('class', 'ref-label')
      .attr('x', width - M.right - 2)
      .attr('y', y(ref.value) - 3)
      .attr('text-anchor', 'end')
      .text(ref.label);
  }
  if (spec.stacked) drawStacked(root, spec, rows, { x, y }, onPick, patternDefs(root, spec.id));
  else
    spec.series.forEach((s, k) => {
      drawSeries(root, s, k, rows, { x, y }, spec.unit, onPick);
    });
  fig.appendChild(svg);
  if (spec.series.length > 1 || (spec.stacked && spec.series.length)) fig.appendChild(legend(doc, spec));
  if (!spec.series.length) fig.appendChild(el(doc, 'p', 'muted', empty));
  return fig;
}

type Scales = { x: (v: number) => number; y: (v: number) => number };

/** A series' band, line and point buttons into the chart. */
function drawSeries(
  root: ReturnType<typeof select<SVGSVGElement, unknown>>,
  s: FigureSeries,
  k: number,
  rows: readonly RunStepRow[],
  { x, y }: Scales,
  unit: string,
  onPick: (step: number) => void,
): void {
  const pts = rows
    .map((r) => ({ step: r.step, value: s.value(r), band: s.band?.(r) ?? null }))
    .filter((p): p is { step: number; value: number; band: [number, number] | null } => p.value !== null);
  const g = root
    .append('g')
    .attr('class', `series ${seriesClasses(s, k)}`)
    .attr('data-name', s.name);
  const banded = pts.filter((p) => p.band);
  if (banded.length)
    g.append('path')
      .attr('class', 'band')
      .attr(
        'd',
        area<(typeof pts)[number]>()
          .x((p) => x(p.step))
          .y0((p) => y(p.band![0]))
          .y1((p) => y(p.band![1]))(banded) ?? '',
      );
  g.append('path')
    .attr('class', 'curve')
    .attr(
      'd',
      line<(typeof pts)[number]>()
        .x((p) => x(p.step))
        .y((p) => y(p.value))(pts) ?? '',
    );
  for (const p of pts) {
    const c = g
      .append('circle')
      .attr('class', 'pt run-pt')
      .attr('cx', x(p.step))
      .attr('cy', y(p.value))
      .attr('r', 4)
      .attr('tabindex', 0)
      .attr('role', 'button')
      .attr('data-step', p.step)
      .attr('aria-label', `${s.name} at step ${p.step}: ${fmt(p.value)}; open the step's samples`);
    c.append('title').text(
      `${s.name} · step ${p.step}: ${fmt(p.value)} ${unit}\nclick: open the step's samples`,
    );
    c.on('click', () => onPick(p.step));
    c.on('keydown', (e: KeyboardEvent) => {
      if (e.key === 'Enter' || e.key === ' ') onPick(p.step);
    });
  }
}

/** Charts drawn so far: each chart's pattern ids are unique in the page. */
let chartsDrawn = 0;

/**
 * The fill patterns of a stacked chart, in its `<defs>`: per pattern but 'solid' a
 * `pattern#<figure>-<n>-<name>` of `.pattern-ink` marks (the page's background, over the bar's hue).
 * Returns the `fill` of each pattern (null: solid, no overlay).
 */
function patternDefs(
  root: ReturnType<typeof select<SVGSVGElement, unknown>>,
  figure: string,
): Record<RulePattern, string | null> {
  const n = ++chartsDrawn;
  const defs = root.append('defs');
  const out = { solid: null } as Record<RulePattern, string | null>;
  for (const p of RULE_PATTERNS) {
    if (p === 'solid') continue;
    const id = `${figure}-${n}-${p}`;
    const pat = defs
      .append('pattern')
      .attr('id', id)
      .attr('class', `fill-pattern pattern-${p}`)
      .attr('patternUnits', 'userSpaceOnUse')
      .attr('width', 6)
      .attr('height', 6);
    if (p === 'hatch')
      pat
        .attr('patternTransform', 'rotate(45)')
        .append('rect')
        .attr('class', 'pattern-ink')
        .attr('width', 2)
        .attr('height', 6);
    else if (p === 'dots')
      pat.append('circle').attr('class', 'pattern-ink').attr('cx', 3).attr('cy', 3).attr('r', 1.6);
    else pat.append('rect').attr('class', 'pattern-ink').attr('width', 6).attr('height', 2);
    out[p] = `url(#${id})`;
  }
  return out;
}

/**
 * Stacked bars: per step a `rect.bar` per series with a value above 0 (in `g.series`, with the
 * series' classes and `data-rule`), stacked in series order, each titled with its series, step and
 * value; a bar whose rule has a pattern gets a `rect.bar-pattern` over it (`fills`, from
 * patternDefs). A click picks the step.
 */
function drawStacked(
  root: ReturnType<typeof select<SVGSVGElement, unknown>>,
  spec: FigureSpec,
  rows: readonly RunStepRow[],
  { x, y }: Scales,
  onPick: (step: number) => void,
  fills: Record<RulePattern, string | null>,
): void {
  const steps = rows.map((r) => r.step);
  const gap = steps.length > 1 ? Math.min(...steps.slice(1).map((s, i) => x(s) - x(steps[i]))) : 40;
  const w = Math.max(2, Math.min(28, gap * 0.6));
  const groups = spec.series.map((s, k) => {
    const g = root
      .append('g')
      .attr('class', `series ${seriesClasses(s, k)}`)
      .attr('data-name', s.name);
    if (s.rule) g.attr('data-rule', s.rule);
    return g;
  });
  const overlay = spec.series.map((s) => (s.rule ? fills[ruleStyle(s.rule)?.pattern ?? 'hatch'] : null));
  for (const r of rows) {
    let base = 0;
    spec.series.forEach((s, k) => {
      const v = s.value(r) ?? 0;
      if (v <= 0) return;
      const rect = groups[k]
        .append('rect')
        .attr('class', 'bar run-pt')
        .attr('x', x(r.step) - w / 2)
        .attr('width', w)
        .attr('y', y(base + v))
        .attr('height', Math.max(1, y(base) - y(base + v)))
        .attr('tabindex', 0)
        .attr('role', 'button')
        .attr('data-step', r.step)
        .attr('aria-label', `${s.name} at step ${r.step}: ${v}; open the step's samples`);
      rect
        .append('title')
        .text(`${s.name} · step ${r.step}: ${fmt(v)} ${spec.unit}\nclick: open the step's samples`);
      rect.on('click', () => onPick(r.step));
      rect.on('keydown', (e: KeyboardEvent) => {
        if (e.key === 'Enter' || e.key === ' ') onPick(r.step);
      });
      const fill = overlay[k];
      if (fill)
        groups[k]
          .append('rect')
          .attr('class', 'bar-pattern')
          .attr('x', rect.attr('x'))
          .attr('width', w)
          .attr('y', rect.attr('y'))
          .attr('height', rect.attr('height'))
          .attr('fill', fill)
          .attr('aria-hidden', 'true');
      base += v;
    });
  }
}

/**
 * The legend: a swatch and a name per series; a stacked chart's swatch is a `span.bar-swatch`
 * in the series' hue and pattern, its item `[data-rule]` for a rule's series.
 */
function legend(doc: Document, spec: FigureSpec): HTMLElement {
  const box = el(doc, 'div', 'curve-legend run-legend');
  spec.series.forEach((s, k) => {
    const item = el(doc, 'span', `legend-item ${seriesClasses(s, k)}`);
    if (s.rule) item.dataset.rule = s.rule;
    item.append(
      el(doc, 'span', spec.stacked ? 'bar-swatch' : 'line-swatch'),
      el(doc, 'span', '', ` ${s.name}`),
    );
    box.appendChild(item);
  });
  return box;
}
