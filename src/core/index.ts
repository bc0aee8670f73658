/** The core library: no `vscode` import anywhere below this folder. */

export * from './context/policy.js';
export * from './context/rollout.js';
export * from './context/train.js';
export * from './gym/env.js';
export * from './gym/episode.js';
export * from './gym/rewards.js';
export * from './gym/scripted.js';
export * from './gym/tasks.js';
export * from './gym/tokenizer.js';
export * from './gym/trajectory-json.js';
export * from './gym/variants.js';
export * from './model/checkpoint.js';
export * from './model/sampler.js';
export * from './model/tinyagent.js';
export * from './paths.js';
export * from './rl/advantages.js';
// The TF.js maskedMean is the one the chapter's losses use; the array version keeps another name.
export { maskedMean as maskedMeanArray } from './rl/advantages.js';
export * from './rl/config.js';
export * from './rl/critic.js';
export * from './rl/grpo.js';
export * from './rl/loss.js';
export { maskedMean } from './rl/loss.js';
export * from './rl/sft.js';
export * from './rl/train.js';
export * from './rl/value-loss.js';
export * from './rng.js';
export * from './runs/run-files.js';
export * from './runs/train-run.js';
export * from './tf/backend.js';
