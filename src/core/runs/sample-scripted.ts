/**
 * Sample episodes with a scripted policy into a run folder (run-files.ts): one batch of episodes
 * per "step", each appended and flushed with its history line as it completes, so a cancelled or
 * killed job keeps every completed batch. Deterministic for a seed.
 */
import * as path from 'node:path';
import { makeEnv } from '../gym/env.js';
import type { Trajectory } from '../gym/episode.js';
import { makeReward } from '../gym/rewards.js';
import { runScripted, type ScriptedPolicyName, scriptedPolicyByName } from '../gym/scripted.js';
import { makeTasks, randomizeNames, type TaskSplit } from '../gym/tasks.js';
import { buildTokenizer } from '../gym/tokenizer.js';
import { toTrajectoryJSON } from '../gym/trajectory-json.js';
import { behaviorStats } from '../rl/grpo.js';
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
    const trajs: Trajectory[] = [];
    for (let k = 0; k < n; k++) {
      const epRng = rng.fork();
      const task = randomizeNames(tasks[(written + k) % tasks.length], epRng.fork());
      trajs.push(runScripted(policy, env, task, tok, epRng));
    }
    appendEpisodes(
      dir,
      trajs.map((t, k) => toTrajectoryJSON(t, tok, { step, index: k })),
    );
    const stats = behaviorStats(trajs);
    const entry: HistoryEntry = {
      step,
      episodes: n,
      ...Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, Math.round(v * 1e4) / 1e4])),
    };
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
