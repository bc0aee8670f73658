/**
 * The inspector's render functions: each takes data (and a Document) and returns DOM. No
 * messaging, no global state: webview/main.ts owns those. d3 builds the token strip.
 *
 * Positions: token i (i >= 1) is predicted at position i-1, so the action mask bit, the log-probs
 * and the mask check's per-position values of token i are at index i-1 of their [T-1] arrays.
 * Token 0 has no position.
 */
import { select } from 'd3';
import { OWNER_NAMES } from '../src/core/gym/episode.js';
import type { TrajectoryJSON } from '../src/core/gym/trajectory-json.js';
import { MASK_BUG_LABELS, MASK_BUGS, type MaskBug, type MaskCheckResult } from '../src/core/rl/mask-check.js';
import { makeDropdown } from './toolkit.js';

export const OWNER_LABELS: Record<string, string> = {
  template: 'template (<obs>, </obs>)',
  prompt: 'prompt (the issue)',
  policy: 'policy (sampled calls)',
  tool: 'tool output',
};

export interface ViewModel {
  episode: TrajectoryJSON | null;
  title: string;
  bug: MaskBug;
  mask: MaskCheckResult | null;
  maskPending: boolean;
  maskError: string | null;
  backend: string | null;
}

export interface Handlers {
  onBug(bug: MaskBug): void;
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
export function tokenDetail(ep: TrajectoryJSON, i: number, mask: MaskCheckResult | null): [string, string][] {
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
    ['current log-prob', hasPos && ep.curLogps ? fmt(ep.curLogps[p]) : '—'],
  ];
  if (hasPos && ep.advantages) rows.push(['advantage', fmt(ep.advantages[p])]);
  if (hasPos && ep.values) rows.push(['value', fmt(ep.values[p])]);
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
export function renderLegend(doc: Document): HTMLElement {
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
export function renderTokenStrip(
  doc: Document,
  ep: TrajectoryJSON,
  mask: MaskCheckResult | null = null,
): HTMLElement {
  const strip = doc.createElement('div');
  strip.className = 'strip';
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
): HTMLElement {
  const dl = doc.createElement('dl');
  dl.className = 'detail';
  for (const [k, v] of tokenDetail(ep, i, mask)) {
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
  backend.textContent = `TF.js backend (trainer process): ${vm.backend ?? 'not started yet'}`;
  header.append(h1, info, backend);
  const detail = doc.createElement('aside');
  detail.className = 'detail-box';
  detail.setAttribute('aria-live', 'polite');
  detail.appendChild(renderDetail(doc, ep, 0, vm.mask));
  root.append(
    header,
    renderLegend(doc),
    renderMaskDebugger(doc, vm, h),
    renderTokenStrip(doc, ep, vm.mask),
    detail,
  );
  return root;
}
