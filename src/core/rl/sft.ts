/**
 * The RL base agent: supervised training of a fresh TinyAgent on scripted episodes that are
 * format-correct but uninformed (`uninformed` in gym/scripted.ts): it reads sometimes, tests
 * sometimes, edits with an operation drawn independently of the source, submits early, and makes
 * a malformed call in about 2 % of turns. Like a pretrained model, it is trained to predict every
 * token of those episodes (prompt and observations too), and it has also read "code knowledge":
 * documents that pair a source with the operation that fixes it, outside of any episode. So the
 * base knows what a bug looks like but does not act on it (its edits stay uninformed: pass rate
 * 0.10 to 0.20); RL has to connect the knowledge to the behaviour, the way post-training elicits
 * what a pretrained model knows. Without these documents the 158k model learns the mapping from
 * the RL signal alone too slowly: reading drifts away before the edits become informed. An eighth
 * of the scripted episodes come in the single-turn format (the prompt carries the source, the
 * first call is graded) with the same habits, so that the base answers such a prompt with a call
 * at all (section 12.6): without them it opens a call after a single-turn prompt with probability
 * about 1e-3, too rarely for RL to find the format reliably.
 */
import * as tf from '@tensorflow/tfjs-core';
import { makeEnv } from '../gym/env.js';
import { OWNER, padRows, type Trajectory } from '../gym/episode.js';
import { runScripted, uninformed } from '../gym/scripted.js';
import { compactSource, randomizeNames, singleTurn, type Task } from '../gym/tasks.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { MixedTurnEnv } from '../gym/variants.js';
import { selectedLogProbs } from '../model/logprobs.js';
import { defaultModelConfig, TinyAgent } from '../model/tinyagent.js';
import { Rng } from '../rng.js';
import { clipGradients } from './grpo.js';

export interface BaseOptions {
  seed?: number;
  /** Scripted episodes to train on. */
  episodes?: number;
  /** Code-knowledge documents (a source, a newline, the operation that fixes it) mixed in. */
  knowledge?: number;
  /**
   * Share of the scripted episodes given in the single-turn format (the prompt carries the source
   * and the first call is graded), so that the base has seen both formats, with the same habits.
   */
  singleTurnShare?: number;
  steps?: number;
  batchSize?: number;
  lr?: number;
  maxTurns?: number;
  /** Called after each step with the step's mean loss. */
  onStep?: (step: number, loss: number) => void;
  /** Checked between steps: stop early when it returns true. */
  cancelled?: () => boolean;
}

export const BASE_DEFAULTS = {
  seed: 0,
  episodes: 4096,
  knowledge: 2048,
  singleTurnShare: 0.125,
  steps: 300,
  batchSize: 64,
  lr: 3e-3,
  maxTurns: 6,
};

/**
 * Scripted uninformed episodes on renamed training tasks; a `singleTurnShare` of them (drawn at
 * random) are the task's single-turn copy, played under `MixedTurnEnv`.
 */
export function scriptedCorpus(
  tasks: readonly Task[],
  tok: Tokenizer,
  n: number,
  seed: number,
  maxTurns = 6,
  singleTurnShare = 0,
): Trajectory[] {
  const rng = new Rng(seed);
  const pick = new Rng(seed + 101);
  return Array.from({ length: n }, (_, i) => {
    const task = randomizeNames(tasks[i % tasks.length], rng);
    if (pick.float() >= singleTurnShare)
      return runScripted(uninformed, makeEnv({ maxTurns }), task, tok, rng);
    return runScripted(uninformed, new MixedTurnEnv(maxTurns), singleTurn(task), tok, rng);
  });
}

/** Train the RL base agent (the chapter's `make_rl_base`); deterministic for the seed. */
export function makeRlBase(tok: Tokenizer, tasks: readonly Task[], opts: BaseOptions = {}): TinyAgent {
  const o = { ...BASE_DEFAULTS, ...opts };
  const corpus: { ids: number[]; owner: number[] }[] = scriptedCorpus(
    tasks,
    tok,
    o.episodes,
    o.seed + 1,
    o.maxTurns,
    o.singleTurnShare,
  );
  corpus.push(...knowledgeCorpus(tasks, tok, o.knowledge, o.seed + 3));
  const model = TinyAgent.create(defaultModelConfig(tok.size), o.seed);
  const opt = tf.train.adam(o.lr);
  const rng = new Rng(o.seed + 2);
  const vars = model.variables();
  for (let step = 0; step < o.steps; step++) {
    if (o.cancelled?.()) break;
    const rows = Array.from({ length: o.batchSize }, () => corpus[rng.int(corpus.length)]);
    const T = Math.max(...rows.map((r) => r.ids.length));
    const batch = {
      ids: padRows(
        rows.map((r) => r.ids),
        T,
        tok.padId,
      ),
      owner: padRows(
        rows.map((r) => r.owner.slice(1)),
        T - 1,
        -1,
      ),
    };
    // Linear warm-up over the first 5 % of steps, then cosine decay to 10 %.
    const warm = Math.max(1, Math.floor(o.steps * 0.05));
    const frac =
      step < warm
        ? (step + 1) / warm
        : 0.1 + 0.45 * (1 + Math.cos((Math.PI * (step - warm)) / (o.steps - warm)));
    (opt as unknown as { learningRate: number }).learningRate = o.lr * frac;
    const loss = tf.tidy(() => {
      const ids = tf.tensor2d(batch.ids, undefined, 'int32');
      const valid = tf.tensor2d(batch.owner.map((r) => r.map((x) => (x >= 0 ? 1 : 0))));
      const { value, grads } = tf.variableGrads(() => {
        const logits = tf.slice(model.logits(ids), [0, 0, 0], [rows.length, T - 1, tok.size]) as tf.Tensor3D;
        const logp = selectedLogProbs(logits, tf.slice(ids, [0, 1], [rows.length, T - 1]) as tf.Tensor2D);
        return tf.neg(tf.div(tf.sum(tf.mul(logp, valid)), tf.sum(valid))) as tf.Scalar;
      }, vars);
      clipGradients(grads, 1);
      opt.applyGradients(grads as unknown as Record<string, tf.Variable>);
      return value.dataSync()[0];
    });
    o.onStep?.(step, loss);
  }
  opt.dispose();
  return model;
}

/** Documents `source \n op`: what the code needs, outside of any episode (tool-owned tokens). */
export function knowledgeCorpus(tasks: readonly Task[], tok: Tokenizer, n: number, seed: number) {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const t = randomizeNames(tasks[i % tasks.length], rng);
    const ids = tok.encode(`${compactSource(t.source)}\n${t.kind}`);
    return { ids, owner: ids.map(() => OWNER.tool) };
  });
}
