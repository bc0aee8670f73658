/**
 * Data-parallel gradients on both cores. TF.js's wasm backend runs one thread under Node, so a
 * minibatch is split into `parts` (RLConfig.workers) contiguous parts of about equal tokens: this
 * thread computes the first, one worker thread each of the others (each with its own backend and
 * copy of the policy, sent the current weights with every job), and the parts' gradients are added
 * in part order. Each part's loss divides by the whole minibatch's denominator, so the sum is the
 * minibatch's gradient; only the order of the floating-point sums differs from one part.
 *
 * The numbers depend on the number of parts, never on where they ran: without worker threads (they
 * could not start, or `EPISODE_LAB_THREADS=0`) the parts run one after the other here, bit for bit
 * the same. The update stays synchronous (see tf/workers.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import { flatWeights, unpackParameters } from '../model/flat-params.js';
import type { TinyAgent } from '../model/tinyagent.js';
import { fastKernelsActive } from '../tf/fast-kernels.js';
import { closeComputeWorkers, computeWorkers } from '../tf/workers.js';
import type { GradReply } from './grad-protocol.js';
import { type PgOptions, type PgResult, type PgRows, pgGradients } from './policy-gradient.js';

/**
 * Split rows (their token lengths, in minibatch order) into at most `parts` contiguous, non-empty
 * parts of about equal total length. Returns the parts' first row indices and the end.
 */
export function splitRows(lengths: readonly number[], parts: number): number[] {
  const n = lengths.length;
  const k = Math.max(1, Math.min(parts, n));
  const total = lengths.reduce((a, b) => a + b, 0);
  const bounds = [0];
  let acc = 0;
  let next = 1;
  for (let i = 0; i < n - 1 && next < k; i++) {
    acc += lengths[i];
    const rowsLeft = n - (i + 1);
    const partsLeft = k - next;
    // end a part once it holds its share, or when each row left must start a part of its own
    if (rowsLeft === partsLeft || (rowsLeft > partsLeft && acc >= (total * next) / k)) {
      bounds.push(i + 1);
      next++;
    }
  }
  bounds.push(n);
  return bounds;
}

function slice(rows: PgRows, from: number, to: number, lengths: readonly number[]): PgRows {
  const T = Math.max(...lengths.slice(from, to));
  const cut = (m: number[][], w: number) => m.slice(from, to).map((r) => r.slice(0, w));
  return {
    ids: cut(rows.ids, T),
    mask: cut(rows.mask, T - 1),
    old: cut(rows.old, T - 1),
    adv: cut(rows.adv, T - 1),
    T,
  };
}

/**
 * The gradient of the loss on a minibatch computed as `parts` parts (see the file's comment).
 * `lengths` are the rows' real token lengths (each part is padded to its own longest row).
 * `denominator` is the whole minibatch's (see `aggregateDenominator`).
 */
export function splitPgGradients(
  policy: TinyAgent,
  rows: PgRows,
  lengths: readonly number[],
  parts: number,
  opts: PgOptions & { denominator: number },
): PgResult {
  const bounds = splitRows(lengths, parts);
  const pieces = bounds.slice(0, -1).map((from, i) => slice(rows, from, bounds[i + 1], lengths));
  const workers = pieces.length > 1 ? computeWorkers(pieces.length - 1) : [];
  const remote = pieces.slice(1).map((_, i) => workers[i] ?? null);
  if (remote.some((w) => w)) {
    const weights = flatWeights(policy);
    remote.forEach((w, i) => {
      w?.send({
        kind: 'grad',
        config: policy.config,
        weights,
        rows: pieces[i + 1],
        opts,
        fastKernels: fastKernelsActive(),
      });
    });
  }
  const results: PgResult[] = [pgGradients(policy, pieces[0], opts)];
  const errors: string[] = [];
  remote.forEach((w, i) => {
    if (!w) {
      results.push(pgGradients(policy, pieces[i + 1], opts));
      return;
    }
    const r = w.receive<GradReply>();
    if (r.kind !== 'grad') {
      errors.push(r.kind === 'error' ? r.message : 'unexpected answer');
      return;
    }
    const grads: tf.NamedTensorMap = {};
    for (const [name, values] of unpackParameters(policy.config, r.grads)) {
      const v = policy.p(name);
      grads[v.name] = tf.tensor(values, v.shape, 'float32');
    }
    results.push({ grads, loss: r.loss, clipped: r.clipped, kl: r.kl, ent: r.ent });
  });
  if (errors.length) {
    for (const r of results) tf.dispose(Object.values(r.grads));
    closeComputeWorkers();
    throw new Error(`a gradient worker failed: ${errors.join('; ')}`);
  }
  // Add in part order: the same numbers wherever the parts ran.
  const [first, ...rest] = results;
  const grads: tf.NamedTensorMap = {};
  for (const key of Object.keys(first.grads)) {
    let acc = first.grads[key];
    for (const r of rest) {
      const next = tf.add(acc, r.grads[key]);
      acc.dispose();
      acc = next;
    }
    grads[key] = acc;
  }
  for (const r of rest) tf.dispose(Object.values(r.grads));
  const sum = (f: (r: PgResult) => number) => results.reduce((a, r) => a + f(r), 0);
  return {
    grads,
    loss: sum((r) => r.loss),
    clipped: sum((r) => r.clipped),
    kl: sum((r) => r.kl),
    ent: sum((r) => r.ent),
  };
}
