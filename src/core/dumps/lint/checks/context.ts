/**
 * What every lint check of one sample reads, computed once per sample: the 0/1 mask, the owners, and
 * the facts several rules share (whether the mask is degenerate, whether it is the owners' mask
 * shifted by one, which generated ends are untrained). A check returns Hits: positions in the
 * sample's own frame (0 = its first token) and a message; the caller adds the sample's offset and
 * its part.
 */

import type { Result } from '../../../schema.js';
import { type DumpSample, OWNER } from '../../readers/sample.js';
import { type DumpTokenizer, showToken } from '../../templates/hf-tokenizer.js';
import { type Owners, ownersOf, readerFor } from '../../templates/owners.js';
import type { TemplateReader } from '../../templates/template-reader.js';
import { captureOwners } from './capture.js';

/** One finding of a check: token positions in the sample [P] and a one-line explanation. */
export interface Hit {
  positions: number[];
  message: string;
}

export interface CheckOptions {
  tok?: DumpTokenizer;
  /** logprob-gap threshold in nats (default 2). */
  logprobGap?: number;
  /** Template arguments for every record (`--template-kwargs`); a record's `chat_template_kwargs` add to them. */
  templateKwargs?: Readonly<Record<string, unknown>>;
}

export interface SampleContext {
  s: DumpSample;
  tok: DumpTokenizer | undefined;
  opts: CheckOptions;
  /** Number of tokens. */
  T: number;
  /** lossMask as 0/1 over every token [T] (a missing value is 0). */
  mask: number[];
  owners: Owners;
  /** The chat template's reader for this sample's template arguments (undefined without a tokenizer). */
  reader: Result<TemplateReader, string> | undefined;
  /** Things a check says without finding anything (a record the template cannot render): the file's notes. */
  notes: string[];
  /** Number of tokens with mask 1. */
  trained: number;
  /** Owners come from the template or the file, not from the mask alone. */
  templated: boolean;
  /** No token trained, or every token. */
  degenerate: boolean;
  /** The tokenizer's pad id is an end-of-turn id. */
  padIsEos: boolean;
  /** Whether the mask is checked against the owners: owners known and the mask not degenerate. */
  ownerChecks: boolean;
  /** The mask the owners imply (1 on policy tokens) [T]. */
  expected: number[];
  /** Positions where the mask differs from `expected`. */
  differs: number[];
  /** +1 / -1 when the mask is `expected` shifted right / left by one, else 0. */
  shift: number;
  /** Generated ends left untrained: those that are the pad id when pad is EOS, and the others. */
  untrainedEnds: { pad: number[]; other: number[] };
  /** A token's text as shown in messages (`#id` without a tokenizer). */
  text(p: number): string;
  /** Up to four positions with their texts, in the record's frame: `12 "<|im_end|>", 13 "⏎", …`. */
  quote(ps: readonly number[]): string;
}

/** The positions i in `[from, to)` where `keep(i)`, ascending. */
export function positionsWhere(from: number, to: number, keep: (i: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) if (keep(i)) out.push(i);
  return out;
}

/** `lossMask` as 0/1 over `T` tokens (a missing value is 0). */
function zeroOne(lossMask: readonly number[], T: number): number[] {
  const out = new Array<number>(T);
  for (let i = 0; i < T; i++) out[i] = lossMask[i] ? 1 : 0;
  return out;
}

/** 1 where the owner is the policy, else 0 [T]. */
function policyMask(o: Owners): number[] {
  const owner = o.owner;
  const out = new Array<number>(owner.length);
  for (let i = 0; i < owner.length; i++) out[i] = owner[i] === OWNER.policy ? 1 : 0;
  return out;
}

/** The positions where two arrays of `T` values differ, ascending. */
function differences(a: readonly number[], b: readonly number[], T: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < T; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

/** The context of sample `s`, its owners found with `opts.tok`. */
export function sampleContext(s: DumpSample, opts: CheckOptions): SampleContext {
  const { tok } = opts;
  const T = s.ids.length;
  const mask = zeroOne(s.lossMask, T);
  const reader = tok ? readerFor(tok, { ...opts.templateKwargs, ...s.templateKwargs }) : undefined;
  const endIds = reader?.ok ? reader.value.endIds : tok?.endIds;
  const notes: string[] = [];
  let owners = captureOwners(s, ownersOf(s, tok, mask, opts.templateKwargs), endIds, notes);
  const templated = owners.source !== 'mask';
  let trained = 0;
  for (let i = 0; i < T; i++) trained += mask[i];
  const degenerate = T > 0 && (trained === 0 || trained === T);
  const padIsEos = tok?.padId !== undefined && (tok.padId === tok.eosId || endIds?.has(tok.padId) === true);
  const ownerChecks = templated && !degenerate;
  let expected = policyMask(owners);
  let differs = ownerChecks ? differences(mask, expected, T) : [];
  let shift = differs.length > 0 && expected.some((e) => e) ? shiftOf(mask, expected) : 0;
  // Where the mask settles an owner (a pre-filled header, templates' optional generations), a
  // shifted mask settles it otherwise: read the owners with the mask shifted back, and keep them
  // when the mask is their correct one shifted by one.
  if (
    ownerChecks &&
    differs.length &&
    !shift &&
    reader?.ok &&
    reader.value.structure.optionalGeneration.length
  )
    for (const dir of [1, -1]) {
      // The end the shift drops is taken from the owners read with the mask as it is.
      const intended = dir === 1 ? [...mask.slice(1), expected[T - 1]] : [expected[0], ...mask.slice(0, -1)];
      const o = captureOwners(s, ownersOf(s, tok, intended, opts.templateKwargs), endIds);
      const e = policyMask(o);
      if (e.some((x) => x) && shiftOf(mask, e) === dir) {
        owners = o;
        expected = e;
        differs = differences(mask, e, T);
        shift = dir;
        break;
      }
    }
  const eos = owners.ends.filter((i) => !mask[i]);
  const pad = padIsEos ? eos.filter((i) => s.ids[i] === tok?.padId) : [];
  const text = (p: number) => showToken(s.tokens?.[p] ?? tok?.text(s.ids[p]) ?? `#${s.ids[p]}`);
  return {
    s,
    tok,
    opts,
    T,
    mask,
    owners,
    reader,
    notes,
    trained,
    templated,
    degenerate,
    padIsEos,
    ownerChecks,
    expected,
    differs,
    shift,
    untrainedEnds: { pad, other: eos.filter((i) => !pad.includes(i)) },
    text,
    quote: (ps) =>
      ps
        .slice(0, 4)
        .map((p) => `${p + s.offset} "${text(p)}"`)
        .join(', ') + (ps.length > 4 ? ', …' : ''),
  };
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
