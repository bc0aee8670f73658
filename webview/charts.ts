/**
 * The training dashboard's render functions (d3): per-step curves of figure 12.2, one chart per
 * metric, one line per run; runs of one group (the seeds of an arm) are drawn as their mean with
 * a mean ± sd band; recipe tables as tables. Pure: data in, DOM out.
 */
import { area, axisBottom, axisLeft, extent, line, scaleLinear, select } from 'd3';
import {
  CURVE_METRICS,
  DIAGNOSTIC_METRICS,
  type RunSeries,
  SMOOTHING,
  type Smoothing,
  type TableData,
} from '../src/protocol/webview.js';

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

/** A drawable series: a single run, or a group's mean with its spread. */
export interface CurveSeries {
  name: string;
  /** Colour slot (0..7). */
  color: number;
  points: { step: number; value: number; sd: number; n: number }[];
  /** Runs averaged (1 for a single run). */
  runs: number;
  live: boolean;
  /** The member runs' own lines (for groups). */
  members: { name: string; points: { step: number; value: number }[] }[];
  /** The held-out result of this metric (a group's mean over the runs that have one); null: none. */
  heldout: number | null;
}

/** Group runs (same `group`) into series: mean ± sd (sample sd) per step over the runs that have it. */
export function curveSeries(runs: readonly RunSeries[], metric: string): CurveSeries[] {
  const groups = new Map<string, RunSeries[]>();
  for (const r of runs) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  return [...groups].map(([name, members], color) => {
    const lines = members.map((r) => ({
      name: r.name,
      points: r.steps
        .map((step, i) => ({ step, value: r.metrics[metric]?.[i] ?? null }))
        .filter((p): p is { step: number; value: number } => p.value !== null),
    }));
    const steps = [...new Set(lines.flatMap((l) => l.points.map((p) => p.step)))].sort((a, b) => a - b);
    const byStep = lines.map((l) => new Map(l.points.map((p) => [p.step, p.value])));
    const points = steps.map((step) => {
      const xs = byStep.map((m) => m.get(step)).filter((v): v is number => v !== undefined);
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
      return { step, value: mean, sd, n: xs.length };
    });
    const held = members
      .map((m) => m.heldout?.[metric])
      .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return {
      name: members.length > 1 ? `${name} (mean ± sd of ${members.length})` : members[0].name,
      color: color % 8,
      points,
      runs: members.length,
      live: members.some((m) => m.live),
      members: members.length > 1 ? lines : [],
      heldout: held.length ? held.reduce((a, b) => a + b, 0) / held.length : null,
    };
  });
}

const SVG = 'http://www.w3.org/2000/svg';

/** At most this many hover points per series (a long run's are thinned evenly). */
const MAX_HOVER_POINTS = 200;

/**
 * One chart: `path.band` per group, `path.curve` per series (smoothed when `smoothing` > 0, over a
 * faint `path.raw`), thin `path.member` per grouped run, `circle.pt` hover points whose title gives
 * the raw value, a `path.heldout` diamond for a held-out result, and labelled axes.
 */
export function renderCurveChart(
  doc: Document,
  metric: string,
  series: readonly CurveSeries[],
  size = { width: 520, height: 250 },
  opts: { smoothing?: number } = {},
): SVGSVGElement {
  const { width, height } = size;
  const smoothing = opts.smoothing ?? 0;
  const margin = { top: 26, right: 16, bottom: 40, left: 56 };
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
  const svg = doc.createElementNS(SVG, 'svg') as SVGSVGElement;
  const root = select(svg)
    .attr('class', 'curve-chart')
    .attr('data-metric', metric)
    .attr('xmlns', SVG)
    .attr('width', width)
    .attr('height', height)
    .attr('viewBox', `0 0 ${width} ${height}`)
    .attr('role', 'img')
    .attr('aria-label', `${METRIC_LABELS[metric] ?? metric} per step, ${series.length} series`);
  root
    .append('text')
    .attr('class', 'chart-title')
    .attr('x', margin.left)
    .attr('y', 16)
    .text(`${METRIC_LABELS[metric] ?? metric} per step`);
  root
    .append('g')
    .attr('class', 'axis x-axis')
    .attr('transform', `translate(0,${height - margin.bottom})`)
    .call(
      axisBottom(x)
        .ticks(Math.min(8, Math.max(1, (x1 ?? 1) - (x0 ?? 0))))
        .tickFormat((d) => String(d)),
    );
  root
    .append('g')
    .attr('class', 'axis y-axis')
    .attr('transform', `translate(${margin.left},0)`)
    .call(axisLeft(y).ticks(5));
  root
    .append('text')
    .attr('class', 'axis-label x-label')
    .attr('x', (margin.left + width - margin.right) / 2)
    .attr('y', height - 6)
    .attr('text-anchor', 'middle')
    .text('training step');
  root
    .append('text')
    .attr('class', 'axis-label y-label')
    .attr('transform', `translate(14,${(margin.top + height - margin.bottom) / 2}) rotate(-90)`)
    .attr('text-anchor', 'middle')
    .text(METRIC_LABELS[metric] ?? metric);
  const band = area<CurveSeries['points'][number]>()
    .x((p) => x(p.step))
    .y0((p) => y(p.value - p.sd))
    .y1((p) => y(p.value + p.sd));
  const curve = line<{ step: number; value: number }>()
    .x((p) => x(p.step))
    .y((p) => y(p.value));
  for (const s of series) {
    const g = root
      .append('g')
      .attr('class', `series series-c${s.color}${s.live ? ' live' : ''}`)
      .attr('data-name', s.name);
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
    // Hover points: each says its series, step and raw value (mean ± sd over a group's runs).
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
          `${s.name} · step ${p.step}: ${fmt(p.value)}${s.runs > 1 ? ` ± ${fmt(p.sd)} over ${p.n} runs` : ''}`,
        );
    });
    if (s.heldout !== null) {
      const cx = x(x1 ?? 0);
      const cy = y(s.heldout);
      g.append('path')
        .attr('class', 'heldout')
        .attr('d', `M${cx},${cy - 6}L${cx + 6},${cy}L${cx},${cy + 6}L${cx - 6},${cy}Z`)
        .append('title')
        .text(`${s.name} · held-out ${METRIC_LABELS[metric] ?? metric}: ${fmt(s.heldout)}`);
    }
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

/**
 * The dashboard: legend and smoothing, one chart per behaviour metric (figure 12.2), one per
 * optimisation diagnostic some run has, each with an export button; the tables and notes.
 */
export function renderDashboard(
  doc: Document,
  data: { runs: readonly RunSeries[]; tables: readonly TableData[]; notes: readonly string[] },
  h: DashboardHandlers,
  opts: { smoothing?: number } = {},
): HTMLElement {
  const smoothing = opts.smoothing ?? 0;
  const root = doc.createElement('div');
  root.className = 'dashboard';
  const h1 = doc.createElement('h1');
  h1.textContent = 'Training dashboard';
  const sub = doc.createElement('p');
  sub.className = 'info';
  const live = data.runs.filter((r) => r.live).length;
  const steps = Math.max(0, ...data.runs.map((r) => r.steps.length));
  sub.textContent = `${data.runs.length} run${data.runs.length === 1 ? '' : 's'} · up to ${steps} steps${live ? ` · ${live} training now (updates live)` : ''}`;
  root.append(h1, sub);
  if (data.runs.length === 0) {
    const p = doc.createElement('p');
    p.className = 'empty';
    p.textContent =
      'No training steps yet. Train an agent or run a recipe; its curves appear here as it trains.';
    root.appendChild(p);
  } else {
    const first = curveSeries(data.runs, CURVE_METRICS[0]);
    const legend = doc.createElement('div');
    legend.className = 'legend curve-legend';
    for (const s of first) {
      const item = doc.createElement('span');
      item.className = `legend-item series-c${s.color}`;
      const sw = doc.createElement('span');
      sw.className = `line-swatch${s.runs > 1 ? ' with-band' : ''}`;
      const t = doc.createElement('span');
      t.textContent = `${s.name}${s.live ? ' · live' : ''}`;
      item.append(sw, t);
      legend.appendChild(item);
    }
    if (first.some((s) => s.heldout !== null)) {
      const item = doc.createElement('span');
      item.className = 'legend-item heldout-key';
      item.textContent = '◆ held-out result (at the last step)';
      legend.appendChild(item);
    }
    root.appendChild(legend);
    const controls = doc.createElement('div');
    controls.className = 'controls smoothing';
    controls.setAttribute('role', 'group');
    controls.setAttribute('aria-label', 'smoothing of the curves');
    const label = doc.createElement('span');
    label.textContent = 'Smoothing:';
    controls.appendChild(label);
    for (const w of SMOOTHING) {
      const b = doc.createElement('button');
      b.className = `link-button${w === smoothing ? ' on' : ''}`;
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
    root.appendChild(controls);
    const section = (title: string, metrics: readonly string[]) => {
      const h2 = doc.createElement('h2');
      h2.textContent = title;
      const grid = doc.createElement('div');
      grid.className = 'charts';
      for (const metric of metrics) {
        const fig = doc.createElement('figure');
        fig.className = 'chart';
        fig.appendChild(
          renderCurveChart(doc, metric, curveSeries(data.runs, metric), undefined, { smoothing }),
        );
        const b = doc.createElement('button');
        b.className = 'link-button export';
        b.dataset.export = metric;
        b.textContent = 'Export SVG';
        b.title = `Save the ${METRIC_LABELS[metric] ?? metric} plot as an SVG file`;
        b.addEventListener('click', () => h.onExport(metric));
        fig.appendChild(b);
        grid.appendChild(fig);
      }
      root.append(h2, grid);
    };
    section('Behaviour (figure 12.2)', CURVE_METRICS);
    const present = DIAGNOSTIC_METRICS.filter((m) =>
      data.runs.some((r) => r.metrics[m]?.some((x) => x !== null)),
    );
    if (present.length) section('Optimisation diagnostics', present);
  }
  if (data.tables.length) {
    const h2 = doc.createElement('h2');
    h2.textContent = 'Recipe tables';
    root.appendChild(h2);
    for (const t of data.tables) root.appendChild(renderRecipeTable(doc, t));
  }
  if (data.notes.length) {
    const ul = doc.createElement('ul');
    ul.className = 'notes';
    for (const n of data.notes) {
      const li = doc.createElement('li');
      li.textContent = n;
      ul.appendChild(li);
    }
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
