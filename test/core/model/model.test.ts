import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import {
  CheckpointError,
  collate,
  criticStep,
  criticValuesOf,
  defaultModelConfig,
  evaluate,
  initBackend,
  KVCache,
  loadCheckpoint,
  makeCritic,
  makeEnv,
  makeRLConfig,
  makeRlBase,
  makeTasks,
  Rng,
  returnsToGo,
  rlUpdate,
  saveCheckpoint,
  sequenceLogProbs,
  TinyAgent,
  Tokenizer,
} from '../../../src/core/index.js';
import { baseCheckpointDir } from '../../../src/core/paths.js';
import { renamedTasks, sampleEpisodes, sampleInContext, tok } from '../../fixtures.js';
import { weightGap, weightsOf } from '../../weights.js';

const train = makeTasks('train');

describe('TinyAgent', () => {
  let model: TinyAgent;
  before(async () => {
    const info = await initBackend();
    assert.notEqual(info.name, 'cpu', `tests expect a fast backend, got ${info.detail}`);
    model = TinyAgent.create(defaultModelConfig(tok.size), 0);
  });

  it('has about 158k parameters without the position table', () => {
    const n = model.numParamsWithoutPositions;
    assert.ok(n > 150_000 && n < 166_000, `${n}`);
    assert.equal(model.numParams - n, 256 * 64);
  });

  it('KV-cached logits equal whole-sequence logits', () => {
    const seq = tok.encode('fix f : wrong result <call> read </call> <obs> def f ( a ) : </obs> <call> edit');
    const full = tf.tidy(() => model.logits(tf.tensor2d([seq], undefined, 'int32')).dataSync());
    const cache = new KVCache(model);
    let at = 0;
    let maxDiff = 0;
    for (const n of [5, 1, 3, 6, 1, 2]) {
      const out = cache.step([0], [seq.slice(at, at + n)]);
      at += n;
      for (let v = 0; v < tok.size; v++)
        maxDiff = Math.max(maxDiff, Math.abs(out[v] - full[(at - 1) * tok.size + v]));
    }
    assert.equal(at, seq.length);
    assert.ok(maxDiff < 1e-4, `max difference ${maxDiff}`);
  });

  it('samples deterministically for a seed, and differently for another', () => {
    const tasks = renamedTasks(12, 1);
    const a = sampleEpisodes(model, tasks, 5);
    const b = sampleEpisodes(model, tasks, 5);
    const c = sampleEpisodes(model, tasks, 6);
    assert.deepEqual(
      a.map((t) => t.ids),
      b.map((t) => t.ids),
    );
    assert.deepEqual(
      a.map((t) => t.logps),
      b.map((t) => t.logps),
    );
    assert.notDeepEqual(
      a.map((t) => t.ids),
      c.map((t) => t.ids),
    );
  });

  it('sampling log-probs equal sequenceLogProbs at every policy token (1e-4)', () => {
    const tasks = renamedTasks(16, 2);
    const trajs = sampleEpisodes(model, tasks, 7);
    const batch = collate(trajs, tok.padId);
    const lp = tf.tidy(() => sequenceLogProbs(model, tf.tensor2d(batch.ids, undefined, 'int32')).arraySync());
    let checked = 0;
    for (let b = 0; b < trajs.length; b++)
      for (let i = 0; i < batch.actionMask[b].length; i++)
        if (batch.actionMask[b][i]) {
          assert.ok(Math.abs(lp[b][i] - batch.oldLogps[b][i]) < 1e-4, `episode ${b} position ${i}`);
          checked++;
        }
    assert.ok(checked > 100);
  });

  it('leaks no tensor in sampling or a training step', () => {
    const tasks = renamedTasks(8, 3);
    const before = tf.memory().numTensors;
    const trajs = sampleEpisodes(model, tasks, 1);
    assert.equal(tf.memory().numTensors, before, 'sampling');
    const policy = model.clone();
    const opt = tf.train.adam(1e-3);
    const cfg = makeRLConfig({ groupSize: 8, minibatchSize: 4 });
    const update = () =>
      rlUpdate(
        policy,
        opt,
        collate(trajs, tok.padId),
        trajs.map((_, i) => (i % 2 ? 1 : -1)),
        cfg,
        new Rng(0),
      );
    update();
    const afterFirst = tf.memory().numTensors; // Adam creates its moment variables once
    update();
    assert.equal(tf.memory().numTensors, afterFirst, 'training step');
    opt.dispose();
    policy.dispose();
    assert.equal(tf.memory().numTensors, before, 'after disposing the copy and its optimizer');
  });

  it('a critic is a copy of the policy with a scalar value per position', () => {
    const critic = makeCritic(model);
    assert.equal(critic.numParams, model.numParams + 65);
    const v = tf.tidy(() => critic.values(tf.tensor2d([[1, 2, 3, 4]], undefined, 'int32')).arraySync());
    assert.equal(v[0].length, 4);
    assert.throws(() => critic.logits(tf.tensor2d([[1]], undefined, 'int32')), /critic/);
    critic.dispose();
  });
  it('the critic in chunks: the same values and the same regression step as the whole batch', () => {
    const episodes = sampleEpisodes(model, renamedTasks(12, 4), 4);
    const batch = collate(episodes, tok.padId);
    const returns = returnsToGo(
      episodes.map((t, b) =>
        batch.actionMask[b].map((m, i) => (m && i === t.ids.length - 2 ? 1 - (b % 3) : 0)),
      ),
      batch.actionMask,
    );
    const step = (chunk: number) => {
      const critic = makeCritic(model);
      const values = criticValuesOf(critic, batch, chunk);
      const opt = tf.train.sgd(0.5);
      const loss = criticStep(critic, opt, batch.ids, values, returns, batch.actionMask, {
        chunk,
        maxGradNorm: 1,
      });
      const w = weightsOf(critic);
      opt.dispose();
      critic.dispose();
      return { values, loss, w };
    };
    const whole = step(1000);
    const chunked = step(5);
    const before = makeCritic(model);
    const w0 = weightsOf(before);
    before.dispose();
    let dv = 0;
    for (const [b, row] of batch.actionMask.entries())
      for (const [i, m] of row.entries())
        if (m) dv = Math.max(dv, Math.abs(whole.values[b][i] - chunked.values[b][i]));
    assert.ok(dv < 1e-5, `values agree on policy positions (${dv})`);
    assert.ok(
      Math.abs(whole.loss - chunked.loss) < 1e-5 * Math.max(1, whole.loss),
      `${whole.loss} vs ${chunked.loss}`,
    );
    const { gap: dw, moved } = weightGap(whole.w, chunked.w, w0);
    assert.ok(moved > 1e-4, `the step moves the critic (${moved})`);
    assert.ok(dw < 1e-3 * moved, `chunked and whole steps agree (${dw} of ${moved})`);
  });
});

describe('checkpoints', () => {
  let model: TinyAgent;
  let dir: string;
  before(async () => {
    await initBackend();
    model = TinyAgent.create(defaultModelConfig(tok.size), 3);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'el-ckpt-'));
  });

  it('round-trips exactly', () => {
    saveCheckpoint(path.join(dir, 'a'), model, tok, { test: true });
    const back = loadCheckpoint(path.join(dir, 'a'), tok);
    const a = model.snapshot();
    for (const [name, v] of back.snapshot()) assert.deepEqual(v, a.get(name), name);
    back.dispose();
  });

  it('says which vocabulary token differs and what to do', () => {
    saveCheckpoint(path.join(dir, 'b'), model, tok, {});
    const other = new Tokenizer([...tok.itos.slice(0, 10), 'zzz', ...tok.itos.slice(11)]);
    assert.throws(
      () => loadCheckpoint(path.join(dir, 'b'), other),
      (e: Error) => {
        assert.ok(e instanceof CheckpointError);
        assert.match(e.message, /another vocabulary/);
        assert.match(e.message, /token 10/);
        assert.match(e.message, /make-base/);
        return true;
      },
    );
  });

  it('says which parameter has the wrong shape', () => {
    const d = path.join(dir, 'c');
    saveCheckpoint(d, model, tok, {});
    const header = JSON.parse(fs.readFileSync(path.join(d, 'model.json'), 'utf8'));
    header.config.dModel = 32;
    fs.writeFileSync(path.join(d, 'model.json'), JSON.stringify(header));
    assert.throws(
      () => loadCheckpoint(d, tok),
      /parameter wte has shape \[\d+,64\] but the config needs \[\d+,32\]/,
    );
  });

  it('reports truncated weights and a missing header', () => {
    const d = path.join(dir, 'd');
    saveCheckpoint(d, model, tok, {});
    const w = path.join(d, 'weights.bin');
    fs.truncateSync(w, fs.statSync(w).size - 100);
    assert.throws(() => loadCheckpoint(d, tok), /truncated or corrupt/);
    assert.throws(() => loadCheckpoint(path.join(dir, 'nothing'), tok), /no model\.json/);
    fs.writeFileSync(path.join(d, 'model.json'), '{"kind": ');
    assert.throws(() => loadCheckpoint(d, tok), /not valid JSON/);
  });

  it('refuses a critic where a policy is expected', () => {
    const critic = makeCritic(model);
    saveCheckpoint(path.join(dir, 'e'), critic, tok, {});
    assert.throws(() => loadCheckpoint(path.join(dir, 'e'), tok, { expect: 'policy' }), /is a critic/);
    critic.dispose();
  });
});

describe('per-call sampler (12.4)', () => {
  let model: TinyAgent;
  before(async () => {
    await initBackend();
    model = TinyAgent.create(defaultModelConfig(tok.size), 4);
  });

  it('with the full context reproduces rolloutBatch token for token', () => {
    const tasks = renamedTasks(16, 4);
    const ref = sampleEpisodes(model, tasks, 0);
    const { trajs, samples } = sampleInContext(model, tasks, { kind: 'full' }, 0);
    assert.deepEqual(
      trajs.map((t) => t.ids),
      ref.map((t) => t.ids),
    );
    assert.equal(
      samples.length,
      ref.reduce((n, t) => n + t.info.n_turns, 0),
    );
  });

  it('per-call log-probs sum to the episode log-prob (1e-5)', () => {
    const tasks = renamedTasks(16, 5);
    const { trajs, samples } = sampleInContext(model, tasks, { kind: 'full' }, 1);
    const score = (t: { ids: number[]; actionMask: number[] }) =>
      tf.tidy(() => {
        const lp = sequenceLogProbs(model, tf.tensor2d([t.ids], undefined, 'int32')).arraySync()[0];
        return lp.reduce((a, x, i) => a + x * t.actionMask[i], 0);
      });
    const perEpisode = trajs.map(score);
    const perCall = trajs.map(() => 0);
    for (const s of samples) perCall[s.episode] += score(s.traj);
    const maxDiff = Math.max(...perEpisode.map((x, i) => Math.abs(x - perCall[i])));
    assert.ok(
      maxDiff < 1e-5 * Math.max(1, Math.max(...perEpisode.map(Math.abs))),
      `max difference ${maxDiff}`,
    );
  });

  it('under keepObs(1) calls see no old tool output, views fit, and samples differ from the episodes', () => {
    const tasks = renamedTasks(24, 6);
    const { trajs, samples } = sampleInContext(model, tasks, { kind: 'keepObs', k: 1 }, 2, {
      env: () => makeEnv({ maxTurns: 12 }),
    });
    let dropped = 0;
    for (const s of samples) {
      assert.ok(s.traj.ids.length <= 256);
      s.traj.owner.forEach((o, i) => {
        if (o === 3)
          assert.ok(
            s.traj.turn[i] >= s.call - 1,
            `call ${s.call} sees tool output of turn ${s.traj.turn[i]}`,
          );
      });
      const ep = trajs[s.episode];
      const prefix = ep.ids.slice(0, s.traj.ids.length);
      if (prefix.some((x, i) => x !== s.traj.ids[i])) dropped++;
    }
    assert.ok(dropped > 0, 'some call must have seen a masked history');
  });
});

describe('the RL base', () => {
  before(async () => {
    await initBackend();
  });

  it('is deterministic for a seed (a short build, twice)', () => {
    const opts = { seed: 4, steps: 3, episodes: 64, knowledge: 32, batchSize: 16 };
    const a = makeRlBase(tok, train, opts);
    const b = makeRlBase(tok, train, opts);
    const c = makeRlBase(tok, train, { ...opts, seed: 5 });
    const sa = a.snapshot();
    for (const [name, v] of b.snapshot()) assert.deepEqual(v, sa.get(name), name);
    assert.notDeepEqual(c.snapshot().get('wte'), sa.get('wte'));
    for (const m of [a, b, c]) m.dispose();
  });

  it('the shipped base loads, and its behaviour is uninformed: pass 0.10 to 0.20 on training tasks', () => {
    const base = loadCheckpoint(baseCheckpointDir(), tok, { expect: 'policy' });
    const { stats } = evaluate(base, train, tok, makeRLConfig(), { n: 8, seed: 11 });
    base.dispose();
    assert.ok(stats.pass_rate >= 0.07 && stats.pass_rate <= 0.25, `pass ${stats.pass_rate} (160 episodes)`);
    assert.ok(stats.turns >= 2.5 && stats.turns <= 4.5, `turns ${stats.turns}`);
    assert.ok(stats.reads > 0.1 && stats.reads < 0.9, `reads ${stats.reads}`);
  });
});
