/**
 * The trainer's job registry: each job kind maps to one core function. The trainer process
 * (main.ts) looks a job up here; a kind with no handler answers `unavailable`, which the
 * extension shows as it is.
 *
 * EXTENSION POINT for the model, training and recipes (src/core/model, src/core/rl, recipes):
 * register `train`, `recipe` and `sampleModel` handlers below (or with `registerJob` from a
 * module imported by main.ts). A handler reports each completed step with `ctx.progress`, checks
 * `ctx.cancelled` between steps, writes its run with run-files.ts (append-only, so a cancel or a
 * kill loses no completed step) and calls `ctx.runCreated(dir)` once the run folder exists.
 */

import { makeTasks } from '../core/gym/tasks.js';
import { buildTokenizer } from '../core/gym/tokenizer.js';
import type { Job, JobKind, JobResults } from '../core/protocol.js';
import { maskCheck } from '../core/rl/mask-check.js';
import { sampleScriptedRun } from '../core/runs/sample-scripted.js';
import type { BackendInfo } from '../core/tf/backend.js';

export interface JobContext {
  readonly id: string;
  readonly backend: BackendInfo;
  /** True once the host asked to cancel: stop at the next step boundary. */
  readonly cancelled: boolean;
  log(text: string): void;
  progress(step: number, total: number, message: string): void;
  runCreated(dir: string): void;
}

export type JobHandler<K extends JobKind> = (
  job: Extract<Job, { kind: K }>,
  ctx: JobContext,
) => Promise<JobResults[K]>;

export type JobRegistry = { [K in JobKind]?: JobHandler<K> };

/** Why a job kind is missing from this build (shown to the user). */
export const UNAVAILABLE: Record<JobKind, string> = {
  sampleScripted: 'scripted sampling is not available in this build',
  maskCheck: 'the mask check is not available in this build',
  train: 'training is not available in this build yet',
  recipe: 'recipes are not available in this build yet (they need training)',
  sampleModel: 'sampling from a model (the shipped base or a checkpoint) is not available in this build yet',
};

const tok = buildTokenizer(makeTasks('all'));

export const jobs: JobRegistry = {
  async sampleScripted(job, ctx) {
    return sampleScriptedRun(
      { ...job, backend: ctx.backend.detail },
      {
        isCancelled: () => ctx.cancelled,
        onRunCreated: (dir) => ctx.runCreated(dir),
        onStep: (h, total) =>
          ctx.progress(
            h.step + 1,
            total,
            `step ${h.step + 1}/${total}: ${h.episodes} episodes, pass ${h.pass_rate}, reward ${h.reward}, turns ${h.turns}`,
          ),
      },
    );
  },
  async maskCheck(job) {
    // TODO(model): pass `logits: (inputs) => model logits [1, T-1, V]` once TinyAgent lands.
    return maskCheck(job.episode, { bug: job.bug, seed: job.seed, vocabSize: tok.size, padId: tok.padId });
  },
  // train: ...     registered by the training code
  // recipe: ...    registered by the recipes
  // sampleModel: ... registered by the model's sampler
};

/** Register (or replace) the handler of a job kind. */
export function registerJob<K extends JobKind>(kind: K, handler: JobHandler<K>): void {
  (jobs as Record<JobKind, unknown>)[kind] = handler;
}
