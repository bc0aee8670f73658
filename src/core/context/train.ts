/**
 * The chapter's `train_context` and `evaluate_context`, by name. Training under a context policy is
 * `trainRl` with `cfg.contextPolicy` set (each call trains on its own view with its episode's group
 * advantage); evaluation is `evaluate` with a context policy.
 */
import type { Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import type { TinyAgent } from '../model/tinyagent.js';
import type { RLConfig } from '../rl/config.js';
import { type BehaviorStats, type EvaluateOptions, evaluate } from '../rl/grpo.js';
import { type StepRecord, type TrainOptions, trainRl } from '../rl/train.js';
import type { ContextPolicy } from './policy.js';

/** GRPO on per-call samples whose contexts follow `contextPolicy` -> the per-step history. */
export function trainContext(
  policy: TinyAgent,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  steps: number,
  opts: TrainOptions & { contextPolicy?: ContextPolicy } = {},
): Promise<StepRecord[]> {
  return trainRl(
    policy,
    tasks,
    tok,
    { ...cfg, contextPolicy: opts.contextPolicy ?? cfg.contextPolicy },
    steps,
    opts,
  );
}

/** Behaviour statistics of n episodes per task sampled under `contextPolicy` (renamed, seeded). */
export function evaluateContext(
  policy: TinyAgent,
  tasks: readonly Task[],
  tok: Tokenizer,
  cfg: RLConfig,
  contextPolicy: ContextPolicy,
  opts: Omit<EvaluateOptions, 'contextPolicy'> = {},
): BehaviorStats {
  return evaluate(policy, tasks, tok, cfg, { ...opts, contextPolicy }).stats;
}
