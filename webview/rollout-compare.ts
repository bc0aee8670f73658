/**
 * Comparing two samples of real rollouts: their turns aligned by index (role, text, how many tokens
 * are trained), with what differs marked, and their outcomes side by side.
 */
import type { RolloutView } from '../src/core/rollouts/view.js';

export interface TurnOf {
  role: string;
  text: string;
  tokens: number;
  trained: number;
}

/** The turns of a sample: its tokens grouped by turn index, with the turn's role. */
export function turnsOf(v: RolloutView): TurnOf[] {
  const out: TurnOf[] = [];
  v.turn.forEach((k, i) => {
    while (out.length <= k) out.push({ role: v.roles[out.length] ?? '', text: '', tokens: 0, trained: 0 });
    out[k].text += v.tokens[i];
    out[k].tokens++;
    out[k].trained += v.lossMask[i] ? 1 : 0;
  });
  return out;
}

export interface AlignedTurn {
  k: number;
  a: TurnOf | null;
  b: TurnOf | null;
  textDiffers: boolean;
  maskDiffers: boolean;
}

/** Turns aligned by index; a turn only one sample has is null on the other side. */
export function alignTurns(a: RolloutView, b: RolloutView): AlignedTurn[] {
  const ta = turnsOf(a);
  const tb = turnsOf(b);
  return Array.from({ length: Math.max(ta.length, tb.length) }, (_, k) => {
    const x = ta[k] ?? null;
    const y = tb[k] ?? null;
    return {
      k,
      a: x,
      b: y,
      textDiffers: x?.text !== y?.text || x?.role !== y?.role,
      maskDiffers: x?.trained !== y?.trained,
    };
  });
}

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The comparison section of two rollout samples. */
export function renderRolloutCompare(
  doc: Document,
  pinned: { view: RolloutView; title: string },
  current: { view: RolloutView; title: string },
  onUnpin: () => void,
): HTMLElement {
  const box = doc.createElement('section');
  box.className = 'compare-pinned';
  const h2 = doc.createElement('h2');
  h2.textContent = 'Compared with the pinned sample';
  const unpin = doc.createElement('button');
  unpin.className = 'link-button';
  unpin.id = 'unpin';
  unpin.textContent = 'unpin';
  unpin.addEventListener('click', onUnpin);
  h2.append(' ', unpin);
  box.appendChild(h2);
  const table = doc.createElement('table');
  table.className = 'compare-table';
  const row = (cells: string[], tag: 'th' | 'td', diffs: boolean[] = []) => {
    const tr = doc.createElement('tr');
    cells.forEach((c, i) => {
      const cell = doc.createElement(tag);
      cell.textContent = c;
      if (diffs[i]) cell.className = 'diff';
      tr.appendChild(cell);
    });
    return tr;
  };
  const head = doc.createElement('thead');
  head.appendChild(row(['', `pinned: ${pinned.title}`, `this: ${current.title}`], 'th'));
  const body = doc.createElement('tbody');
  const a = pinned.view;
  const b = current.view;
  const outcome: [string, string, string][] = [
    ['reward', a.reward?.toFixed(3) ?? '–', b.reward?.toFixed(3) ?? '–'],
    ['tokens', String(a.ids.length), String(b.ids.length)],
    ['trained', String(a.lossMask.reduce((s, x) => s + x, 0)), String(b.lossMask.reduce((s, x) => s + x, 0))],
    [
      'findings',
      a.findings.map((f) => f.rule).join(', ') || 'none',
      b.findings.map((f) => f.rule).join(', ') || 'none',
    ],
  ];
  for (const [k, x, y] of outcome) body.appendChild(row([k, x, y], 'td', [false, x !== y, x !== y]));
  for (const t of alignTurns(a, b)) {
    const side = (x: TurnOf | null) =>
      x ? `${x.role || '?'} (${x.trained}/${x.tokens} trained): ${clip(x.text)}` : '—';
    const tr = row([`turn ${t.k}`, side(t.a), side(t.b)], 'td', [
      false,
      t.textDiffers || t.maskDiffers,
      t.textDiffers || t.maskDiffers,
    ]);
    tr.dataset.turn = String(t.k);
    body.appendChild(tr);
  }
  table.append(head, body);
  box.appendChild(table);
  return box;
}
