/** The core library: no `vscode` import anywhere below this folder. */
export * from './gym/env.js';
export * from './gym/episode.js';
export * from './gym/rewards.js';
export * from './gym/scripted.js';
export * from './gym/tasks.js';
export * from './gym/tokenizer.js';
export * from './gym/trajectory-json.js';
export * from './rng.js';
