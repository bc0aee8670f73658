/** Dump files of real trainers: readers, tokenizer, owners and the mask lint (no vscode, no tfjs). */
export { type CheckOptions, type Hit, type SampleContext, sampleContext } from './checks/context.js';
export { type LogprobPairs, logprobPairs, medianOf } from './checks/logprobs.js';
export * from './dump-file.js';
export * from './formats/index.js';
export * from './hf-tokenizer.js';
export * from './lines.js';
export * from './lint-file.js';
export * from './navigate.js';
export * from './owners.js';
export * from './rules.js';
export * from './sample.js';
export * from './view.js';
