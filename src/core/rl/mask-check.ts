/**
 * The mask check of section 12.1: which predicted positions does the policy-gradient loss send
 * gradient to, against which positions the policy owns? Every mismatch is a mask bug.
 *
 * For one episode (ids [T], owner [T], actionMask [T-1]) we build logits [1, T-1, V] from a
 * logits source, compute the training loss `ppoClipLoss(logp, oldLogp = logp, advantages = 1,
 * lossMask)` (at ratio 1 its gradient is REINFORCE's), take its gradient with respect to the logits and call position i "touched" when
 * sum over V of |dL/dlogits[0, i, :]| > 0. Position i predicts token i+1, so it is "owned by the
 * policy" exactly when token i+1 was sampled by the policy (and is still in the sequence).
 *
 * `bug` injects a known real-world mask bug into the loss mask so its signature can be seen:
 *   correct   the action mask itself: gradient on policy positions only, zero flags;
 *   tool      also trains on tool tokens (mask = "not prompt and not template"): every tool
 *             position is flagged;
 *   template  also trains on the observation template tokens `<obs>` and `</obs>`;
 *   shift     off-by-one: the per-token mask [T] (owner == policy) sliced as mask[:-1] instead
 *             of mask[1:], so bit i says whether token i (not token i+1) is policy: the first
 *             token of every call loses its gradient and the token after every call gains one;
 *   zero      an all-zero mask: no position has gradient, every policy position is flagged;
 *   truncated a truncated episode whose mask was not updated: the training sequence was cut
 *             before the episode's last call (as a sampler does when that call no longer fits in
 *             the context; the cut tokens become padding), but the loss mask still carries the
 *             bits of the untruncated episode, so the padding where the last call used to be gets
 *             gradient. Those positions are no longer owned by anyone and are flagged.
 *
 * The logits source is a parameter: until a model is passed, a fixed seeded random tensor stands
 * in for it (the touched set does not depend on the logits' values: log-softmax has a non-zero
 * gradient on every vocabulary entry of a masked position, and none elsewhere).
 */
import * as tf from '@tensorflow/tfjs-core';
import { OWNER, OWNER_NAMES, type OwnerName } from '../gym/episode.js';
import { selectedLogProbs } from '../model/logprobs.js';
import { Rng } from '../rng.js';
import { ppoClipLoss } from './loss.js';
import type { MaskBug } from './mask-bugs.js';

export { isMaskBug, MASK_BUG_LABELS, MASK_BUGS, type MaskBug } from './mask-bugs.js';

/** The clip range of the checked loss (any value in (0, 1): at ratio 1 no position is clipped). */
const CHECK_CLIP = 0.2;

/** The fields of a trajectory the check needs. */
export interface MaskCheckEpisode {
  ids: readonly number[];
  owner: readonly number[];
  actionMask: readonly number[];
}

/** The training sequence and loss mask with a bug injected. */
export interface InjectedMask {
  /** [T] ids the model is trained on (cut tokens replaced by padding). */
  ids: number[];
  /** [T-1] the loss mask. */
  lossMask: number[];
  /** [T-1] 1 where the predicted token was cut away (padding in the training sequence). */
  cut: number[];
}

/** Index of the first token of the episode's last call (T when it has no policy token). */
export function lastCallStart(ep: MaskCheckEpisode): number {
  const T = ep.ids.length;
  let i = T - 1;
  while (i >= 0 && ep.owner[i] !== OWNER.policy) i--;
  if (i < 0) return T;
  while (i > 0 && ep.owner[i - 1] === OWNER.policy) i--;
  return i;
}

/** Build the loss mask [T-1] (and the training ids) that `bug` would produce for this episode. */
export function injectMaskBug(ep: MaskCheckEpisode, bug: MaskBug, padId = 0): InjectedMask {
  const T = ep.ids.length;
  const P = T - 1;
  const next = (i: number) => ep.owner[i + 1];
  const ids = ep.ids.slice();
  const cut = new Array<number>(P).fill(0);
  let lossMask: number[];
  switch (bug) {
    case 'correct':
      lossMask = ep.actionMask.slice();
      break;
    case 'tool':
      lossMask = ep.actionMask.map((m, i) => (m || next(i) === OWNER.tool ? 1 : 0));
      break;
    case 'template':
      lossMask = ep.actionMask.map((m, i) => (m || next(i) === OWNER.template ? 1 : 0));
      break;
    case 'shift':
      lossMask = Array.from({ length: P }, (_, i) => (ep.owner[i] === OWNER.policy ? 1 : 0));
      break;
    case 'zero':
      lossMask = new Array<number>(P).fill(0);
      break;
    case 'truncated': {
      const c = lastCallStart(ep);
      for (let j = c; j < T; j++) ids[j] = padId;
      for (let i = Math.max(c - 1, 0); i < P; i++) cut[i] = 1;
      lossMask = ep.actionMask.slice();
      break;
    }
  }
  return { ids, lossMask, cut };
}

/** Logits [1, T-1, V] for a training sequence's inputs (ids[:-1]). */
export type LogitsSource = (inputIds: readonly number[], vocabSize: number) => tf.Tensor3D;

/** A fixed, seeded random logits tensor (values in [-2, 2)): the stand-in for a model. */
export function seededRandomLogits(seed = 0): LogitsSource {
  return (inputIds, vocabSize) => {
    const rng = new Rng(seed);
    const n = inputIds.length * vocabSize;
    const values = new Float32Array(n);
    for (let k = 0; k < n; k++) values[k] = rng.float() * 4 - 2;
    return tf.tensor3d(values, [1, inputIds.length, vocabSize]);
  };
}

export interface OwnerCounts {
  owner: OwnerName;
  /** Predicted positions whose token has this owner. */
  positions: number;
  /** Of those, owned by the policy (and not cut). */
  policyOwned: number;
  /** Of those, with gradient. */
  withGradient: number;
  /** Of those, mismatches. */
  flags: number;
}

export interface MaskCheckResult {
  bug: MaskBug;
  /** [T-1] the loss mask that was used. */
  lossMask: number[];
  /** [T-1] sum over the vocabulary of |dL/dlogits|. */
  gradMagnitude: number[];
  /** [T-1] 1 where gradMagnitude > 0. */
  hasGradient: number[];
  /** [T-1] 1 where the predicted token is the policy's (and was not cut away). */
  policyOwned: number[];
  /** [T-1] 1 where the predicted token was cut away by truncation. */
  cut: number[];
  /** [T-1] 1 where hasGradient differs from policyOwned. */
  flags: number[];
  /** One row per owner, in OWNER order (the table of section 12.1). */
  byOwner: OwnerCounts[];
  totalFlags: number;
  /** The loss value. */
  loss: number;
}

export interface MaskCheckOptions {
  bug?: MaskBug;
  /** Where logits come from (default: `seededRandomLogits(seed)`). */
  logits?: LogitsSource;
  seed?: number;
  /** Vocabulary size V (default: the largest id + 1). */
  vocabSize?: number;
  /** Padding id for the cut tokens of the `truncated` bug. */
  padId?: number;
}

/** Run the mask check on one episode. Needs an initialised TF.js backend. */
export function maskCheck(ep: MaskCheckEpisode, opts: MaskCheckOptions = {}): MaskCheckResult {
  const bug = opts.bug ?? 'correct';
  const T = ep.ids.length;
  if (T < 2) throw new Error('the mask check needs an episode of at least 2 tokens');
  if (ep.owner.length !== T || ep.actionMask.length !== T - 1)
    throw new Error(`the mask check needs owner [${T}] and actionMask [${T - 1}]`);
  const padId = opts.padId ?? 0;
  const V = opts.vocabSize ?? Math.max(padId, ...ep.ids) + 1;
  const source = opts.logits ?? seededRandomLogits(opts.seed ?? 0);
  const inj = injectMaskBug(ep, bug, padId);
  const inputs = inj.ids.slice(0, -1);
  const targets = inj.ids.slice(1);

  const { grad, loss } = tf.tidy(() => {
    const logits = source(inputs, V); // [1, T-1, V]
    if (logits.shape[0] !== 1 || logits.shape[1] !== T - 1)
      throw new Error(`the logits source returned [${logits.shape}], expected [1, ${T - 1}, V]`);
    const targetT = tf.tensor2d([targets], [1, T - 1], 'int32');
    const maskT = tf.tensor2d([inj.lossMask], [1, T - 1], 'float32');
    const adv = tf.ones([1]) as tf.Tensor1D;
    // The loss that trains, at ratio 1 (oldLogp = logp's value, a constant): its gradient is
    // REINFORCE's, -A * dlogp on the masked positions.
    const old = selectedLogProbs(logits, targetT);
    const f = (x: tf.Tensor) =>
      ppoClipLoss(selectedLogProbs(x as tf.Tensor3D, targetT), old, adv, maskT, CHECK_CLIP, 'token_mean')
        .loss;
    const { value, grad } = tf.valueAndGrad(f)(logits);
    return { grad: tf.sum(tf.abs(grad), -1), loss: value }; // [1, T-1], scalar
  });
  const gradMagnitude = Array.from(grad.dataSync());
  const lossValue = loss.dataSync()[0];
  grad.dispose();
  loss.dispose();

  const hasGradient: number[] = gradMagnitude.map((g) => (g > 0 ? 1 : 0));
  const policyOwned = Array.from({ length: T - 1 }, (_, i) =>
    ep.owner[i + 1] === OWNER.policy && !inj.cut[i] ? 1 : 0,
  );
  const flags: number[] = hasGradient.map((g, i) => (g !== policyOwned[i] ? 1 : 0));
  const byOwner: OwnerCounts[] = OWNER_NAMES.map((owner) => ({
    owner,
    positions: 0,
    policyOwned: 0,
    withGradient: 0,
    flags: 0,
  }));
  for (let i = 0; i < T - 1; i++) {
    const row = byOwner[ep.owner[i + 1]];
    row.positions++;
    row.policyOwned += policyOwned[i];
    row.withGradient += hasGradient[i];
    row.flags += flags[i];
  }
  return {
    bug,
    lossMask: inj.lossMask,
    gradMagnitude,
    hasGradient,
    policyOwned,
    cut: inj.cut,
    flags,
    byOwner,
    totalFlags: flags.reduce((a, b) => a + b, 0),
    loss: lossValue,
  };
}
