/**
 * Sample episodes with a scripted policy into a run folder (run-files.ts): one batch of episodes
 * per "step", each appended and flushed with its history line as it completes, so a cancelled or
 * killed job keeps every completed batch. Deterministic for a seed.
 */
import * as path from 'node:path';
import { makeEnv } from '../gym/env.js';
import { OWNER } from '../gym/episode.js';
import { makeReward } from '../gym/rewards.js';
import { runScripted, type ScriptedPolicyName, scriptedPolicyByName } from '../gym/scripted.js';
import { makeTasks, randomizeNames, type TaskSplit } from '../gym/tasks.js';
import { buildTokenizer } from '../gym/tokenizer.js';
import { type TrajectoryJSON, toTrajectoryJSON } from '../gym/trajectory-json.js';
import { Rng } from '../rng.js';
import { appendEpisodes, appendHistory, createRun, type HistoryEntry, writeSummary } from './run-files.js';

export interface SampleScriptedOptions {
  runsDir: string;
  policy: ScriptedPolicyName;
  split: TaskSplit;
  episodes: number;
  batch: number;
  seed: number;
  maxTurns: number;
  name?: string;
  backend?: string;
}

export interface SampleHooks {
  /** Called after each batch is on disk. */
  onStep?(entry: HistoryEntry, total: number): void;
  /** Checked before each batch: true stops the run (completed batches stay). */
  isCancelled?(): boolean;
  /** Called once the run folder exists. */
  onRunCreated?(dir: string): void;
}

/** Behaviour statistics of a batch of episodes (means; pass_rate is the hidden-test pass rate). */
export function batchStats(eps: readonly TrajectoryJSON[]): Record<string, number> {
  const mean = (f: (e: TrajectoryJSON) => number) =>
    eps.reduce((a, e) => a + f(e), 0) / Math.max(eps.length, 1);
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    pass_rate: r4(mean((e) => (e.info.hidden_pass ? 1 : 0))),
    reward: r4(mean((e) => e.reward)),
    turns: r4(mean((e) => e.info.n_turns)),
    reads: r4(mean((e) => e.info.reads)),
    tests: r4(mean((e) => e.info.tests)),
    edits: r4(mean((e) => e.info.edits)),
    invalid: r4(mean((e) => e.info.n_invalid)),
    tokens: r4(mean((e) => e.ids.length)),
    policy_share: r4(mean((e) => e.owner.filter((o) => o === OWNER.policy).length / e.ids.length)),
  };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A run folder name that does not exist yet: `<policy>-<yyyymmdd-hhmmss>`. */
export function defaultRunName(policy: string, now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${policy}-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
}

/** Sample `episodes` scripted episodes into a new run; returns the run folder and what was written. */
export async function sampleScriptedRun(
  o: SampleScriptedOptions,
  hooks: SampleHooks = {},
): Promise<{ runDir: string; steps: number; episodes: number; complete: boolean }> {
  const dir = path.join(o.runsDir, o.name ?? defaultRunName(o.policy));
  createRun(dir, {
    kind: 'sample',
    name: path.basename(dir),
    config: { policy: o.policy, split: o.split, episodes: o.episodes, batch: o.batch, maxTurns: o.maxTurns },
    from: `scripted:${o.policy}`,
    seed: o.seed,
    backend: o.backend,
  });
  hooks.onRunCreated?.(dir);
  const tasks = makeTasks(o.split);
  const tok = buildTokenizer(makeTasks('all'));
  const policy = scriptedPolicyByName(o.policy);
  const env = makeEnv({ maxTurns: o.maxTurns, reward: makeReward('hidden') });
  const rng = new Rng(o.seed);
  const total = Math.ceil(o.episodes / o.batch);
  let written = 0;
  let step = 0;
  const started = Date.now();
  for (; step < total; step++) {
    if (hooks.isCancelled?.()) break;
    const n = Math.min(o.batch, o.episodes - written);
    const eps: TrajectoryJSON[] = [];
    for (let k = 0; k < n; k++) {
      const epRng = rng.fork();
      const task = randomizeNames(tasks[(written + k) % tasks.length], epRng.fork());
      const traj = runScripted(policy, env, task, tok, epRng);
      eps.push(toTrajectoryJSON(traj, tok, { step, index: k }));
    }
    appendEpisodes(dir, eps);
    const entry: HistoryEntry = { step, episodes: n, ...batchStats(eps) };
    appendHistory(dir, entry);
    written += n;
    hooks.onStep?.(entry, total);
    await yieldToEventLoop();
  }
  const complete = step === total;
  writeSummary(dir, {
    complete,
    steps: step,
    episodes: written,
    seconds: (Date.now() - started) / 1000,
  });
  return { runDir: dir, steps: step, episodes: written, complete };
}
