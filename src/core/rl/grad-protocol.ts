/**
 * What the gradient pool and its worker threads send each other (both sides are this package, in
 * one process). Parameters and gradients travel flat (`model/flat-params.ts`).
 */
import type { ModelConfig } from '../model/tinyagent.js';
import type { PgOptions, PgRows } from './policy-gradient.js';

export interface GradJob {
  kind: 'grad';
  config: ModelConfig;
  /** The policy's current parameters, flat (see `packParameters`). */
  weights: Float32Array;
  rows: PgRows;
  opts: PgOptions;
  /** Whether Episode Lab's SIMD kernels are on in the pool's thread (the worker follows it). */
  fastKernels: boolean;
}

export type GradReply = {
  kind: 'grad';
  grads: Float32Array;
  loss: number;
  clipped: number;
  kl: number;
  ent: number;
};
