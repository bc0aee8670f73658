/**
 * Who wrote each token, from the token stream and the chat template's markers:
 * template (role headers, generation prompts, separators such as the `\n` after `<|im_end|>`),
 * prompt (system and user text), policy (what the assistant generated, its end-of-turn token
 * included), tool (tool responses). Families: ChatML (Qwen2.5, Qwen3 with `<think>`, Hermes `tool`
 * turns, Qwen's `<tool_response>` inside user turns) and Llama 3.x (`<|start_header_id|>`, role
 * `ipython`, `<|eot_id|>`/`<|eom_id|>`). Unknown templates: owners from the mask alone, said so.
 * `ownersOf` gives a dump sample's owners: the file's own when it has them (Episode Lab's format),
 * else the template's, corrected by what the sample says was context (unsampled nodes, earlier turns).
 */

import { CALL_END } from '../gym/grammar.js';
import type { DumpTokenizer } from './hf-tokenizer.js';
import { type DumpSample, OWNER } from './sample.js';

/** How the owners of a sample were found. */
export type OwnerSource = 'file' | 'template' | 'mask';

/** One turn of a rendered conversation, located in the token stream. */
export interface Turn {
  role: string;
  /** Index of the turn's first token (its header), of its first body token, and one past its body. */
  start: number;
  bodyStart: number;
  bodyEnd: number;
  /** Index of the end-of-turn marker, or -1 when the sequence stops before it (truncated). */
  endMarker: number;
}

export interface Owners {
  owner: number[];
  source: OwnerSource;
  turns: Turn[];
  /** Positions of generated end-of-turn tokens (owner policy). */
  ends: number[];
}

const isBlank = (s: string) => s.trim() === '';

/** Owners of ids [T] from the template markers, or from `lossMask` [T] when the family is unknown. */
export function inferOwners(
  ids: readonly number[],
  tok: DumpTokenizer | undefined,
  lossMask?: readonly number[],
): Owners {
  if (tok?.family === 'chatml') return chatml(ids, tok, lossMask);
  if (tok?.family === 'llama3') return llama3(ids, tok);
  const owner = ids.map((_, i) => (lossMask?.[i] ? OWNER.policy : OWNER.prompt));
  const ends = tok
    ? ids.map((id, i) => (tok.endIds.has(id) && owner[i] === OWNER.policy ? i : -1)).filter((i) => i >= 0)
    : [];
  return { owner, source: 'mask', turns: [], ends };
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
    return { owner: own, source: 'file', turns: [], ends };
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

function chatml(ids: readonly number[], tok: DumpTokenizer, lossMask?: readonly number[]): Owners {
  const T = ids.length;
  const start = tok.id('<|im_start|>');
  const end = tok.id('<|im_end|>');
  const think = tok.id('<think>');
  const thinkEnd = tok.id('</think>');
  const respOpen = tok.id('<tool_response>');
  const respClose = tok.id('</tool_response>');
  const owner = new Array<number>(T).fill(OWNER.template);
  const turns: Turn[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < T) {
    if (ids[i] !== start) {
      i++;
      continue;
    }
    const turnStart = i;
    let role = '';
    let j = i + 1;
    // the header: <|im_start|> role \n
    for (; j < T && ids[j] !== start && ids[j] !== end; j++) {
      const s = tok.text(ids[j]);
      const nl = s.indexOf('\n');
      if (nl >= 0) {
        role += s.slice(0, nl);
        j++;
        break;
      }
      role += s;
    }
    role = role.trim();
    const bodyStart = j;
    while (j < T && ids[j] !== end && ids[j] !== start) j++;
    const bodyEnd = j;
    const endMarker = j < T && ids[j] === end ? j : -1;
    turns.push({ role, start: turnStart, bodyStart, bodyEnd, endMarker });
    if (role === 'assistant') {
      for (let k = bodyStart; k < bodyEnd; k++) owner[k] = OWNER.policy;
      if (endMarker >= 0) {
        owner[endMarker] = OWNER.policy;
        ends.push(endMarker);
      }
      // Qwen3's non-thinking generation prompt ends with an empty <think>\n\n</think>\n\n written by
      // the template: when none of it is trained, it is template, not policy.
      if (think !== undefined && ids[bodyStart] === think && lossMask) {
        let k = bodyStart + 1;
        while (k < bodyEnd && ids[k] !== thinkEnd && isBlank(tok.text(ids[k]))) k++;
        if (k < bodyEnd && ids[k] === thinkEnd) {
          k++;
          while (k < bodyEnd && isBlank(tok.text(ids[k]))) k++;
          const span = [...Array(k - bodyStart).keys()].map((d) => bodyStart + d);
          if (k < bodyEnd && span.every((p) => !lossMask[p]) && lossMask.slice(k, bodyEnd).some((m) => m))
            for (const p of span) owner[p] = OWNER.template;
        }
      }
    } else {
      const bodyOwner =
        role === 'tool' || role === 'ipython' || role === 'observation' ? OWNER.tool : OWNER.prompt;
      let inResponse = false;
      const toolOnly =
        bodyOwner === OWNER.prompt &&
        respOpen !== undefined &&
        onlyResponses(ids, tok, bodyStart, bodyEnd, respOpen, respClose);
      for (let k = bodyStart; k < bodyEnd; k++) {
        if (ids[k] === respOpen) {
          inResponse = true;
          owner[k] = OWNER.template;
        } else if (ids[k] === respClose) {
          inResponse = false;
          owner[k] = OWNER.template;
        } else if (inResponse) owner[k] = OWNER.tool;
        else if (toolOnly)
          owner[k] = OWNER.template; // whitespace between <tool_response> blocks of a tool-only user turn
        else owner[k] = bodyOwner;
      }
    }
    i = endMarker >= 0 ? endMarker + 1 : bodyEnd;
  }
  return { owner, source: 'template', turns, ends };
}

/** Whether a user-turn body holds only <tool_response> blocks and whitespace between them. */
function onlyResponses(
  ids: readonly number[],
  tok: DumpTokenizer,
  from: number,
  to: number,
  open: number,
  close: number | undefined,
): boolean {
  let depth = 0;
  let any = false;
  for (let k = from; k < to; k++) {
    if (ids[k] === open) {
      depth++;
      any = true;
    } else if (ids[k] === close) depth--;
    else if (depth === 0 && !isBlank(tok.text(ids[k]))) return false;
  }
  return any;
}

function llama3(ids: readonly number[], tok: DumpTokenizer): Owners {
  const T = ids.length;
  const header = tok.id('<|start_header_id|>');
  const headerEnd = tok.id('<|end_header_id|>');
  const owner = new Array<number>(T).fill(OWNER.template);
  const turns: Turn[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < T) {
    if (ids[i] !== header) {
      i++;
      continue;
    }
    const turnStart = i;
    let j = i + 1;
    let role = '';
    while (j < T && ids[j] !== headerEnd && ids[j] !== header) role += tok.text(ids[j++]);
    role = role.trim();
    if (j < T && ids[j] === headerEnd) j++;
    if (j < T && isBlank(tok.text(ids[j])) && tok.text(ids[j]).includes('\n')) j++;
    const bodyStart = j;
    while (j < T && !tok.endIds.has(ids[j]) && ids[j] !== header) j++;
    const bodyEnd = j;
    const endMarker = j < T && tok.endIds.has(ids[j]) ? j : -1;
    turns.push({ role, start: turnStart, bodyStart, bodyEnd, endMarker });
    const bodyOwner =
      role === 'assistant' ? OWNER.policy : role === 'ipython' || role === 'tool' ? OWNER.tool : OWNER.prompt;
    for (let k = bodyStart; k < bodyEnd; k++) owner[k] = bodyOwner;
    if (role === 'assistant' && endMarker >= 0) {
      owner[endMarker] = OWNER.policy;
      ends.push(endMarker);
    }
    i = endMarker >= 0 ? endMarker + 1 : bodyEnd;
  }
  return { owner, source: 'template', turns, ends };
}

/** A place where the ids break the template's structure: position, and what is wrong there. */
export interface StructureIssue {
  positions: number[];
  message: string;
}

/**
 * Check ids [T] against the template's structure when the record carries no messages to re-render:
 * what opens each turn, what must follow its end marker, how tool responses are wrapped.
 */
export function checkStructure(ids: readonly number[], tok: DumpTokenizer, owners: Owners): StructureIssue[] {
  const issues: StructureIssue[] = [];
  const T = ids.length;
  const show = (p: number) => (p < T ? JSON.stringify(tok.text(ids[p])) : 'the end');
  const tail = (p: number) => ids.slice(p).every((id) => id === tok.padId || id === tok.eosId);
  if (tok.family === 'chatml') {
    const start = tok.id('<|im_start|>');
    const respOpen = tok.id('<tool_response>');
    const known = new Set(['system', 'user', 'assistant', 'tool']);
    for (const t of owners.turns) {
      if (!known.has(t.role))
        issues.push({
          positions: [t.start],
          message: `a turn opens with role ${JSON.stringify(t.role)}, not a ChatML role`,
        });
      if (t.endMarker < 0 || t.endMarker + 1 >= T || tail(t.endMarker + 1)) continue;
      const p = t.endMarker + 1;
      const s = tok.text(ids[p]);
      if (ids[p] === start)
        issues.push({
          positions: [p],
          message:
            'missing separator: <|im_end|> is followed by <|im_start|>; the template writes "\\n" between them',
        });
      else if (s !== '\n')
        issues.push({
          positions: [p],
          message: `${isBlank(s) ? 'extra separator' : 'unexpected token'}: the template writes "\\n" after <|im_end|>, the ids have ${show(p)}`,
        });
      else if (p + 1 < T && ids[p + 1] !== start && !tail(p + 1))
        issues.push({
          positions: [p + 1],
          message: `${isBlank(tok.text(ids[p + 1])) ? 'extra separator' : 'unexpected token'}: after <|im_end|> "\\n" the template opens a turn, the ids have ${show(p + 1)}`,
        });
    }
    // Parallel tool responses rendered as separate user turns, where the template merges them into one.
    const merges = tok.chatTemplate?.includes('<tool_response>') && tok.chatTemplate.includes('!= "tool"');
    if (merges && respOpen !== undefined)
      for (let k = 1; k < owners.turns.length; k++) {
        const a = owners.turns[k - 1];
        const b = owners.turns[k];
        const toolOnly = (t: Turn) =>
          t.role === 'user' &&
          onlyResponses(ids, tok, t.bodyStart, t.bodyEnd, respOpen, tok.id('</tool_response>'));
        if (toolOnly(a) && toolOnly(b))
          issues.push({
            positions: [b.start],
            message:
              'tool responses split across turns: the template puts consecutive tool messages in one user turn',
          });
      }
  } else if (tok.family === 'llama3') {
    const header = tok.id('<|start_header_id|>');
    for (const t of owners.turns) {
      if (t.bodyStart > 0 && !tok.text(ids[t.bodyStart - 1]).includes('\n') && t.bodyStart < T)
        issues.push({
          positions: [t.bodyStart],
          message: 'missing separator: the template writes "\\n\\n" after <|end_header_id|>',
        });
      if (t.endMarker < 0 || t.endMarker + 1 >= T || tail(t.endMarker + 1)) continue;
      const p = t.endMarker + 1;
      if (ids[p] !== header)
        issues.push({
          positions: [p],
          message: `after the end of a turn the template opens a header, the ids have ${show(p)}`,
        });
    }
  }
  return issues;
}
