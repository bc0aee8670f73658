import { defaultThreads, threadsSettingProblem } from '../core/tf/workers.js';

/** How many threads the sampler uses, for the CLI's first line. */
export function threadsLabel(): string {
  const problem = threadsSettingProblem();
  if (problem) process.stderr.write(`warning: ${problem}\n`);
  const n = defaultThreads();
  return `${n} thread${n === 1 ? '' : 's'}${process.env.EPISODE_LAB_THREADS ? ' (EPISODE_LAB_THREADS)' : ''}`;
}
