/**
 * The training dashboard's render functions (d3): per-step curves of figure 12.2, one chart per
 * metric, one line per run; runs of one group (the seeds of an arm) are drawn as their mean with
 * a mean ± sd band; recipe tables as tables. Pure: data in, DOM out.
 */
import { area, axisBottom, extent, line, type ScaleLinear, type Selection, scaleLinear, select } from 'd3';
import {
  CURVE_METRICS,
  DIAGNOSTIC_METRICS,
  RUN_STATES,
  type RunSeries,
  type RunState,
  SMOOTHING,
  type Smoothing,
  type TableData,
} from '../../src/protocol/webview.js';
import { drawXLabel, drawYAxis, SVG } from '../axes.js';
import { el } from '../dom.js';

export const METRIC_LABELS: Record<string, string> = {
  pass_rate: 'pass rate',
  reads: 'reads per episode',
  tests: 'tests per episode',
  edits: 'edits per episode',
  turns: 'turns per episode',
  reward: 'reward',
  loss: 'loss',
  approx_kl: 'approx KL (old ‖ new)',
  entropy: 'entropy of the policy',
  clip_frac: 'clip fraction',
  grad_norm: 'gradient norm',
  invalid_per_turn: 'invalid calls per turn',
  value_loss: 'value loss (critic)',
  explained_variance: 'explained variance (critic)',
};

/**
 * An exponential moving average with TensorBoard's debiasing (the first points are not pulled
 * toward 0): s_t = w s_(t-1) + (1 - w) x_t, shown as s_t / (1 - w^t). Weight 0 returns the values.
 */
export function smooth(values: readonly number[], weight: number): number[] {
  if (weight <= 0) return [...values];
  let acc = 0;
  return values.map((x, t) => {
    acc = weight * acc + (1 - weight) * x;
    return acc / (1 - weight ** (t + 1));
  });
}

/** A value for a tooltip: 4 significant digits. */
const fmt = (x: number) =>
  Math.abs(x) >= 1000 || x === 0 ? String(Math.round(x * 1000) / 1000) : x.toPrecision(4);

/** The metrics that are a share of the step's episodes: shown with their count and n ("24 of 32"). */
export const RATE_METRICS: ReadonlySet<string> = new Set(['pass_rate']);
/** The metrics computed over the step's episodes (figure 12.2's): shown with their n. */
const OVER_EPISODES: ReadonlySet<string> = new Set(CURVE_METRICS);

/** The episodes behind a value and, for a rate, how many of them it counts; null where a run did not record it. */
export interface Tally {
  episodes: number;
  /** For a rate (RATE_METRICS): the episodes it counts (value × episodes, summed over runs); else null. */
  count: number | null;
}

/**
 * A value with its n, as a tooltip gives it (docs/visual-language.md: a rate carries its n): a rate
 * `0.7500 (24 of 32)`, a mean over episodes `2.125 (n=32)`, a group's mean
 * `0.7500 ± 0.05000 over 3 runs (72 of 96 in all)`; a rate whose n was not recorded says so.
 * Other metrics (the optimisation diagnostics) are the value alone.
 */
export function valueText(
  metric: string,
  value: number,
  tally: Tally | null,
  group: { sd: number; runs: number } | null = null,
): string {
  const head = group ? `${fmt(value)} ± ${fmt(group.sd)} over ${group.runs} runs` : fmt(value);
  const all = group ? ' in all' : '';
  if (RATE_METRICS.has(metric))
    return tally && tally.count !== null
      ? `${head} (${tally.count} of ${tally.episodes}${all})`
      : `${head} (n not recorded)`;
  if (OVER_EPISODES.has(metric) && tally) return `${head} (n=${tally.episodes}${all})`;
  return head;
}

/** The tally of runs' values at one step (or their held-out results): null unless every run recorded its episodes. */
function tallyOf(metric: string, parts: readonly { value: number; episodes: number | null }[]): Tally | null {
  if (!parts.length || parts.some((p) => p.episodes === null)) return null;
  const rate = RATE_METRICS.has(metric);
  let episodes = 0;
  let count = 0;
  for (const p of parts) {
    episodes += p.episodes ?? 0;
    count += Math.round(p.value * (p.episodes ?? 0));
  }
  return { episodes, count: rate ? count : null };
}

/** A drawable series: a single run, or a group's mean with its spread. */
export interface CurveSeries {
  name: string;
  /** Colour slot (0..7): the series palette's hue slot % 4, dotted from 4 on (media/dashboard.css). */
  color: number;
  /** Per step: the mean over the runs that have it, their sd and number `n`, and their episodes (`tally`). */
  points: { step: number; value: number; sd: number; n: number; tally: Tally | null }[];
  /** Runs averaged (1 for a single run). */
  runs: number;
  live: boolean;
  /** The member runs' own lines (for groups). */
  members: { name: string; points: { step: number; value: number }[] }[];
  /** The held-out result of this metric (a group's mean over the runs that have one); null: none. */
  heldout: number | null;
  /** The held-out episodes behind it (summed over those runs); null when a summary does not record them. */
  heldoutTally: Tally | null;
  /** How many of its runs are running, stopped, finished (runs whose state the host did not send are not counted). */
  states: Partial<Record<RunState, number>>;
}

/** Group runs (same `group`) into series: mean ± sd (sample sd) per step over the runs that have it. */
export function curveSeries(runs: readonly RunSeries[], metric: string): CurveSeries[] {
  const groups = new Map<string, RunSeries[]>();
  for (const r of runs) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  return [...groups].map(([name, members], color) => {
    const lines = members.map((r) => ({
      name: r.name,
      points: r.steps
        .map((step, i) => ({
          step,
          value: r.metrics[metric]?.[i] ?? null,
          episodes: r.episodes?.[i] ?? null,
        }))
        .filter((p): p is { step: number; value: number; episodes: number | null } => p.value !== null),
    }));
    const steps = [...new Set(lines.flatMap((l) => l.points.map((p) => p.step)))].sort((a, b) => a - b);
    const byStep = lines.map((l) => new Map(l.points.map((p) => [p.step, p])));
    const points = steps.map((step) => {
      const here = byStep.flatMap((m) => m.get(step) ?? []);
      const xs = here.map((p) => p.value);
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
      return { step, value: mean, sd, n: xs.length, tally: tallyOf(metric, here) };
    });
    const heldRuns = members.flatMap((m) => {
      const x = m.heldout?.[metric];
      const episodes = m.heldout?.episodes;
      return typeof x === 'number' && Number.isFinite(x)
        ? [
            {
              value: x,
              episodes: typeof episodes === 'number' && Number.isInteger(episodes) ? episodes : null,
            },
          ]
        : [];
    });
    const held = heldRuns.map((h) => h.value);
    return {
      name: members.length > 1 ? `${name} (mean ± sd of ${members.length})` : members[0].name,
      color: color % 8,
      points,
      runs: members.length,
      live: members.some((m) => m.live),
      members: members.length > 1 ? lines : [],
      heldout: held.length ? held.reduce((a, b) => a + b, 0) / held.length : null,
      heldoutTally: tallyOf(metric, heldRuns),
      states: stateCounts(members),
    };
  });
}

/** How many of `runs` are in each state (RUN_STATES order; states absent from the runs are left out). */
function stateCounts(runs: readonly RunSeries[]): Partial<Record<RunState, number>> {
  const out: Partial<Record<RunState, number>> = {};
  for (const s of RUN_STATES) {
    const n = runs.filter((r) => r.state === s).length;
    if (n) out[s] = n;
  }
  return out;
}

/**
 * A series' state badge (`span.run-state.state-<state>`, or `.state-mixed` for a group whose runs
 * differ): `running`, `stopped`, `finished`, or for a group the counts (`2 finished, 1 stopped`);
 * null when no run's state is known.
 */
function stateBadge(doc: Document, states: CurveSeries['states'], runs: number): HTMLElement | null {
  const known = RUN_STATES.filter((s) => states[s]);
  if (!known.length) return null;
  const single = known.length === 1 && states[known[0]] === runs;
  const text = single ? known[0] : known.map((s) => `${states[s]} ${s}`).join(', ');
  const badge = el(doc, 'span', `run-state state-${single ? known[0] : 'mixed'}`, text);
  badge.title = STATE_HELP[single ? known[0] : 'mixed'];
  return badge;
}

const STATE_HELP: Record<RunState | 'mixed', string> = {
  running: 'A job of this window is training it: its curves grow as it trains',
  stopped: 'Stopped before its last step (cancelled or killed): Episode Lab: Resume Run continues it',
  finished: 'All its steps ran (its summary.json is written)',
  mixed: 'The runs of this group are in different states',
};

/** At most this many hover points per series (a long run's are thinned evenly). */
const MAX_HOVER_POINTS = 200;

const CHART_MARGIN = { top: 26, right: 16, bottom: 40, left: 56 };

type Point = CurveSeries['points'][number];
type Chart = Selection<SVGSVGElement, unknown, null, undefined>;

/** A chart's scales: x over the steps drawn, y over every mean ± sd and held-out value. */
interface ChartScales {
  x: ScaleLinear<number, number>;
  y: ScaleLinear<number, number>;
  /** The first and last step drawn (undefined: no points). */
  x0: number | undefined;
  x1: number | undefined;
}

const labelOf = (metric: string) => METRIC_LABELS[metric] ?? metric;

/** The scales of a chart `width` x `height`: y spans 0, and up to 1 for the pass rate (0.1 otherwise). */
function chartScales(
  metric: string,
  series: readonly CurveSeries[],
  width: number,
  height: number,
): ChartScales {
  const margin = CHART_MARGIN;
  const all = series.flatMap((s) => s.points);
  const held = series.flatMap((s) => (s.heldout === null ? [] : [s.heldout]));
  const [x0, x1] = extent(all, (p) => p.step) as [number | undefined, number | undefined];
  const lo = Math.min(...all.map((p) => p.value - p.sd), ...held, 0);
  const hi = Math.max(...all.map((p) => p.value + p.sd), ...held, metric === 'pass_rate' ? 1 : 0.1);
  const x = scaleLinear()
    .domain([x0 ?? 0, Math.max(x1 ?? 1, (x0 ?? 0) + 1)])
    .range([margin.left, width - margin.right]);
  const y = scaleLinear()
    .domain([Number.isFinite(lo) ? lo : 0, Number.isFinite(hi) ? hi : 1])
    .nice()
    .range([height - margin.bottom, margin.top]);
  return { x, y, x0, x1 };
}

/** The chart's title, its x axis (whole steps) labelled "training step", its y axis labelled by the metric. */
function drawFrame(root: Chart, metric: string, sc: ChartScales, width: number, height: number): void {
  const margin = CHART_MARGIN;
  root
    .append('text')
    .attr('class', 'chart-title')
    .attr('x', margin.left)
    .attr('y', 16)
    .text(`${labelOf(metric)} per step`);
  root
    .append('g')
    .attr('class', 'axis x-axis')
    .attr('transform', `translate(0,${height - margin.bottom})`)
    .call(
      axisBottom(sc.x)
        .ticks(Math.min(8, Math.max(1, (sc.x1 ?? 1) - (sc.x0 ?? 0))))
        .tickFormat((d) => String(d)),
    );
  drawXLabel(root, { left: margin.left, right: width - margin.right, y: height - 6 }, 'training step');
  const place = { left: margin.left, labelX: 14, top: margin.top, bottom: height - margin.bottom };
  drawYAxis(root, sc.y, place, labelOf(metric));
}

/**
 * A series' lines into its group `g`: a group's `path.band` (mean ± sd) and `path.member` lines, then
 * its `path.curve` (smoothed over a faint `path.raw` when `smoothing` > 0), and a `circle.dot` for a
 * single point.
 */
function drawLines(
  g: Selection<SVGGElement, unknown, null, undefined>,
  s: CurveSeries,
  sc: ChartScales,
  smoothing: number,
): void {
  const { x, y } = sc;
  const band = area<Point>()
    .x((p) => x(p.step))
    .y0((p) => y(p.value - p.sd))
    .y1((p) => y(p.value + p.sd));
  const curve = line<{ step: number; value: number }>()
    .x((p) => x(p.step))
    .y((p) => y(p.value));
  if (s.runs > 1) {
    g.append('path')
      .attr('class', 'band')
      .attr('d', band(s.points) ?? '');
    for (const m of s.members)
      g.append('path')
        .attr('class', 'member')
        .attr('d', curve(m.points) ?? '');
  }
  if (smoothing > 0 && s.points.length > 1) {
    g.append('path')
      .attr('class', 'raw')
      .attr('d', curve(s.points) ?? '');
    const sm = smooth(
      s.points.map((p) => p.value),
      smoothing,
    );
    g.append('path')
      .attr('class', 'curve smoothed')
      .attr('d', curve(s.points.map((p, i) => ({ step: p.step, value: sm[i] }))) ?? '');
  } else
    g.append('path')
      .attr('class', 'curve')
      .attr('d', curve(s.points) ?? '');
  if (s.points.length === 1)
    g.append('circle')
      .attr('class', 'dot')
      .attr('cx', x(s.points[0].step))
      .attr('cy', y(s.points[0].value))
      .attr('r', 3);
}

/**
 * A series' `circle.pt` hover points (at most MAX_HOVER_POINTS, the last always), each titled with
 * its series, step and raw value (mean ± sd over a group's runs) with its n (valueText), and its
 * held-out result, with its n too, as a `path.heldout` diamond at the series' last step.
 */
function drawMarks(
  g: Selection<SVGGElement, unknown, null, undefined>,
  s: CurveSeries,
  sc: ChartScales,
  metric: string,
): void {
  const { x, y } = sc;
  const every = Math.max(1, Math.ceil(s.points.length / MAX_HOVER_POINTS));
  const pts = g.append('g').attr('class', 'points');
  s.points.forEach((p, i) => {
    if (i % every !== 0 && i !== s.points.length - 1) return;
    pts
      .append('circle')
      .attr('class', 'pt')
      .attr('cx', x(p.step))
      .attr('cy', y(p.value))
      .attr('r', 4)
      .append('title')
      .text(
        `${s.name} · step ${p.step}: ${valueText(metric, p.value, p.tally, s.runs > 1 ? { sd: p.sd, runs: p.n } : null)}`,
      );
  });
  if (s.heldout !== null) {
    // At the series' own last step (a run stopped early has its result there, not at the chart's end).
    const cx = x(s.points.at(-1)?.step ?? sc.x1 ?? 0);
    const cy = y(s.heldout);
    g.append('path')
      .attr('class', 'heldout')
      .attr('d', `M${cx},${cy - 6}L${cx + 6},${cy}L${cx},${cy + 6}L${cx - 6},${cy}Z`)
      .append('title')
      .text(`${s.name} · held-out ${labelOf(metric)}: ${valueText(metric, s.heldout, s.heldoutTally)}`);
  }
}

/**
 * One chart: `path.band` per group, `path.curve` per series (smoothed when `smoothing` > 0, over a
 * faint `path.raw`), thin `path.member` per grouped run, `circle.pt` hover points whose title gives
 * the raw value, a `path.heldout` diamond for a held-out result, and labelled axes.
 */
export function renderCurveChart(
  doc: Document,
  metric: string,
  series: readonly CurveSeries[],
  size: { width: number; height: number } = CHART_SIZE,
  opts: { smoothing?: number } = {},
): SVGSVGElement {
  const { width, height } = size;
  const sc = chartScales(metric, series, width, height);
  const svg = doc.createElementNS(SVG, 'svg') as SVGSVGElement;
  const root = select(svg)
    .attr('class', 'curve-chart')
    .attr('data-metric', metric)
    .attr('xmlns', SVG)
    .attr('width', width)
    .attr('height', height)
    .attr('viewBox', `0 0 ${width} ${height}`)
    .attr('role', 'img')
    .attr('aria-label', `${labelOf(metric)} per step, ${series.length} series`);
  drawFrame(root, metric, sc, width, height);
  for (const s of series) {
    const g = root
      .append('g')
      .attr('class', `series series-c${s.color}${s.live ? ' live' : ''}`)
      .attr('data-name', s.name);
    drawLines(g, s, sc, opts.smoothing ?? 0);
    drawMarks(g, s, sc, metric);
  }
  return svg;
}

/** A recipe table; cells `mean ±sd` when the table is aggregated over seeds. */
export function renderRecipeTable(doc: Document, t: TableData): HTMLElement {
  const table = doc.createElement('table');
  table.className = 'recipe-table';
  const cap = doc.createElement('caption');
  cap.textContent = `${t.title} — ${t.source}`;
  const thead = doc.createElement('thead');
  const hr = doc.createElement('tr');
  for (const c of t.columns) {
    const th = doc.createElement('th');
    th.textContent = c;
    hr.appendChild(th);
  }
  thead.appendChild(hr);
  const tbody = doc.createElement('tbody');
  t.rows.forEach((row, r) => {
    const tr = doc.createElement('tr');
    row.forEach((cell, c) => {
      const td = doc.createElement('td');
      const d = t.digits?.[c] ?? 3;
      if (typeof cell === 'number') {
        const sd = t.spread?.[r]?.[c];
        td.textContent = sd != null ? `${cell.toFixed(d)} ±${sd.toFixed(d)}` : cell.toFixed(d);
        td.className = 'num';
      } else {
        td.textContent = String(cell);
        if (cell === '-') td.className = 'num'; // a missing number
      }
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
  table.append(cap, thead, tbody);
  return table;
}

export interface DashboardHandlers {
  onExport(metric: string): void;
  /** Choose the curves' smoothing weight (one of SMOOTHING). */
  onSmoothing?(weight: Smoothing): void;
}

type DashboardData = { runs: readonly RunSeries[]; tables: readonly TableData[]; notes: readonly string[] };

/** The series' legend (`.curve-legend`): a swatch and a name per series, and the held-out mark when one has a result. */
function curveLegend(doc: Document, series: readonly CurveSeries[]): HTMLElement {
  const legend = el(doc, 'div', 'legend curve-legend');
  for (const s of series) {
    // A live series' swatch is dashed as its curve is (dashboard.css).
    const item = el(doc, 'span', `legend-item series-c${s.color}${s.live ? ' live' : ''}`);
    item.append(
      el(doc, 'span', `line-swatch${s.runs > 1 ? ' with-band' : ''}`),
      el(doc, 'span', '', `${s.name}${s.live && !s.states.running ? ' · live' : ''}`),
    );
    const badge = stateBadge(doc, s.states, s.runs);
    if (badge) item.appendChild(badge);
    legend.appendChild(item);
  }
  if (series.some((s) => s.heldout !== null))
    legend.appendChild(
      el(doc, 'span', 'legend-item heldout-key', '◆ held-out result (at its run’s last step)'),
    );
  return legend;
}

/** The smoothing choice: one `button[data-smoothing]` per weight of SMOOTHING, the current one pressed. */
function smoothingControls(doc: Document, smoothing: number, h: DashboardHandlers): HTMLElement {
  const controls = el(doc, 'div', 'controls smoothing');
  controls.setAttribute('role', 'group');
  controls.setAttribute('aria-label', 'smoothing of the curves');
  controls.appendChild(el(doc, 'span', '', 'Smoothing:'));
  for (const w of SMOOTHING) {
    const b = el(doc, 'button', `link-button${w === smoothing ? ' on' : ''}`);
    b.dataset.smoothing = String(w);
    b.setAttribute('aria-pressed', String(w === smoothing));
    b.textContent = w === 0 ? 'off' : String(w);
    b.title =
      w === 0
        ? 'The raw per-step values'
        : `An exponential moving average with weight ${w} over the raw curve`;
    b.addEventListener('click', () => h.onSmoothing?.(w));
    controls.appendChild(b);
  }
  return controls;
}

/** A chart's size when the page's width is not known. */
export const CHART_SIZE = { width: 520, height: 250 } as const;

/** The chart grid of media/dashboard.css: columns of at least 430 px, 12 px apart, in at most 1400 px. */
const GRID = { minColumn: 430, gap: 12, maxWidth: 1400 } as const;
/** A chart's frame (`.chart`): 1 px border and 6 px padding each side. */
const FRAME = 14;

/**
 * The size to draw each chart at in a page `panel` px wide (the app's content width): the width of
 * a column of the chart grid (as many 430 px columns as fit, auto-fill, one below 872 px), less its
 * frame, so the picture is drawn 1:1 and its text keeps its CSS size (11 px and more) instead of
 * shrinking with it, in a 400 px side panel as in a 1600 px editor (the run view does the same). The
 * height follows the width within [200, 250]. No width known (0): CHART_SIZE.
 */
export function chartSize(panel: number): { width: number; height: number } {
  if (!(panel > 0)) return { ...CHART_SIZE };
  const content = Math.min(panel, GRID.maxWidth);
  const columns = Math.max(1, Math.floor((content + GRID.gap) / (GRID.minColumn + GRID.gap)));
  const column = (content - GRID.gap * (columns - 1)) / columns;
  const width = Math.max(240, Math.floor(column - FRAME - 2));
  return { width, height: Math.round(Math.min(CHART_SIZE.height, Math.max(200, width * 0.55))) };
}

/** A heading and a grid of charts, one `figure.chart` per metric (drawn at `size`) with its export button. */
function chartGrid(
  doc: Document,
  title: string,
  metrics: readonly string[],
  runs: readonly RunSeries[],
  look: Look,
  h: DashboardHandlers,
): HTMLElement[] {
  const grid = el(doc, 'div', 'charts');
  for (const metric of metrics) {
    const fig = el(doc, 'figure', 'chart');
    fig.appendChild(
      renderCurveChart(doc, metric, curveSeries(runs, metric), look.size, { smoothing: look.smoothing }),
    );
    const b = el(doc, 'button', 'link-button export', 'Export SVG');
    b.dataset.export = metric;
    b.title = `Save the ${labelOf(metric)} plot as an SVG file`;
    b.addEventListener('click', () => h.onExport(metric));
    fig.appendChild(b);
    grid.appendChild(fig);
  }
  return [el(doc, 'h2', '', title), grid];
}

/** How the charts are drawn: the smoothing weight and the size of each chart. */
type Look = { smoothing: number; size: { width: number; height: number } };

/** The curves of some runs: legend, smoothing, the behaviour charts, and the diagnostics some run has. */
function curves(doc: Document, runs: readonly RunSeries[], look: Look, h: DashboardHandlers): HTMLElement[] {
  const present = DIAGNOSTIC_METRICS.filter((m) => runs.some((r) => r.metrics[m]?.some((x) => x !== null)));
  return [
    curveLegend(doc, curveSeries(runs, CURVE_METRICS[0])),
    smoothingControls(doc, look.smoothing, h),
    ...chartGrid(doc, 'Behaviour (figure 12.2)', CURVE_METRICS, runs, look, h),
    ...(present.length ? chartGrid(doc, 'Optimisation diagnostics', present, runs, look, h) : []),
  ];
}

/**
 * The dashboard: legend and smoothing, one chart per behaviour metric (figure 12.2), one per
 * optimisation diagnostic some run has, each with an export button; the tables and notes.
 * `opts.width`: the page's content width in px (chartSize draws the charts for it; absent: the
 * natural CHART_SIZE).
 */
export function renderDashboard(
  doc: Document,
  data: DashboardData,
  h: DashboardHandlers,
  opts: { smoothing?: number; width?: number } = {},
): HTMLElement {
  const root = el(doc, 'div', 'dashboard');
  const live = data.runs.filter((r) => r.live).length;
  const steps = Math.max(0, ...data.runs.map((r) => r.steps.length));
  const stopped = data.runs.filter((r) => r.state === 'stopped').length;
  root.append(
    el(doc, 'h1', '', 'Training dashboard'),
    el(
      doc,
      'p',
      'info',
      `${data.runs.length} run${data.runs.length === 1 ? '' : 's'} · up to ${steps} steps${live ? ` · ${live} training now (updates live)` : ''}${stopped ? ` · ${stopped} stopped (Resume Run continues ${stopped === 1 ? 'it' : 'them'})` : ''}`,
    ),
  );
  if (data.runs.length === 0)
    root.appendChild(
      el(
        doc,
        'p',
        'empty',
        'No training steps yet. Train an agent or run a recipe; its curves appear here as it trains.',
      ),
    );
  else
    root.append(
      ...curves(doc, data.runs, { smoothing: opts.smoothing ?? 0, size: chartSize(opts.width ?? 0) }, h),
    );
  if (data.tables.length) {
    root.appendChild(el(doc, 'h2', '', 'Recipe tables'));
    for (const t of data.tables) root.appendChild(renderRecipeTable(doc, t));
  }
  if (data.notes.length) {
    const ul = el(doc, 'ul', 'notes');
    for (const n of data.notes) ul.appendChild(el(doc, 'li', '', n));
    root.appendChild(ul);
  }
  return root;
}

/** Presentation properties copied inline into an exported SVG (CSS variables do not travel). */
const EXPORT_PROPS = [
  'fill',
  'stroke',
  'stroke-width',
  'stroke-dasharray',
  'opacity',
  'fill-opacity',
  'stroke-opacity',
  'font-size',
  'font-family',
  'font-weight',
];

/** A standalone copy of a chart for saving: computed styles inlined, a background behind it. */
export function svgForExport(svg: SVGSVGElement, win: Window, background: string): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const src = [svg, ...svg.querySelectorAll('*')];
  const dst = [copy, ...copy.querySelectorAll('*')];
  src.forEach((el, i) => {
    const cs = win.getComputedStyle(el);
    for (const p of EXPORT_PROPS) {
      const v = cs.getPropertyValue(p);
      if (v) dst[i].setAttribute(p, v);
    }
    dst[i].removeAttribute('class');
  });
  copy.setAttribute('xmlns', SVG);
  const bg = copy.ownerDocument.createElementNS(SVG, 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', background);
  copy.insertBefore(bg, copy.firstChild);
  return copy.outerHTML;
}
