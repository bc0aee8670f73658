/**
 * The training dashboard's render functions (d3): per-step curves of figure 12.2, one chart per
 * metric, one line per run; runs of one group (the seeds of an arm) are drawn as their mean with
 * a mean ± sd band; recipe tables as tables. Pure: data in, DOM out.
 */
import { area, axisBottom, axisLeft, extent, line, scaleLinear, select } from 'd3';
import { CURVE_METRICS, type RunSeries, type TableData } from '../src/protocol/webview.js';

export const METRIC_LABELS: Record<string, string> = {
  pass_rate: 'pass rate',
  reads: 'reads per episode',
  tests: 'tests per episode',
  edits: 'edits per episode',
  turns: 'turns per episode',
  reward: 'reward',
};

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
    return {
      name: members.length > 1 ? `${name} (mean ± sd of ${members.length})` : members[0].name,
      color: color % 8,
      points,
      runs: members.length,
      live: members.some((m) => m.live),
      members: members.length > 1 ? lines : [],
    };
  });
}

const SVG = 'http://www.w3.org/2000/svg';

/** One chart: `path.band` per group, `path.curve` per series, thin `path.member` per grouped run. */
export function renderCurveChart(
  doc: Document,
  metric: string,
  series: readonly CurveSeries[],
  size = { width: 520, height: 250 },
): SVGSVGElement {
  const { width, height } = size;
  const margin = { top: 26, right: 14, bottom: 30, left: 44 };
  const all = series.flatMap((s) => s.points);
  const [x0, x1] = extent(all, (p) => p.step) as [number | undefined, number | undefined];
  const lo = Math.min(...all.map((p) => p.value - p.sd), 0);
  const hi = Math.max(...all.map((p) => p.value + p.sd), metric === 'pass_rate' ? 1 : 0.1);
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
}

/** The dashboard: legend, one chart per metric (with an export button), the tables and notes. */
export function renderDashboard(
  doc: Document,
  data: { runs: readonly RunSeries[]; tables: readonly TableData[]; notes: readonly string[] },
  h: DashboardHandlers,
): HTMLElement {
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
    root.appendChild(legend);
    const grid = doc.createElement('div');
    grid.className = 'charts';
    for (const metric of CURVE_METRICS) {
      const fig = doc.createElement('figure');
      fig.className = 'chart';
      fig.appendChild(renderCurveChart(doc, metric, curveSeries(data.runs, metric)));
      const b = doc.createElement('button');
      b.className = 'link-button export';
      b.dataset.export = metric;
      b.textContent = 'Export SVG';
      b.title = `Save the ${METRIC_LABELS[metric]} plot as an SVG file`;
      b.addEventListener('click', () => h.onExport(metric));
      fig.appendChild(b);
      grid.appendChild(fig);
    }
    root.appendChild(grid);
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
