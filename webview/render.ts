/**
 * The inspector's render functions: each takes data (and a Document) and returns DOM. No
 * messaging, no global state: webview/main.ts owns those. d3 builds the token strip.
 *
 * Positions: token i (i >= 1) is predicted at position i-1, so the action mask bit, the log-probs
 * and the mask check's per-position values of token i are at index i-1 of their [T-1] arrays.
 * Token 0 has no position.
 */
import { select } from 'd3';
import type { ContextPolicy } from '../src/core/context/policy.js';
import { OWNER_NAMES } from '../src/core/gym/episode.js';
import type { TrajectoryJSON } from '../src/core/gym/trajectory-json.js';
import type { SourceInfo } from '../src/core/inspector-protocol.js';
import type { CreditResult, RerunResult, Stats } from '../src/core/protocol.js';
import { MASK_BUG_LABELS, MASK_BUGS, type MaskBug, type MaskCheckResult } from '../src/core/rl/mask-check.js';
import { renderCompare, renderContextEditor, type StripView, stripView } from './context.js';
import { renderCredit } from './credit.js';
import { makeDropdown } from './toolkit.js';

export const OWNER_LABELS: Record<string, string> = {
  template: 'template (<obs>, </obs>)',
  prompt: 'prompt (the issue)',
  policy: 'policy (sampled calls)',
  tool: 'tool output',
};

/** A job the webview asked the host for: pending, its last progress line, its error. */
export interface JobState {
  pending: boolean;
  progress: string | null;
  error: string | null;
}

export const idleJob = (): JobState => ({ pending: false, progress: null, error: null });

/** One cell of the cross table (figure 12.3): a model evaluated under a context. */
export interface EvalCell {
  model: string;
  context: string;
  stats: Stats;
  episodes: number;
}

export interface ViewModel {
  episode: TrajectoryJSON | null;
  title: string;
  bug: MaskBug;
  mask: MaskCheckResult | null;
  maskPending: boolean;
  maskError: string | null;
  backend: string | null;
  /** Where the episode comes from (null before the host said). */
  source?: SourceInfo | null;
  credit?: CreditResult | null;
  creditJob?: JobState;
  /** Show the token-level advantages as a heat band on the strip. */
  heat?: boolean;
  /** The call whose view the strip shows (null: the whole episode). */
  call?: number | null;
  /** The context policy in the editor. */
  policy?: ContextPolicy;
  rerun?: RerunResult | null;
  rerunJob?: JobState;
  /** Which rerun episode the comparison shows. */
  rerunShown?: number;
  evals?: EvalCell[];
  evalJob?: JobState;
  retrainJob?: JobState;
  /** The retrained run's label, once done. */
  retrained?: string | null;
}

export interface Handlers {
  onBug(bug: MaskBug): void;
  onCall?(k: number | null): void;
  onPolicy?(p: ContextPolicy): void;
  onHeat?(on: boolean): void;
  onRerun?(): void;
  onEvaluate?(model: 'run' | 'retrained'): void;
  onRetrain?(): void;
  onRerunShown?(i: number): void;
  onDashboard?(): void;
}

/** Shown for a token's text: whitespace made visible. */
export function chipText(text: string): string {
  if (text === '\n') return '\u21b5';
  if (text === '') return '\u2205';
  return text;
}

const fmt = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(4));

/** Why position p is flagged ('' when it is not). */
export function flagReason(mask: MaskCheckResult, p: number): string {
  if (!mask.flags[p]) return '';
  if (mask.hasGradient[p] && mask.cut[p]) return 'gradient on a token cut away by truncation (padding)';
  if (mask.hasGradient[p]) return 'gradient on a token the policy did not produce';
  return 'no gradient on a token the policy produced';
}

/** The fields shown for token i, in order (hover or keyboard focus). */
export function tokenDetail(
  ep: TrajectoryJSON,
  i: number,
  mask: MaskCheckResult | null,
  extra: { credit?: CreditResult | null; view?: StripView | null } = {},
): [string, string][] {
  const p = i - 1;
  const hasPos = p >= 0;
  const rows: [string, string][] = [
    ['token', `#${i}`],
    ['id', String(ep.ids[i])],
    ['text', JSON.stringify(ep.tokens[i])],
    ['owner', OWNER_NAMES[ep.owner[i]]],
    ['turn', String(ep.turn[i])],
    ['mask bit', hasPos ? String(ep.actionMask[p]) : '— (first token: nothing predicts it)'],
    ['sampling log-prob', hasPos && ep.actionMask[p] ? fmt(ep.logps[p]) : hasPos ? '0 (not sampled)' : '—'],
    [
      'current log-prob',
      hasPos && extra.credit?.curLogps
        ? fmt(extra.credit.curLogps[p])
        : hasPos && ep.curLogps
          ? fmt(ep.curLogps[p])
          : '—',
    ],
  ];
  const credit = extra.credit;
  if (hasPos && credit) {
    rows.push([
      credit.hasCritic ? 'advantage (token GAE)' : 'advantage (outcome)',
      ep.actionMask[p] ? fmt(credit.tokenAdvantages[p]) : '0 (not trained)',
    ]);
    if (credit.values) rows.push(['value V', fmt(credit.values[p])]);
  } else {
    if (hasPos && ep.advantages) rows.push(['advantage', fmt(ep.advantages[p])]);
    if (hasPos && ep.values) rows.push(['value', fmt(ep.values[p])]);
  }
  const view = extra.view;
  if (view)
    rows.push([
      'in the call’s view',
      i >= view.prefixLength ? 'not yet (after the call starts)' : view.kept[i] ? 'yes' : 'no (dropped)',
    ]);
  if (mask && hasPos) {
    rows.push([
      'owned by the policy',
      mask.policyOwned[p] ? 'yes' : mask.cut[p] ? 'no (cut by truncation)' : 'no',
    ]);
    rows.push([
      'gradient |∂L/∂logits|',
      mask.gradMagnitude[p] > 0 ? mask.gradMagnitude[p].toExponential(3) : '0',
    ]);
    rows.push(['flag', flagReason(mask, p) || 'none']);
  }
  return rows;
}

/** The legend: one swatch per owner, then the marks. */
export function renderLegend(doc: Document, heat = false, view = false): HTMLElement {
  const legend = doc.createElement('div');
  legend.className = 'legend';
  legend.setAttribute('aria-label', 'legend');
  const item = (cls: string, label: string) => {
    const el = doc.createElement('span');
    el.className = 'legend-item';
    const sw = doc.createElement('span');
    sw.className = `swatch ${cls}`;
    sw.textContent = 'ab';
    const text = doc.createElement('span');
    text.textContent = label;
    el.append(sw, text);
    legend.appendChild(el);
  };
  for (const o of OWNER_NAMES) item(`chip owner-${o}`, OWNER_LABELS[o]);
  item('chip mark-masked', 'action mask = 1 (trained)');
  // The lane under each token (mask debugger): left = owned by the policy, right = has gradient.
  const lane = (p: boolean, g: boolean, label: string) => {
    item('chip mark-lane', label);
    const sw = legend.lastElementChild!.firstElementChild!;
    const l = doc.createElement('span');
    l.className = 'lane';
    const pi = doc.createElement('i');
    pi.className = `p${p ? ' on' : ''}`;
    const gi = doc.createElement('i');
    gi.className = `g${g ? ' on' : ''}`;
    l.append(pi, gi);
    sw.appendChild(l);
  };
  lane(true, false, 'owned by the policy');
  lane(false, true, 'has gradient');
  item('chip mark-flag', 'mismatch (flag)');
  if (view) {
    item('chip owner-tool dropped', 'not in the call’s view (dropped)');
    item('ph', 'placeholder: what the call saw instead');
  }
  if (heat) {
    item('chip mark-heat', 'advantage: negative … positive');
    const sw = legend.lastElementChild!.firstElementChild!;
    for (const b of ['n3', 'n1', 'p1', 'p3']) {
      const h = doc.createElement('span');
      h.className = `heat heat-${b}`;
      sw.appendChild(h);
    }
  }
  return legend;
}

interface ChipDatum {
  i: number;
  text: string;
  owner: string;
}

/**
 * The token strip: one chip per token, classed by owner, grouped into turns. With a mask-check
 * result, each chip after the first also carries its position's "owned by the policy" and "has
 * gradient" marks, and mismatches are flagged.
 */
export interface StripOptions {
  /** A call's view: tokens it did not see are greyed (`dropped`), later tokens dimmed (`future`). */
  view?: StripView | null;
  /** [T-1] advantages per position, shown as a heat band under the policy tokens. */
  heat?: number[] | null;
  /** The call to outline (its tokens get `selected-call`). */
  selectedCall?: number | null;
}

/** The heat bucket (-3..3) of an advantage, relative to the largest magnitude shown. */
export function heatBucket(a: number, maxAbs: number): number {
  if (!(maxAbs > 0) || a === 0) return 0;
  return Math.max(-3, Math.min(3, Math.round((3 * a) / maxAbs))) || (a > 0 ? 1 : -1);
}

export function renderTokenStrip(
  doc: Document,
  ep: TrajectoryJSON,
  mask: MaskCheckResult | null = null,
  opts: StripOptions = {},
): HTMLElement {
  const view = opts.view ?? null;
  const heat = opts.heat ?? null;
  const maxAbs = heat ? Math.max(0, ...heat.map((a, p) => (ep.actionMask[p] ? Math.abs(a) : 0))) : 0;
  const placeholderAt = new Map((view?.placeholders ?? []).map((p) => [p.obsIndex, p]));
  const strip = doc.createElement('div');
  strip.className = view ? 'strip with-view' : 'strip';
  strip.setAttribute('role', 'group');
  strip.setAttribute('aria-label', 'token strip (arrow keys move between tokens)');
  // Turns are consecutive runs of one turn index.
  const turns: { turn: number; chips: ChipDatum[] }[] = [];
  ep.tokens.forEach((text, i) => {
    const turn = ep.turn[i];
    if (turns.length === 0 || turns[turns.length - 1].turn !== turn) turns.push({ turn, chips: [] });
    turns[turns.length - 1].chips.push({ i, text, owner: OWNER_NAMES[ep.owner[i]] });
  });
  const groups = select(strip)
    .selectAll<HTMLDivElement, (typeof turns)[number]>('div.turn')
    .data(turns)
    .join('div')
    .attr('class', 'turn')
    .attr('data-turn', (d) => String(d.turn));
  groups
    .append('div')
    .attr('class', 'turn-label')
    .text((d) => `turn ${d.turn}`);
  const chips = groups
    .append('div')
    .attr('class', 'chips')
    .selectAll<HTMLSpanElement, ChipDatum>('span.chip')
    .data((d) => d.chips)
    .join('span')
    .attr('class', (d) => {
      const p = d.i - 1;
      const cls = ['chip', `owner-${d.owner}`];
      if (p >= 0 && ep.actionMask[p]) cls.push('masked');
      if (mask && p >= 0) {
        if (mask.hasGradient[p]) cls.push('grad');
        if (mask.flags[p]) cls.push('flag');
        if (mask.cut[p]) cls.push('cut');
      }
      if (view) {
        if (d.i >= view.prefixLength) cls.push('future');
        else if (!view.kept[d.i]) cls.push('dropped');
        if (placeholderAt.has(d.i)) cls.push('placeholder-at');
      }
      if (opts.selectedCall != null && d.owner === 'policy' && ep.turn[d.i] === opts.selectedCall)
        cls.push('selected-call');
      return cls.join(' ');
    })
    .attr('data-i', (d) => String(d.i))
    .attr('tabindex', (d) => (d.i === 0 ? '0' : '-1'))
    .attr('aria-label', (d) => {
      const p = d.i - 1;
      const flag = mask && p >= 0 ? flagReason(mask, p) : '';
      return `${d.text} ${d.owner}${p >= 0 && ep.actionMask[p] ? ' masked' : ''}${flag ? `, flag: ${flag}` : ''}`;
    });
  chips
    .append('span')
    .attr('class', 'text')
    .text((d) => chipText(d.text));
  if (heat) {
    chips
      .filter((d) => d.i > 0 && ep.actionMask[d.i - 1] === 1)
      .append('span')
      .attr('class', (d) => {
        const b = heatBucket(heat[d.i - 1], maxAbs);
        return `heat heat-${b < 0 ? 'n' : 'p'}${Math.abs(b)}`;
      })
      .attr('data-adv', (d) => heat[d.i - 1].toFixed(4))
      .attr('aria-hidden', 'true');
  }
  if (view && placeholderAt.size) {
    // A marker after each emptied or summarised observation's <obs>: what the call saw instead.
    chips
      .filter((d) => placeholderAt.has(d.i))
      .each(function (d) {
        const ph = placeholderAt.get(d.i)!;
        const marker = doc.createElement('span');
        marker.className = ph.summary ? 'ph ph-summary' : 'ph';
        marker.textContent = ph.summary ? `\u21b3 ${ph.summary}` : `\u2026 ${ph.dropped} dropped`;
        marker.title = ph.summary
          ? `the ${ph.dropped} source tokens of this read were replaced by "${ph.summary}"`
          : `${ph.dropped} tool tokens of this observation were dropped: the call saw an empty <obs> </obs>`;
        (this as HTMLElement).after(marker);
      });
  }
  if (mask) {
    const lane = chips
      .filter((d) => d.i > 0)
      .append('span')
      .attr('class', 'lane')
      .attr('aria-hidden', 'true');
    lane.append('i').attr('class', (d) => `p${mask.policyOwned[d.i - 1] ? ' on' : ''}`);
    lane.append('i').attr('class', (d) => `g${mask.hasGradient[d.i - 1] ? ' on' : ''}`);
  }
  return strip;
}

/** The per-owner table of the mask check (section 12.1). */
export function renderMaskTable(doc: Document, mask: MaskCheckResult): HTMLElement {
  const table = doc.createElement('table');
  table.className = 'mask-table';
  const head = ['owner', 'positions', 'owned by the policy', 'with gradient', 'flags'];
  const tr = (cells: string[], tag: 'th' | 'td', cls = '') => {
    const row = doc.createElement('tr');
    if (cls) row.className = cls;
    for (const c of cells) {
      const cell = doc.createElement(tag);
      cell.textContent = c;
      row.appendChild(cell);
    }
    return row;
  };
  const thead = doc.createElement('thead');
  thead.appendChild(tr(head, 'th'));
  const tbody = doc.createElement('tbody');
  for (const r of mask.byOwner)
    tbody.appendChild(
      tr(
        [r.owner, String(r.positions), String(r.policyOwned), String(r.withGradient), String(r.flags)],
        'td',
        `owner-row owner-${r.owner}${r.flags ? ' has-flags' : ''}`,
      ),
    );
  const sum = (k: 'positions' | 'policyOwned' | 'withGradient' | 'flags') =>
    String(mask.byOwner.reduce((a, r) => a + r[k], 0));
  tbody.appendChild(
    tr(['all', sum('positions'), sum('policyOwned'), sum('withGradient'), sum('flags')], 'td', 'total'),
  );
  table.append(thead, tbody);
  return table;
}

/** The mask debugger: the bug selector, the verdict and the per-owner table. */
export function renderMaskDebugger(doc: Document, vm: ViewModel, h: Handlers): HTMLElement {
  const box = doc.createElement('section');
  box.className = 'mask-debugger';
  const title = doc.createElement('h2');
  title.textContent = 'Mask debugger: positions with gradient vs positions owned by the policy';
  const controls = doc.createElement('div');
  controls.className = 'controls';
  const label = doc.createElement('label');
  label.textContent = 'Loss mask:';
  label.htmlFor = 'bug';
  const dropdown = makeDropdown(
    doc,
    'bug',
    MASK_BUGS.map((b) => ({ value: b, label: MASK_BUG_LABELS[b] })),
    vm.bug,
    (v) => h.onBug(v as MaskBug),
  );
  controls.append(label, dropdown);
  const verdict = doc.createElement('p');
  verdict.className = 'verdict';
  if (vm.maskError) {
    verdict.classList.add('error');
    verdict.textContent = vm.maskError;
  } else if (vm.maskPending || !vm.mask) {
    verdict.classList.add('pending');
    verdict.textContent = 'Computing the gradient of the policy-gradient loss in the trainer process…';
  } else {
    const n = vm.mask.totalFlags;
    verdict.classList.add(n ? 'bad' : 'good');
    verdict.textContent = n
      ? `${n} flag${n === 1 ? '' : 's'}: the loss sends gradient where the policy did not act, or none where it did.`
      : '0 flags: the loss trains exactly the tokens the policy produced.';
  }
  box.append(title, controls, verdict);
  if (vm.mask && !vm.maskPending && !vm.maskError) box.appendChild(renderMaskTable(doc, vm.mask));
  return box;
}

/** The detail panel of one token. */
export function renderDetail(
  doc: Document,
  ep: TrajectoryJSON,
  i: number,
  mask: MaskCheckResult | null,
  extra: { credit?: CreditResult | null; view?: StripView | null } = {},
): HTMLElement {
  const dl = doc.createElement('dl');
  dl.className = 'detail';
  for (const [k, v] of tokenDetail(ep, i, mask, extra)) {
    const dt = doc.createElement('dt');
    dt.textContent = k;
    const dd = doc.createElement('dd');
    dd.textContent = v;
    if (k === 'flag' && v !== 'none') dd.className = 'flag-text';
    dl.append(dt, dd);
  }
  return dl;
}

/** Counts of chips per owner class in a rendered strip (what the tests and e2e check). */
export function countChips(root: ParentNode): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of OWNER_NAMES) out[o] = root.querySelectorAll(`.strip .chip.owner-${o}`).length;
  return out;
}

/** The strip's view of the selected call under the editor's policy (null: the whole episode). */
export function currentView(vm: ViewModel): StripView | null {
  if (!vm.episode || vm.call == null) return null;
  try {
    return stripView(vm.episode, vm.call, vm.policy ?? vm.source?.contextPolicy ?? { kind: 'full' });
  } catch {
    return null;
  }
}

/** The whole inspector for a view model. */
export function renderInspector(doc: Document, vm: ViewModel, h: Handlers): HTMLElement {
  const root = doc.createElement('div');
  root.className = 'inspector';
  const ep = vm.episode;
  if (!ep) {
    const p = doc.createElement('p');
    p.className = 'empty';
    p.textContent =
      'No episode yet. Run “Episode Lab: Sample Episodes”, then pick an episode in the Episode Lab run explorer.';
    root.appendChild(p);
    return root;
  }
  const header = doc.createElement('header');
  const h1 = doc.createElement('h1');
  h1.textContent = vm.title;
  const info = doc.createElement('p');
  info.className = 'info';
  const i = ep.info;
  const counts = OWNER_NAMES.map((o, k) => `${o} ${ep.owner.filter((x) => x === k).length}`).join(', ');
  info.textContent = `task ${ep.task.id} (${ep.task.kind}) · ${i.hidden_pass ? 'pass' : 'fail'} · reward ${ep.reward.toFixed(2)} · ${i.n_turns} turns · stop ${i.stop} · ${ep.ids.length} tokens (${counts})`;
  const backend = doc.createElement('p');
  backend.className = 'backend';
  const src = vm.source;
  backend.textContent = `TF.js backend (trainer process): ${vm.backend ?? 'not started yet'}${
    src ? ` · model: ${src.model ?? 'none (scripted; the mask check uses seeded random logits)'}` : ''
  }`;
  header.append(h1, info, backend);
  if (h.onDashboard && src?.run) {
    const link = doc.createElement('button');
    link.className = 'link-button';
    link.id = 'open-dashboard';
    link.textContent = 'Training curves of this run';
    link.addEventListener('click', () => h.onDashboard?.());
    header.appendChild(link);
  }
  const view = currentView(vm);
  const heat = vm.heat && vm.credit ? vm.credit.tokenAdvantages : null;
  const detail = doc.createElement('aside');
  detail.className = 'detail-box';
  detail.setAttribute('aria-live', 'polite');
  detail.appendChild(renderDetail(doc, ep, 0, vm.mask, { credit: vm.credit, view }));
  const stripBox = doc.createElement('section');
  stripBox.className = 'strip-box';
  const stripTitle = doc.createElement('h2');
  stripTitle.textContent =
    view && vm.call != null
      ? `Token strip: what call ${vm.call} saw (${view.visible} of ${view.prefixLength} tokens before it${view.placeholders.length ? `, ${view.placeholders.length} observation${view.placeholders.length === 1 ? '' : 's'} replaced` : ''})`
      : 'Token strip';
  stripBox.append(
    stripTitle,
    renderTokenStrip(doc, ep, vm.mask, { view, heat, selectedCall: vm.call ?? null }),
  );
  root.append(
    header,
    renderLegend(doc, Boolean(heat), Boolean(view)),
    renderMaskDebugger(doc, vm, h),
    renderContextEditor(doc, vm, h),
    stripBox,
    detail,
    renderCredit(doc, vm, h),
  );
  if (vm.rerun || vm.rerunJob?.pending || vm.rerunJob?.error || vm.evals?.length || vm.evalJob?.pending)
    root.appendChild(renderCompare(doc, vm, h));
  return root;
}
