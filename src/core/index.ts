/** The core library: no `vscode` import anywhere below this folder. */
export * from './gym/env.js';
export * from './gym/episode.js';
export * from './gym/rewards.js';
export * from './gym/scripted.js';
export * from './gym/tasks.js';
export * from './gym/tokenizer.js';
export * from './gym/trajectory-json.js';
export * from './rl/loss.js';
export * from './rng.js';
export * from './runs/run-files.js';
export * from './tf/backend.js';
