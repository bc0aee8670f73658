/**
 * The inspector page: assembles the header, the legend, the mask debugger, the context editor, the
 * token strip with its detail box, the credit view and the comparison, for a view model. No
 * messaging, no global state: inspector-main.ts owns those.
 */
import { OWNER_NAMES } from '../src/core/gym/episode.js';
import { MASK_BUG_LABELS, type TrajectoryJSON } from '../src/protocol/webview.js';
import { renderComparePinned } from './compare.js';
import { renderCompare, renderContextEditor } from './context.js';
import { renderCredit } from './credit.js';
import { renderMaskDebugger } from './mask-debugger.js';
import { renderDetail, renderLegend, renderTokenStrip } from './strip.js';
import { openBesideButton } from './toolkit.js';
import { currentView, type Handlers, type ViewModel } from './view-model.js';

/**
 * The strip and the token detail side by side (stacked when narrow). The detail sticks to the top
 * while the strip scrolls, and never beyond the strip's row: it cannot cover what follows.
 */
export function stripRow(doc: Document, strip: HTMLElement, detail: HTMLElement): HTMLElement {
  const row = doc.createElement('div');
  row.className = 'strip-row';
  row.append(strip, detail);
  return row;
}

/** Two episodes are the same when their titles and tokens are. */
export function sameEpisode(
  a: { episode: TrajectoryJSON; title: string },
  b: { episode: TrajectoryJSON; title: string },
): boolean {
  return (
    a.title === b.title &&
    a.episode.ids.length === b.episode.ids.length &&
    a.episode.ids.every((x, i) => x === b.episode.ids[i])
  );
}

/** ◀ previous · next ▶: walk the episode table's filtered list (keys [ and ] too). */
export function walkButtons(doc: Document, onWalk: (direction: -1 | 1) => void): HTMLElement {
  const nav = doc.createElement('nav');
  nav.className = 'walk';
  nav.setAttribute('aria-label', 'the episode table’s list');
  for (const [id, label, d] of [
    ['walk-prev', '◀ previous', -1],
    ['walk-next', 'next ▶', 1],
  ] as const) {
    const b = doc.createElement('button');
    b.className = 'link-button';
    b.id = id;
    b.textContent = label;
    b.title = `${d === 1 ? 'Next' : 'Previous'} row of the episode table (${d === 1 ? ']' : '['})`;
    b.addEventListener('click', () => onWalk(d));
    nav.appendChild(b);
  }
  return nav;
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
  header.append(
    walkButtons(doc, (d) => h.onWalk?.(d)),
    h1,
    info,
    backend,
  );
  if (h.onBrowse && src?.run) {
    const links = doc.createElement('p');
    links.className = 'browse-links';
    const link = (id: string, label: string, query: string) => {
      const b = doc.createElement('button');
      b.className = 'link-button';
      b.id = id;
      b.textContent = label;
      b.title = `The episode table with: ${query}`;
      b.addEventListener('click', () => h.onBrowse?.(query));
      return b;
    };
    if (ep.step !== undefined && ep.group !== undefined)
      links.append(
        link('browse-group', 'this episode’s GRPO group', `step = ${ep.step} and group = ${ep.group}`),
        doc.createTextNode(' · '),
      );
    links.append(link('browse-task', 'this task across steps', `task = ${ep.task.id}`));
    header.appendChild(links);
  }
  if (h.onPin) {
    const pinned = vm.pinned && sameEpisode(vm.pinned, { episode: ep, title: vm.title });
    const pin = doc.createElement('button');
    pin.className = 'link-button';
    pin.id = 'pin';
    pin.textContent = pinned ? 'pinned (unpin)' : 'pin to compare';
    pin.title = 'Pin this episode: the next episodes you open are compared with it, call by call';
    pin.addEventListener('click', () => h.onPin?.(!pinned));
    header.appendChild(pin);
  }
  if (h.onOpenBeside) header.appendChild(openBesideButton(doc, h.onOpenBeside));
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
  // An injected mask bug stays visible whatever episode is shown: it changes what every check says.
  const banner =
    vm.bug !== 'correct'
      ? (() => {
          const b = doc.createElement('p');
          b.className = 'banner';
          b.setAttribute('role', 'status');
          b.textContent = `Mask debugger: “${MASK_BUG_LABELS[vm.bug]}” is injected (choose “Correct mask” to remove it).`;
          return [b];
        })()
      : [];
  root.append(
    header,
    ...banner,
    stripRow(doc, stripBox, detail),
    renderLegend(doc, Boolean(heat), Boolean(view)),
    renderMaskDebugger(doc, vm, h),
    renderContextEditor(doc, vm, h),
    renderCredit(doc, vm, h),
  );
  if (vm.pinned && !sameEpisode(vm.pinned, { episode: ep, title: vm.title }))
    root.appendChild(
      renderComparePinned(doc, vm.pinned, { episode: ep, title: vm.title }, () => h.onPin?.(false)),
    );
  if (vm.rerun || vm.rerunJob?.pending || vm.rerunJob?.error || vm.evals?.length || vm.evalJob?.pending)
    root.appendChild(renderCompare(doc, vm, h));
  return root;
}
