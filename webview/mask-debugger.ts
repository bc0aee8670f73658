/** The mask debugger: the bug selector, the verdict and the per-owner table of section 12.1. */
import { MASK_BUG_LABELS, MASK_BUGS, type MaskBug } from '../src/core/rl/mask-bugs.js';
import type { MaskCheckResult } from '../src/core/rl/mask-check.js';
import { makeDropdown } from './toolkit.js';
import type { Handlers, ViewModel } from './view-model.js';

/** The per-owner table of the mask check (section 12.1). */
export function renderMaskTable(doc: Document, mask: MaskCheckResult): HTMLElement {
  const table = doc.createElement('table');
  table.className = 'mask-table';
  const head = [
    'owner',
    'positions (tokens after the first)',
    'owned by the policy',
    'with gradient',
    'flags',
  ];
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
