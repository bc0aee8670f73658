/**
 * One call of an episode as the per-call credit table shows it (figure 12.1): the schema that checks
 * it where it crosses a process boundary, and its type, which is the schema's output.
 */
import type * as v from 'valibot';
import { anyText, finite, strict } from '../schema.js';

export const CallRowSchema = strict({
  /** Call index. */
  k: finite(),
  /** The call's text, for example `<call> read </call>`. */
  text: anyText(10_000),
  /** Predicted positions [start, end] (inclusive) of the call's tokens. */
  start: finite(),
  end: finite(),
  /** r_k: the sum of the call's token rewards. */
  reward: finite(),
  /** V(s_k): the value at the call's first policy position. */
  valueStart: finite(),
  /** V(s_{k+1}): the value at the next call's first policy position (0 after the last call). */
  valueNext: finite(),
  /** r_k + gamma V(s_{k+1}) - V(s_k). */
  tdError: finite(),
  /** The episode's outcome (GRPO) advantage. */
  advOutcome: finite(),
  /** Mean of the token-level GAE advantages over the call's tokens. */
  advToken: finite(),
  /** Spread (max - min) of the token-level GAE advantages within the call. */
  advTokenSpread: finite(),
  /** The turn-level GAE advantage of the call (the value on its first token). */
  advTurn: finite(),
});

/** One call of an episode, as the inspector shows it (figure 12.1). */
export type CallRow = v.InferOutput<typeof CallRowSchema>;
