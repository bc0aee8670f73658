/**
 * Checks of the ids against what they should be: the chat template's rendering of the record's
 * messages (or, without messages, the template's structure), and a turn's context against the
 * earlier turn it continues.
 */
import { type DumpTokenizer, showToken } from '../hf-tokenizer.js';
import { checkStructure } from '../owners.js';
import type { DumpSample } from '../sample.js';
import { type Hit, range, type SampleContext } from './context.js';

/** render-drift: hunks where the ids differ from the template's rendering or structure. */
export function checkRenderDrift(c: SampleContext): Hit[] {
  if (!c.tok || !c.templated) return [];
  const drift = c.s.messages?.length ? renderDrift(c.s, c.tok) : undefined;
  return drift ?? checkStructure(c.s.ids, c.tok, c.owners);
}

/** prefix-broken: this context departs from the earlier turn's tokens it should start with. */
export function checkPrefix(c: SampleContext): Hit[] {
  const { s, T } = c;
  if (!s.previous) return [];
  const prev = s.previous.ids;
  let p = 0;
  while (p < prev.length && p < T && prev[p] === s.ids[p]) p++;
  if (p >= prev.length) return [];
  const earlier = showToken(s.tokens?.[p] ?? c.tok?.text(prev[p]) ?? `#${prev[p]}`);
  return [
    {
      positions: [Math.min(p, T - 1)],
      message:
        `this context departs from the earlier turn${s.previous.part ? ` (${s.previous.part})` : ''} at its token ${p}: ` +
        `${p < T ? `"${c.text(p)}"` : 'the end'} where the earlier turn has "${earlier}"`,
    },
  ];
}

interface Hunk {
  /** [aFrom, aTo) in the file's ids, [bFrom, bTo) in the rendering's. */
  aFrom: number;
  aTo: number;
  bFrom: number;
  bTo: number;
}

/** Differences between two id sequences as hunks, resynchronising on 3 equal tokens within 32. */
export function diffIds(a: readonly number[], b: readonly number[]): Hunk[] {
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  const K = 3;
  const W = 32;
  const agree = (x: number, y: number) => {
    for (let k = 0; k < K; k++) {
      if (x + k >= a.length || y + k >= b.length) return x + k >= a.length && y + k >= b.length;
      if (a[x + k] !== b[y + k]) return false;
    }
    return true;
  };
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    let found: [number, number] | undefined;
    for (let d = 1; d <= 2 * W && !found; d++)
      for (let da = 0; da <= Math.min(d, W); da++) {
        const db = d - da;
        if (db > W) continue;
        if (agree(i + da, j + db)) {
          found = [da, db];
          break;
        }
      }
    if (!found) {
      hunks.push({ aFrom: i, aTo: a.length, bFrom: j, bTo: b.length });
      return hunks;
    }
    hunks.push({ aFrom: i, aTo: i + found[0], bFrom: j, bTo: j + found[1] });
    i += found[0];
    j += found[1];
  }
  if (i < a.length || j < b.length) hunks.push({ aFrom: i, aTo: a.length, bFrom: j, bTo: b.length });
  return hunks;
}

/** The two sides of a hunk (the file's ids, the template's) and the tokens that tell drift kinds apart. */
interface HunkSides {
  file: readonly number[];
  template: readonly number[];
  blank: (ids: readonly number[]) => boolean;
  think: number | undefined;
  opensTurn: (ids: readonly number[]) => boolean;
}

/** What a hunk is, the first kind whose test holds (else `different tokens`). */
const DRIFT_KINDS: { kind: string; holds: (h: HunkSides) => boolean }[] = [
  { kind: 'missing separator', holds: (h) => h.blank(h.template) && h.file.length === 0 },
  { kind: 'extra separator', holds: (h) => h.blank(h.file) && h.template.length === 0 },
  {
    kind: 'a <think> the template drops',
    holds: (h) => h.think !== undefined && h.file.includes(h.think) && !h.template.includes(h.think),
  },
  {
    kind: 'an extra turn (e.g. tool responses split into separate turns)',
    holds: (h) => h.opensTurn(h.file) && !h.opensTurn(h.template),
  },
  {
    kind: 'a missing turn (e.g. turns merged)',
    holds: (h) => h.opensTurn(h.template) && !h.opensTurn(h.file),
  },
];

/** render-drift where the record carries messages: re-render them and compare with the ids (undefined: cannot). */
function renderDrift(s: DumpSample, tok: DumpTokenizer): Hit[] | undefined {
  const msgs = s.messages ?? [];
  const lastAssistant = msgs[msgs.length - 1]?.role === 'assistant';
  let best: Hunk[] | undefined;
  let bestIds: number[] = [];
  for (const gen of lastAssistant ? [false] : [true, false]) {
    const r = tok.render(msgs, { tools: s.tools, addGenerationPrompt: gen });
    if (!r.ok) return undefined; // messages the template cannot take: check the structure instead
    const rendered = tok.encode(r.value);
    const hunks = diffIds(s.ids, rendered).filter((h) => !tolerated(h, s.ids, rendered, tok, lastAssistant));
    if (!best || hunks.length < best.length) {
      best = hunks;
      bestIds = rendered;
    }
  }
  const T = s.ids.length;
  const show = (ids: readonly number[], from: number, to: number) =>
    from === to
      ? 'nothing'
      : `"${ids
          .slice(from, Math.min(to, from + 6))
          .map((id) => showToken(tok.text(id)))
          .join('')}${to - from > 6 ? '…' : ''}"`;
  const opens = [tok.id('<|im_start|>'), tok.id('<|start_header_id|>')].filter((x) => x !== undefined);
  const tests = {
    blank: (ids: readonly number[]) => ids.length > 0 && ids.every((id) => tok.text(id).trim() === ''),
    think: tok.id('<think>'),
    opensTurn: (ids: readonly number[]) => ids.some((id) => opens.includes(id)),
  };
  return (best ?? []).map((h) => {
    const sides = { ...tests, file: s.ids.slice(h.aFrom, h.aTo), template: bestIds.slice(h.bFrom, h.bTo) };
    const kind = DRIFT_KINDS.find((k) => k.holds(sides))?.kind ?? 'different tokens';
    return {
      positions: h.aTo > h.aFrom ? range(h.aFrom, h.aTo) : [Math.min(h.aFrom, T - 1)],
      message: `${kind}: the template renders ${show(bestIds, h.bFrom, h.bTo)} where the ids have ${show(s.ids, h.aFrom, h.aTo)}`,
    };
  });
}

/** A trailing difference that is not drift: the final separator, or the end marker of a truncated turn. */
function tolerated(
  h: Hunk,
  a: readonly number[],
  b: readonly number[],
  tok: DumpTokenizer,
  lastAssistant: boolean,
): boolean {
  if (h.aTo !== a.length || h.bTo !== b.length || h.aFrom !== h.aTo) return false;
  const extra = b.slice(h.bFrom);
  const blank = (id: number) => tok.text(id).trim() === '';
  if (extra.every(blank)) return h.aFrom > 0 && tok.endIds.has(a[h.aFrom - 1]);
  // a truncated last assistant turn: the rendering closes it with the end marker (and a separator)
  return (
    lastAssistant &&
    tok.endIds.has(extra[0]) &&
    extra.slice(1).every(blank) &&
    !tok.endIds.has(a[a.length - 1])
  );
}
