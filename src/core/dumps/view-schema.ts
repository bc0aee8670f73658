/**
 * The shapes a viewer is given of a dump file (view.ts computes them): the summary of the whole
 * file and the view of one sample. Each is a schema, which checks it where it crosses a process
 * boundary, and a type, which is the schema's output. This module imports no Node module, so the
 * webview may check with it too.
 */
import * as v from 'valibot';
import { MAX_TRAJECTORY_TOKENS } from '../gym/trajectory-json.js';
import {
  anyText,
  bool,
  finite,
  int,
  list,
  MAX_PATH,
  numbers,
  oneOf,
  strict,
  strings,
  text,
} from '../schema.js';
import { DUMP_FORMATS } from './formats/index.js';

const nullableNumbers = (max: number) =>
  v.custom<(number | null)[]>(
    (x) =>
      Array.isArray(x) &&
      x.length <= max &&
      x.every((n) => n === null || (typeof n === 'number' && Number.isFinite(n))),
    'expected numbers or null',
  );
const NullableNumbers = nullableNumbers(MAX_TRAJECTORY_TOKENS);

/**
 * What the episode table shows of each record [R] (null where the file does not say): the first
 * sample's reward, step and group, the tokens of all its samples, its policy turns (turns the
 * chat template marks as the assistant's; null when owners come from the mask alone), and the
 * start of its text (at most RECORD_TEXT_CHARS characters) for a free-text search.
 */
export const RecordStatsSchema = strict({
  reward: nullableNumbers(10_000_000),
  step: nullableNumbers(10_000_000),
  group: nullableNumbers(10_000_000),
  tokens: numbers(10_000_000),
  turns: nullableNumbers(10_000_000),
  text: strings(10_000_000),
});
export type RecordStats = v.InferOutput<typeof RecordStatsSchema>;
/** How much of a record's text the summary keeps for search. */
export const RECORD_TEXT_CHARS = 1000;

/** The summary of a linted (or only indexed) file: its byte index and its findings per rule and per record. */
export const DumpFileSummarySchema = strict({
  file: text(MAX_PATH),
  format: oneOf(DUMP_FORMATS),
  records: int(0, 1e9),
  /** Byte offset and length of each record's line [R], to read one back. */
  offsets: numbers(10_000_000),
  lengths: numbers(10_000_000),
  /** Findings per record [R]. */
  findingsPerRecord: numbers(10_000_000),
  /** Rules that fired, in RULE_IDS order: how many findings, in how many records, and what the rule means. */
  rules: list(
    strict({
      rule: text(40),
      findings: int(0, 1e12),
      samples: int(0, 1e12),
      summary: anyText(1000),
      from: anyText(1000),
      /** The records (0-based lines) with findings of this rule, ascending (the first 100 000). */
      records: numbers(100_000),
    }),
    0,
    64,
  ),
  /** Lines that are not records of the format, described (the first 20). */
  rejections: list(anyText(10_000), 0, 100),
  /** The records (0-based lines) that are not records of the format, ascending (none known before the whole file is linted). */
  rejected: v.optional(numbers(10_000_000)),
  tokenizer: v.nullable(anyText(MAX_PATH)),
  /** How owners were found: from the file, the template's markers, or the mask alone. */
  ownerSources: list(text(20), 0, 8),
  /** What the viewer should say about the file (no tokenizer, an unknown template, ...). */
  notes: list(anyText(10_000), 0, 20),
  cancelled: bool(),
  /** Per-record figures for the episode table (absent when the file was only indexed). */
  recordStats: v.optional(RecordStatsSchema),
});
export type DumpFileSummary = v.InferOutput<typeof DumpFileSummarySchema>;

/** One sample as the strip shows it: per token [T]. */
export const DumpViewSchema = strict({
  record: int(0, 1e9),
  /** Where in the record (e.g. `trace 0 branch 1`), or null. */
  part: v.nullable(anyText(200)),
  /** Position of token 0 in the record's whole sequence (findings' positions are in that frame). */
  offset: int(0, 1e12),
  /** Token texts with whitespace made visible, or `#id` without a tokenizer. */
  tokens: strings(MAX_TRAJECTORY_TOKENS),
  ids: numbers(MAX_TRAJECTORY_TOKENS),
  owner: numbers(MAX_TRAJECTORY_TOKENS),
  /** Turn index of each token (0 before the first turn found). */
  turn: numbers(MAX_TRAJECTORY_TOKENS),
  lossMask: numbers(MAX_TRAJECTORY_TOKENS),
  samplerLogprobs: v.nullable(NullableNumbers),
  trainerLogprobs: v.nullable(NullableNumbers),
  advantages: v.nullable(numbers(MAX_TRAJECTORY_TOKENS)),
  reward: v.nullable(finite()),
  step: v.nullable(finite()),
  group: v.nullable(finite()),
  /** The findings on this sample (rules.ts's Finding). */
  findings: list(
    strict({
      sample: int(0, 1e9),
      rule: text(40),
      positions: numbers(MAX_TRAJECTORY_TOKENS),
      message: anyText(10_000),
    }),
    0,
    100_000,
  ),
  ownerSource: text(20),
  roles: list(anyText(100), 0, 100_000),
});
export type DumpView = v.InferOutput<typeof DumpViewSchema>;
