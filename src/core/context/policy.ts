/**
 * Context policies (section 12.4): what each call of an episode gets to see of the history.
 *
 * A `ContextPolicy` is a JSON value so that configs, run files and the inspector's editor can carry
 * it; `parseContextPolicy` validates one, `contextView` applies one to an episode's token log.
 *
 * - `full`: the whole history (the single-sequence view of chapter 5).
 * - `keepObs k`: observation masking, exactly the chapter's `context_view`: before call c, the tool
 *   tokens of every turn t < c - k are dropped; their `<obs>` `</obs>` template tokens stay as an
 *   empty placeholder. k = 0 drops every tool output.
 * - `truncateOldest maxTokens`: drop whole turns (a turn = the call's tokens and its observation
 *   with its template tokens), oldest first, until the view has at most maxTokens tokens. The
 *   prompt is never dropped; if the prompt alone is longer than maxTokens, the view is the prompt
 *   (the Episode guarantees that the prompt leaves room for a call).
 * - `summarize`: exercise 3: the source that a successful `read` returned is replaced by one token,
 *   the operation `inferOp` reads off it (`ok` when it shows no bug); a trailing remaining-budget
 *   suffix (`turns left N`) is kept. Every other observation is kept.
 *
 * Length: the view of a call has at most `maxLen - MAX_CALL_TOKENS` tokens (250 for TinyAgent),
 * so that the call fits after it. truncateOldest guarantees it by construction (maxTokens <= 250,
 * and the Episode keeps the prompt that short). full, keepObs and summarize never lengthen the
 * history, and an Episode never lets its history before a call grow past that bound (it ends
 * `truncated` first), so their views fit too; given a longer history, `contextView` throws rather
 * than return a view the model cannot read. (k = the number of calls of a *finished* episode gives
 * the whole episode, its last call included: at most `maxLen` tokens.)
 */

import * as v from 'valibot';
import { CONTEXT_LENGTH, MAX_CALL_TOKENS, OWNER } from '../gym/episode.js';
import { inferOpOfWords, parseCall } from '../gym/grammar.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { int, parseOrThrow, show, strictEntries } from '../schema.js';

export type ContextPolicy =
  | { kind: 'full' }
  | { kind: 'keepObs'; k: number }
  | { kind: 'truncateOldest'; maxTokens: number }
  | { kind: 'summarize' };

export const CONTEXT_POLICY_KINDS = ['full', 'keepObs', 'truncateOldest', 'summarize'] as const;

/** The longest view that leaves room for a call in TinyAgent's context. */
export const MAX_VIEW_TOKENS = CONTEXT_LENGTH - MAX_CALL_TOKENS;

/** The largest k of keep_obs (beyond the longest episode's calls every k is the full history). */
export const MAX_KEEP_OBS = 64;

/** A context policy as JSON, one shape per kind. */
export const ContextPolicySchema = v.variant(
  'kind',
  [
    strictEntries({ kind: v.literal('full') }),
    strictEntries({ kind: v.literal('keepObs'), k: int(0, MAX_KEEP_OBS) }),
    strictEntries({ kind: v.literal('truncateOldest'), maxTokens: int(1, MAX_VIEW_TOKENS) }),
    strictEntries({ kind: v.literal('summarize') }),
  ],
  (i) =>
    i.path?.length
      ? `expected one of ${CONTEXT_POLICY_KINDS.map((k) => `"${k}"`).join(', ')}, got ${show(i.input)}`
      : `expected an object like {"kind": "keepObs", "k": 1}, got ${show(i.input)}`,
);

/** A validated ContextPolicy; throws an error that names the bad field. */
export function parseContextPolicy(x: unknown, where = 'contextPolicy'): ContextPolicy {
  return parseOrThrow(ContextPolicySchema, x, where);
}

/** One line for the UI. */
export function describeContextPolicy(p: ContextPolicy): string {
  switch (p.kind) {
    case 'full':
      return 'full history: every call sees everything before it';
    case 'keepObs':
      return p.k === 0
        ? 'keep_obs=0: every tool output is replaced by an empty <obs> </obs> placeholder'
        : `keep_obs=${p.k}: tool outputs older than the last ${p.k} call${p.k === 1 ? '' : 's'} become empty <obs> </obs> placeholders`;
    case 'truncateOldest':
      return `truncate oldest: whole turns are dropped, oldest first, until the view has at most ${p.maxTokens} tokens (the prompt stays)`;
    case 'summarize':
      return "summarize: each read's source is replaced by the operation inferOp reads off it";
  }
}

/** The token log of an episode (an Episode, a Trajectory, or anything with one entry per token). */
export interface EpisodeLike {
  ids: readonly number[];
  owner: readonly number[];
  turn: readonly number[];
}

/** An observation that the view shows as a placeholder: emptied (keepObs) or summarised. */
export interface Placeholder {
  /** The turn whose observation it is. */
  turn: number;
  /** Index in the view of its `<obs>` token. */
  at: number;
  /** How many tool tokens were removed. */
  dropped: number;
  /** The token that replaced them (summarize), if any. */
  summary?: string;
}

export interface ContextView {
  /** The tokens call k sees, in order [V]. */
  ids: number[];
  owner: number[];
  turn: number[];
  /** One entry per token of the episode given: true when the token is in the view (false after call k's start). */
  kept: boolean[];
  /** Number of tokens before call k in the episode given (the full-history view's length). */
  prefixLength: number;
  placeholders: Placeholder[];
  /** Turns dropped whole (truncateOldest). */
  droppedTurns: number[];
}

/** The tokens that call k sees under `policy`: episode tokens [T] -> view [V] (see the file comment). */
export function contextView(
  ep: EpisodeLike,
  k: number,
  policy: ContextPolicy,
  tok: Pick<Tokenizer, 'id' | 'token' | 'decode' | 'obsStartId'>,
  maxLen = CONTEXT_LENGTH,
): ContextView {
  const T = ep.ids.length;
  if (ep.owner.length !== T || ep.turn.length !== T)
    throw new Error(
      `contextView: ids, owner and turn must have one entry per token (${T}, ${ep.owner.length}, ${ep.turn.length})`,
    );
  const nCalls = new Set(ep.turn.filter((_, i) => ep.owner[i] === OWNER.policy)).size;
  if (!Number.isInteger(k) || k < 0 || k > nCalls)
    throw new Error(`contextView: call index ${k} is outside 0..${nCalls} (the episode has ${nCalls} calls)`);
  let prefixLength = ep.ids.findIndex((_, i) => ep.owner[i] === OWNER.policy && ep.turn[i] === k);
  if (prefixLength < 0) prefixLength = T;
  const kept = ep.ids.map((_, i) => i < prefixLength);
  /** Replacement token ids inserted after the `<obs>` token at this original index. */
  const inserted = new Map<number, { turn: number; ids: number[]; dropped: number; summary?: string }>();
  const droppedTurns: number[] = [];

  const toolTokensOf = (t: number) =>
    range(prefixLength).filter((i) => ep.owner[i] === OWNER.tool && ep.turn[i] === t);
  const obsStartOf = (t: number) =>
    range(prefixLength).find(
      (i) => ep.owner[i] === OWNER.template && ep.turn[i] === t && ep.ids[i] === tok.obsStartId,
    );

  switch (policy.kind) {
    case 'full':
      break;
    case 'keepObs':
      for (let t = 0; t < k - policy.k; t++) {
        const tool = toolTokensOf(t);
        for (const i of tool) kept[i] = false;
        const at = obsStartOf(t);
        if (at !== undefined && tool.length > 0) inserted.set(at, { turn: t, ids: [], dropped: tool.length });
      }
      break;
    case 'summarize':
      for (let t = 0; t < k; t++) {
        const callIds = range(prefixLength).filter((i) => ep.owner[i] === OWNER.policy && ep.turn[i] === t);
        const call = parseCall(tok.decode(callIds.map((i) => ep.ids[i])));
        const tool = toolTokensOf(t);
        const at = obsStartOf(t);
        if (!call.ok || call.tool !== 'read' || tool.length === 0 || at === undefined) continue;
        const words = tool.map((i) => tok.token(ep.ids[i]));
        if (words[0] === 'error') continue;
        const suffix = budgetSuffixLength(words);
        const source = tool.slice(0, tool.length - suffix);
        const summary =
          inferOpOfWords(
            words
              .slice(0, words.length - suffix)
              .join(' ')
              .split(/\s+/),
          ) ?? 'ok';
        for (const i of source) kept[i] = false;
        inserted.set(at, { turn: t, ids: [tok.id(summary)], dropped: source.length, summary });
      }
      break;
    case 'truncateOldest': {
      let length = prefixLength;
      for (let t = 0; t < k && length > policy.maxTokens; t++) {
        const turnTokens = range(prefixLength).filter(
          (i) => ep.owner[i] !== OWNER.prompt && ep.turn[i] === t,
        );
        for (const i of turnTokens) kept[i] = false;
        length -= turnTokens.length;
        droppedTurns.push(t);
      }
      break;
    }
  }

  const view: ContextView = {
    ids: [],
    owner: [],
    turn: [],
    kept,
    prefixLength,
    placeholders: [],
    droppedTurns,
  };
  for (let i = 0; i < prefixLength; i++) {
    if (!kept[i]) continue;
    view.ids.push(ep.ids[i]);
    view.owner.push(ep.owner[i]);
    view.turn.push(ep.turn[i]);
    const ins = inserted.get(i);
    if (ins) {
      view.placeholders.push({
        turn: ins.turn,
        at: view.ids.length - 1,
        dropped: ins.dropped,
        ...(ins.summary ? { summary: ins.summary } : {}),
      });
      for (const id of ins.ids) {
        view.ids.push(id);
        view.owner.push(OWNER.tool);
        view.turn.push(ins.turn);
      }
    }
  }
  // A call that follows in the log had to fit after its view; k = nCalls (the next call of an
  // episode in progress, or the whole of a finished one) is bounded by the context itself.
  const limit = k < nCalls ? maxLen - MAX_CALL_TOKENS : maxLen;
  if (view.ids.length > limit)
    throw new Error(
      `contextView: the view of call ${k} has ${view.ids.length} tokens, more than the ${limit} that ` +
        (k < nCalls ? `leave room for a call in ${maxLen}` : `fit in the context`),
    );
  return view;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Length of a trailing `turns left D D` suffix (the remaining budget, exercise 4), 0 if none. */
function budgetSuffixLength(words: readonly string[]): number {
  let j = words.length;
  while (j > 0 && /^[0-9]$/.test(words[j - 1])) j--;
  if (j === words.length || j < 2 || words[j - 2] !== 'turns' || words[j - 1] !== 'left') return 0;
  return words.length - (j - 2);
}
