/**
 * The normalised dump sample every reader produces, whatever the trainer that wrote the file.
 *
 * All per-token arrays are aligned with `ids` [T]: index i describes token ids[i].
 * - `lossMask[i]` is 1 where the loss contains the term for predicting ids[i] (the token is
 *   trained), 0 elsewhere. Formats that store the mask per predicted position [T-1] (Episode Lab's
 *   own `actionMask[i]` = "ids[i+1] was sampled") are shifted by one on reading, so that
 *   lossMask[0] = 0 and lossMask[i+1] = actionMask[i].
 * - `samplerLogprobs[i]` / `trainerLogprobs[i]`: log-prob of ids[i] given ids[0..i-1] under the
 *   inference engine that sampled it and under the trainer; null where the file has no real value.
 * - `owner[i]`: an OWNER code (template 0, prompt 1, policy 2, tool 3) when the file itself says
 *   who wrote each token (Episode Lab's own format); otherwise owners are inferred from the tokenizer.
 */
import { OWNER, OWNER_NAMES, type OwnerName } from '../../gym/episode.js';
import type { Result } from '../../schema.js';

export { OWNER, OWNER_NAMES, type OwnerName };

/** A chat message as chat templates take it (OpenAI/HF shape). */
export interface ChatMessage {
  role: string;
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: unknown[];
  tool_call_id?: string;
  name?: string;
}

export interface DumpSample {
  /** 0-based index of the record (JSONL line) in the file. */
  record: number;
  /** Position of ids[0] in the record's whole token sequence (non-zero for a record's later branches). */
  offset: number;
  /** Where in the record this sample comes from, when a record holds several (e.g. `trace 0 branch 1`). */
  part?: string;
  ids: number[];
  lossMask: number[];
  samplerLogprobs?: (number | null)[];
  trainerLogprobs?: (number | null)[];
  advantages?: number[];
  owner?: number[];
  /** Token texts stored in the file (Episode Lab's own format), used when no tokenizer is given. */
  tokens?: string[];
  reward?: number;
  /** The training step, from the record, or from the file's path where the writer encodes it there. */
  step?: number;
  /**
   * The sample's group (GRPO: the samples of one prompt), where the file records one: an integer id
   * as itself, a text id as `groupNumber` (formats/fields.ts) makes it a number.
   */
  group?: number;
  /** The file's own text id of the group, where it is not a number (prime-rl's uuid), as shown to users. */
  groupLabel?: string;
  /** Whether the response was cut at the length limit, where the file records it. */
  truncated?: boolean;
  /**
   * Why the response or episode stopped, as the file words it (slime's `status`, verifiers'
   * `stop_condition`), where the file records it.
   */
  stop?: string;
  /** The policy weight versions that sampled the sample's tokens, where the file records them (one per turn, or one). */
  weightVersions?: number[];
  messages?: ChatMessage[];
  tools?: unknown[];
  /** The chat template's arguments the record was rendered with (`chat_template_kwargs`: enable_thinking, builtin_tools, ...). */
  templateKwargs?: Record<string, unknown>;
  /** Conversation key (token-level JSONL): successive lines of one episode are its successive turns. */
  episode?: string | number;
  /** Per-token arrays whose length disagrees with `ids` (found by the reader, reported by length-mismatch). */
  lengthIssues: LengthIssue[];
  /** For records split into nodes: index in `ids` where each node starts [N]. */
  nodeStarts?: number[];
  /** For records split into nodes: whether each node was sampled by the policy [N]. */
  nodeSampled?: boolean[];
  /**
   * The completions a capture recorded and this sample trains (skyrl-capture's model nodes): where
   * each starts in `ids`, where its sampled tokens start (the tokens before, from `start`, are the
   * generation scaffold the chat template wrote), and one past its end. The lint takes its owners
   * there from them, and says whether the chat template's owners agree.
   */
  completions?: { start: number; sampled: number; end: number }[];
  /**
   * Why the writer trains no token of this sample, when it says so (skyrl-capture's
   * `masked_reason`: `repeated_target`, `delivery_uncertain`, ...): its all-zero mask is the
   * writer's decision, said as a note, never a mask-degenerate finding.
   */
  writerMasked?: string;
  /** The record's other samples whose tokens this one's context should start with (prime-rl branches). */
  previous?: { offset: number; ids: number[]; part?: string };
  /**
   * The trainer's own per-token decision to drop a trained token from its loss (prime-rl's
   * `is_masked`: 1 where it masked the token) [T]. Shown beside the lint, never a finding.
   */
  trainerMasked?: (0 | 1)[];
  /**
   * The file's own id of the record, where its format has one, beside the 0-based `record`:
   * `field` is its name in the file (NeMo-RL's `idx`, prime-rl's export `export_sequence_idx`, the
   * token-level JSONL's `episode`), `value` its value as text.
   */
  fileId?: { field: string; value: string };
  /** The environment the sample comes from (prime-rl's `env_name`). */
  env?: string;
  /** The trainer rank that wrote the sample (prime-rl's token export). */
  rank?: number;
}

/** One disagreement of lengths: a description and the first token position it concerns (null: none). */
export interface LengthIssue {
  what: string;
  position: number | null;
}

/** A bad record: which line, which field, what was expected and what was found. */
export interface Rejection {
  record: number;
  field: string;
  expected: string;
  found: string;
}

/** A reader's outcome: the value, or the rejection of the record. */
export type Read<T> = Result<T, Rejection>;

/** One line of text describing a rejection: `line 3: "token_ids": expected ..., found ...`. */
/**
 * Whether a sampler log-prob may be a trainer's placeholder rather than a value the sampler wrote:
 * exactly 0.0, what NeMo-RL (and others) write on tokens the sampler never generated. Only owners
 * can tell the two apart; without them such a value is set aside, never measured (the lint's
 * log-prob rules, the mismatch figures and lane).
 */
export function mayBePlaceholder(samplerLogprob: number): boolean {
  return samplerLogprob === 0;
}

export function describeRejection(r: Rejection): string {
  return `line ${r.record + 1}: ${r.field ? `"${r.field}": ` : ''}expected ${r.expected}, found ${r.found}`;
}

/** A short description of a JSON value's type for error messages: `array of 3`, `string`, `null`. */
export function describeValue(x: unknown): string {
  if (x === undefined) return 'nothing';
  if (x === null) return 'null';
  if (Array.isArray(x)) return `an array of ${x.length}`;
  if (typeof x === 'object')
    return `an object with keys ${Object.keys(x as object)
      .slice(0, 12)
      .join(', ')}`;
  if (typeof x === 'string') return `a string ${JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}…` : x)}`;
  return `${typeof x} ${String(x)}`;
}
