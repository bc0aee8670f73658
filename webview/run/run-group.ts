/**
 * The run view's group view: the samples of one GRPO group of a step side by side (reward,
 * advantage, lengths, turns, truncation, findings), with previous / next group, next sibling (the
 * next sample of the group, opened in the inspector), and the step to look in. Pure: data in, DOM out.
 */
import { distinctNames } from '../../src/core/browse/names.js';
import type { GroupView, RunStepRow } from '../../src/protocol/runs.js';
import { el, labelFor, linkButton } from '../dom.js';
import { fmt } from './run-charts.js';

export interface GroupHandlers {
  /** Show group `group` of step `step` (null: its first). */
  pick(step: number, group: number | null): void;
  /** Open sample `k` of the group shown in the inspector (and mark it). */
  open(k: number): void;
}

const num = (x: number | null) => (x === null ? '–' : fmt(x));

/** A sample's card: `article.group-card[data-record]`, `.selected` for the sibling shown. */
function card(
  doc: Document,
  v: GroupView,
  k: number,
  selected: boolean,
  onOpen: () => void,
  names: ReadonlyMap<string, string>,
): HTMLElement {
  const s = v.samples[k];
  const box = el(doc, 'article', `group-card${selected ? ' selected' : ''}`);
  box.dataset.record = String(s.record);
  const head = el(doc, 'header', 'group-card-head');
  head.append(el(doc, 'strong', '', `sample ${s.record}`), pathText(doc, ` ${names.get(s.path) ?? s.path}`));
  box.appendChild(head);
  const dl = el(doc, 'dl', 'group-figures');
  const rows: [string, string][] = [
    ['reward', num(s.reward)],
    ['advantage', num(s.advantage)],
    ['tokens', String(s.tokens)],
    ['trained', String(s.trained)],
    ['turns', String(s.turns)],
    ['truncated', s.truncated === null ? 'unknown' : s.truncated ? 'yes' : 'no'],
  ];
  for (const [key, value] of rows) dl.append(el(doc, 'dt', '', key), el(doc, 'dd', `fig-${key}`, value));
  box.appendChild(dl);
  const rules = Object.entries(s.findings);
  box.appendChild(
    el(
      doc,
      'p',
      rules.length ? 'group-findings flag-text' : 'group-findings muted',
      rules.length ? rules.map(([r, n]) => `${r} ×${n}`).join(', ') : 'no findings',
    ),
  );
  box.appendChild(
    linkButton(doc, '', 'Open in the inspector', onOpen, `Open sample ${s.record} of ${s.path}`),
  );
  return box;
}

/** The rewards' spread of a group, for its heading: all equal means no GRPO signal. */
function spread(v: GroupView): string {
  const rs = v.samples.map((s) => s.reward).filter((r): r is number => r !== null);
  if (rs.length < 2) return '';
  return rs.every((r) => r === rs[0]) ? ' · all rewards equal: no GRPO signal' : '';
}

/**
 * The group view as `section.run-group`: a step picker, the group's heading with its navigation
 * (`#group-prev`, `#group-next`, `#group-sibling`) and a card per sample in `.group-cards`.
 */
export function renderGroupView(
  doc: Document,
  steps: readonly RunStepRow[],
  state: { step: number | null; view: GroupView | null; error: string | null; sibling: number },
  h: GroupHandlers,
): HTMLElement {
  const box = el(doc, 'section', 'run-group');
  box.appendChild(el(doc, 'h2', '', 'Groups'));
  const bar = el(doc, 'div', 'group-bar');
  const select = el(doc, 'select', '');
  select.id = 'group-step';
  for (const s of steps) {
    const o = el(doc, 'option', '', `step ${s.step}`);
    o.value = String(s.step);
    o.selected = s.step === state.step;
    select.appendChild(o);
  }
  select.addEventListener('change', () => h.pick(Number(select.value), null));
  bar.append(labelFor(doc, 'group-step', 'Step '), select);
  box.appendChild(bar);
  const v = state.view;
  if (state.error) box.appendChild(el(doc, 'p', 'status error', state.error));
  if (!v || v.step !== state.step) {
    if (!state.error) box.appendChild(el(doc, 'p', 'status muted', 'Reading the group…'));
    return box;
  }
  if (v.group === null) {
    box.appendChild(el(doc, 'p', 'status muted', `Step ${v.step} records no groups.`));
    return box;
  }
  const at = v.groups.indexOf(v.group);
  const nav = el(doc, 'div', 'group-nav');
  const prev = linkButton(doc, 'group-prev', '◀ previous group', () => h.pick(v.step, v.groups[at - 1]));
  prev.disabled = at <= 0;
  const next = linkButton(doc, 'group-next', 'next group ▶', () => h.pick(v.step, v.groups[at + 1]));
  next.disabled = at >= v.groups.length - 1;
  const sib = linkButton(doc, 'group-sibling', 'next sibling ↓', () =>
    h.open((state.sibling + 1) % v.samples.length),
  );
  sib.disabled = v.samples.length === 0;
  sib.title = 'Open the next sample of this group in the inspector';
  nav.append(prev, next, sib);
  // A text id (prime-rl's uuid) is named by its start, whole in the tooltip; a number as itself.
  const name = v.label ? (v.label.length > 13 ? `${v.label.slice(0, 8)}…` : v.label) : String(v.group);
  const title = el(
    doc,
    'h3',
    'group-title',
    `Group ${name} of step ${v.step} (${at + 1} of ${v.groups.length}) · ${v.samples.length} samples${spread(v)}`,
  );
  if (v.label) title.title = `group ${v.label}`;
  box.append(title, nav);
  const cards = el(doc, 'div', 'group-cards');
  // Harbor's trials all hold agent/trajectory.json: each card names its file by what tells it apart.
  const names = distinctNames([...new Set(v.samples.map((x) => x.path))]);
  v.samples.forEach((_, k) => {
    cards.appendChild(card(doc, v, k, k === state.sibling, () => h.open(k), names));
  });
  box.appendChild(cards);
  return box;
}

/**
 * A path as a muted span that breaks after a `/` (a `<wbr>` there) before it breaks inside a name
 * (run.css's `overflow-wrap: anywhere` only breaks a name wider than the line).
 */
export function pathText(doc: Document, text: string): HTMLElement {
  const span = el(doc, 'span', 'muted');
  text.split('/').forEach((part, i, all) => {
    span.append(doc.createTextNode(i < all.length - 1 ? `${part}/` : part));
    if (i < all.length - 1) span.append(doc.createElement('wbr'));
  });
  return span;
}
