/**
 * Shared test fixtures, built once per test process: the gym's tokenizer and task splits, and a
 * few seeded scripted episodes (one per scripted policy).
 */
import {
  buildTokenizer,
  makeEnv,
  makeTasks,
  malformed,
  oracle,
  Rng,
  randomizeNames,
  runScripted,
  type Trajectory,
  uninformed,
} from '../src/core/index.js';

export const tok = buildTokenizer(makeTasks('all'));
export const train = makeTasks('train');
export const heldout = makeTasks('heldout');

/** Three seeded scripted episodes (oracle, uninformed, malformed) on training tasks 2 to 4. */
export function scriptedEpisodes(maxTurns = 8): Trajectory[] {
  return [oracle, uninformed, malformed].map((p, k) =>
    runScripted(p, makeEnv({ maxTurns }), randomizeNames(train[k + 2], new Rng(k)), tok, new Rng(k + 10)),
  );
}
