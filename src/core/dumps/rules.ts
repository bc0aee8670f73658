/**
 * The dump lint: rules with stable ids, each from the bug report it comes from. A finding names
 * its rule, the 0-based positions of its tokens in the record's whole token sequence, and a
 * one-line explanation.
 */
import { CALL_END } from '../gym/grammar.js';
import { type DumpTokenizer, showToken } from './hf-tokenizer.js';
import { checkStructure, inferOwners, type OwnerSource, type Owners } from './owners.js';
import { type DumpSample, OWNER } from './sample.js';

export const RULE_IDS = [
  'mask-on-tool',
  'mask-on-prompt',
  'mask-on-template',
  'eos-not-trained',
  'policy-not-trained',
  'mask-shift',
  'length-mismatch',
  'render-drift',
  'prefix-broken',
  'logprob-gap',
  'mask-degenerate',
  'pad-is-eos',
] as const;
export type RuleId = (typeof RULE_IDS)[number];

export interface RuleInfo {
  id: RuleId;
  summary: string;
  /** The public bug reports the rule comes from. */
  from: string;
  /** Whether it needs a tokenizer whose template family is known (owners from the template). */
  needsOwners: boolean;
}

export const RULES: Record<RuleId, RuleInfo> = {
  'mask-on-tool': {
    id: 'mask-on-tool',
    summary: 'tool-response tokens are trained (mask 1)',
    from: 'TRL PR #4975 (one loss path ignored tool_mask)',
    needsOwners: true,
  },
  'mask-on-prompt': {
    id: 'mask-on-prompt',
    summary: 'system or user tokens are trained (mask 1)',
    from: 'SkyRL #213 (prompt tokens in the response mask)',
    needsOwners: true,
  },
  'mask-on-template': {
    id: 'mask-on-template',
    summary: 'template tokens (role headers, generation prompt, separators) are trained',
    from: 'SkyRL PR #710 (the generation prompt and the \\n after <|im_end|> trained)',
    needsOwners: true,
  },
  'eos-not-trained': {
    id: 'eos-not-trained',
    summary: 'a generated end-of-turn token has mask 0, so the model never learns to stop',
    from: 'TRL #4974, TRL #1623',
    needsOwners: true,
  },
  'policy-not-trained': {
    id: 'policy-not-trained',
    summary: 'generated tokens (not an end of turn) have mask 0',
    from: 'ART #127, verl #3562',
    needsOwners: true,
  },
  'mask-shift': {
    id: 'mask-shift',
    summary: 'the mask is the correct one shifted by one position',
    from: 'verl #3562, OpenRLHF #973 (first response token and EOS lost)',
    needsOwners: true,
  },
  'length-mismatch': {
    id: 'length-mismatch',
    summary: 'ids, mask, log-probs or advantages have different lengths',
    from: 'any trainer dump that drops or pads one array',
    needsOwners: false,
  },
  'render-drift': {
    id: 'render-drift',
    summary:
      "the ids differ from the chat template's rendering (separator, split tool turns, vanished <think>)",
    from: 'TRL #5224, verl #6501, slime #2263',
    needsOwners: true,
  },
  'prefix-broken': {
    id: 'prefix-broken',
    summary: "a later turn's context does not start with the earlier turns' tokens",
    from: 'prime-rl PR #1383',
    needsOwners: false,
  },
  'logprob-gap': {
    id: 'logprob-gap',
    summary: 'sampler and trainer log-probs of a trained token are far apart',
    from: 'prime-rl PR #2786',
    needsOwners: false,
  },
  'mask-degenerate': {
    id: 'mask-degenerate',
    summary: 'no token is trained, or every token is',
    from: 'ART #127 (all-zero assistant mask)',
    needsOwners: false,
  },
  'pad-is-eos': {
    id: 'pad-is-eos',
    summary: "the tokenizer's pad is its EOS and the EOS is masked out with the padding",
    from: 'TRL #4974, TRL #1623',
    needsOwners: false,
  },
};

export interface Finding {
  /** 0-based index of the record (JSONL line) in the file. */
  sample: number;
  rule: RuleId;
  /** 0-based indices into the record's whole token sequence. */
  positions: number[];
  message: string;
}

export interface LintOptions {
  tok?: DumpTokenizer;
  /** Rules to run (default: all). */
  rules?: ReadonlySet<RuleId>;
  /** logprob-gap threshold in nats (default 2). */
  logprobGap?: number;
}

export interface SampleLint {
  findings: Finding[];
  owners: Owners;
}

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);

/** Lint one normalised sample: its findings (positions in the record's token sequence) and its owners. */
export function lintSample(s: DumpSample, opts: LintOptions = {}): SampleLint {
  const { tok } = opts;
  const on = (r: RuleId) => !opts.rules || opts.rules.has(r);
  const findings: Finding[] = [];
  const T = s.ids.length;
  const add = (rule: RuleId, positions: number[], message: string) => {
    if (on(rule))
      findings.push({ sample: s.record, rule, positions: positions.map((p) => p + s.offset), message });
  };
  const where = s.part ? ` (${s.part})` : '';
  const text = (p: number) => showToken(s.tokens?.[p] ?? tok?.text(s.ids[p]) ?? `#${s.ids[p]}`);
  const quote = (ps: number[]) =>
    ps
      .slice(0, 4)
      .map((p) => `${p + s.offset} "${text(p)}"`)
      .join(', ') + (ps.length > 4 ? ', …' : '');

  for (const issue of s.lengthIssues)
    add('length-mismatch', issue.position === null ? [] : [issue.position], issue.what + where);

  const mask: number[] = s.ids.map((_, i) => (s.lossMask[i] ? 1 : 0));
  const owners = ownersOf(s, tok, mask);
  const templated = owners.source !== 'mask';
  const ends = new Set(owners.ends);

  const trained = mask.reduce((a, m) => a + m, 0);
  let degenerate = false;
  if (T > 0 && (trained === 0 || trained === T)) {
    degenerate = true;
    add(
      'mask-degenerate',
      [],
      trained === 0
        ? `no token of ${T} is trained${where}`
        : `every one of ${T} tokens is trained, the prompt included${where}`,
    );
  }

  const padIsEos = tok?.padId !== undefined && (tok.padId === tok.eosId || tok.endIds.has(tok.padId));
  if (templated && !degenerate) {
    const expected = owners.owner.map((o) => (o === OWNER.policy ? 1 : 0));
    const differs = range(0, T).filter((i) => mask[i] !== expected[i]);
    const shift = differs.length > 0 && expected.some((e) => e) ? shiftOf(mask, expected) : 0;
    if (shift !== 0) {
      add(
        'mask-shift',
        differs,
        `the mask is the correct one shifted ${shift > 0 ? 'right' : 'left'} by one: ${differs.length} tokens wrong, ${quote(differs)}${where}`,
      );
    } else {
      for (const [rule, code, who] of [
        ['mask-on-tool', OWNER.tool, 'tool-response'],
        ['mask-on-prompt', OWNER.prompt, 'prompt'],
        ['mask-on-template', OWNER.template, 'template'],
      ] as const) {
        const ps = range(0, T).filter((i) => mask[i] && owners.owner[i] === code);
        if (ps.length) add(rule, ps, `${ps.length} ${who} tokens trained: ${quote(ps)}${where}`);
      }
      const eos = owners.ends.filter((i) => !mask[i]);
      const eosPad = padIsEos ? eos.filter((i) => s.ids[i] === tok?.padId) : [];
      const eosOther = eos.filter((i) => !eosPad.includes(i));
      if (eosPad.length)
        add(
          'pad-is-eos',
          eosPad,
          `pad id ${tok?.padId} is the EOS, and ${eosPad.length} generated EOS masked as padding: ${quote(eosPad)}${where}`,
        );
      if (eosOther.length)
        add(
          'eos-not-trained',
          eosOther,
          `${eosOther.length} generated end-of-turn tokens untrained: ${quote(eosOther)}${where}`,
        );
      const untrained = range(0, T).filter(
        (i) => !mask[i] && owners.owner[i] === OWNER.policy && !ends.has(i),
      );
      if (untrained.length)
        add(
          'policy-not-trained',
          untrained,
          `${untrained.length} generated tokens untrained: ${quote(untrained)}${where}`,
        );
    }
  } else if (!templated && padIsEos && tok?.padId !== undefined) {
    // Owners unknown: an EOS right after a trained token, itself untrained, is a generated EOS masked as padding.
    const ps = range(1, T).filter((i) => s.ids[i] === tok.padId && !mask[i] && mask[i - 1]);
    if (ps.length)
      add(
        'pad-is-eos',
        ps,
        `pad id ${tok.padId} is the EOS, and ${ps.length} EOS after generated tokens masked: ${quote(ps)}${where}`,
      );
  }

  if (tok && templated && (on('render-drift') || on('prefix-broken'))) {
    const drift = s.messages?.length ? renderDrift(s, tok) : undefined;
    for (const f of drift ?? checkStructure(s.ids, tok, owners))
      add('render-drift', f.positions, f.message + where);
  }

  if (s.previous) {
    const prev = s.previous.ids;
    let p = 0;
    while (p < prev.length && p < T && prev[p] === s.ids[p]) p++;
    if (p < prev.length)
      add(
        'prefix-broken',
        [Math.min(p, T - 1)],
        `this context departs from the earlier turn${s.previous.part ? ` (${s.previous.part})` : ''} at its token ${p}: ` +
          `${p < T ? `"${text(p)}"` : 'the end'} where the earlier turn has "${showToken(s.tokens?.[p] ?? tok?.text(prev[p]) ?? `#${prev[p]}`)}"${where}`,
      );
  }

  const a = s.samplerLogprobs;
  const b = s.trainerLogprobs;
  if (a && b) {
    const limit = opts.logprobGap ?? 2;
    const real = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);
    const ps = range(0, T).filter(
      (i) => mask[i] && real(a[i]) && real(b[i]) && Math.abs(a[i]! - b[i]!) > limit,
    );
    if (ps.length) {
      const worst = ps.reduce((w, i) => (Math.abs(a[i]! - b[i]!) > Math.abs(a[w]! - b[w]!) ? i : w), ps[0]);
      add(
        'logprob-gap',
        ps,
        `${ps.length} trained tokens with sampler and trainer log-probs more than ${limit} nats apart ` +
          `(largest ${Math.abs(a[worst]! - b[worst]!).toFixed(2)} at ${worst + s.offset} "${text(worst)}")${where}`,
      );
    }
  }
  return { findings, owners };
}

/** Owners of a sample: from the file, else from the template, then corrected by prime-rl's node provenance. */
export function ownersOf(s: DumpSample, tok: DumpTokenizer | undefined, mask: readonly number[]): Owners {
  if (s.owner) {
    // Generated ends: the last token of each policy run when it is an end marker (by id, or by its text).
    const own = s.owner;
    const looksEnd = (i: number) =>
      tok?.endIds.has(s.ids[i]) ||
      s.tokens?.[i] === CALL_END ||
      /^<\|(im_end|eot_id|eom_id|endoftext)\|>$|^<\/s>$/.test(s.tokens?.[i] ?? '');
    const ends = own
      .map((o, i) => (o === OWNER.policy && own[i + 1] !== OWNER.policy && looksEnd(i) ? i : -1))
      .filter((i) => i >= 0);
    return { owner: own, source: 'file' as OwnerSource, turns: [], ends };
  }
  const owners = inferOwners(s.ids, tok, mask);
  if (owners.source === 'template' && s.nodeStarts && s.nodeSampled) {
    // An assistant message the model did not sample (context written by the prompt) is prompt.
    s.nodeStarts.forEach((from, n) => {
      if (s.nodeSampled?.[n]) return;
      const to = s.nodeStarts?.[n + 1] ?? s.ids.length;
      for (let i = from; i < to; i++) if (owners.owner[i] === OWNER.policy) owners.owner[i] = OWNER.prompt;
    });
    owners.ends = owners.ends.filter((i) => owners.owner[i] === OWNER.policy);
  }
  if (owners.source === 'template') {
    // Assistant turns wholly untrained before the first trained token are context the sample was
    // given (per-turn samples, few-shot examples), not generated here: prompt.
    const first = mask.indexOf(1);
    for (const t of owners.turns) {
      const last = t.endMarker >= 0 ? t.endMarker : t.bodyEnd - 1;
      if (first < 0 || t.role !== 'assistant' || last >= first) continue;
      for (let i = t.bodyStart; i <= last; i++)
        if (owners.owner[i] === OWNER.policy) owners.owner[i] = OWNER.prompt;
    }
    owners.ends = owners.ends.filter((i) => owners.owner[i] === OWNER.policy);
  }
  return owners;
}

/** +1 if mask[i] = expected[i-1] everywhere (shifted right), -1 if mask[i] = expected[i+1], else 0. */
function shiftOf(mask: readonly number[], expected: readonly number[]): number {
  const T = mask.length;
  let right = mask[0] === 0;
  let left = mask[T - 1] === 0;
  for (let i = 0; i < T && (right || left); i++) {
    if (i > 0 && mask[i] !== expected[i - 1]) right = false;
    if (i < T - 1 && mask[i] !== expected[i + 1]) left = false;
  }
  return right ? 1 : left ? -1 : 0;
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

/** render-drift where the record carries messages: re-render them and compare with the ids (undefined: cannot). */
function renderDrift(
  s: DumpSample,
  tok: DumpTokenizer,
): { positions: number[]; message: string }[] | undefined {
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
  return (best ?? []).map((h) => {
    const file = show(s.ids, h.aFrom, h.aTo);
    const tpl = show(bestIds, h.bFrom, h.bTo);
    const nl = (ids: readonly number[], f: number, t: number) =>
      t > f && ids.slice(f, t).every((id) => tok.text(id).trim() === '');
    const thinkId = tok.id('<think>');
    const opens = [tok.id('<|im_start|>'), tok.id('<|start_header_id|>')].filter((x) => x !== undefined);
    const opensTurn = (ids: readonly number[], f: number, t: number) =>
      ids.slice(f, t).some((id) => opens.includes(id));
    const kind =
      nl(bestIds, h.bFrom, h.bTo) && h.aFrom === h.aTo
        ? 'missing separator'
        : nl(s.ids, h.aFrom, h.aTo) && h.bFrom === h.bTo
          ? 'extra separator'
          : thinkId !== undefined &&
              s.ids.slice(h.aFrom, h.aTo).includes(thinkId) &&
              !bestIds.slice(h.bFrom, h.bTo).includes(thinkId)
            ? 'a <think> the template drops'
            : opensTurn(s.ids, h.aFrom, h.aTo) && !opensTurn(bestIds, h.bFrom, h.bTo)
              ? 'an extra turn (e.g. tool responses split into separate turns)'
              : opensTurn(bestIds, h.bFrom, h.bTo) && !opensTurn(s.ids, h.aFrom, h.aTo)
                ? 'a missing turn (e.g. turns merged)'
                : 'different tokens';
    return {
      positions: h.aTo > h.aFrom ? range(h.aFrom, h.aTo) : [Math.min(h.aFrom, T - 1)],
      message: `${kind}: the template renders ${tpl} where the ids have ${file}`,
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
