/** Section 12.1: observations are inputs, not actions. */
import * as tf from '@tensorflow/tfjs-core';
import { collate, OWNER, OWNER_NAMES } from '../gym/episode.js';
import { makeTasks } from '../gym/tasks.js';
import { loadCheckpoint } from '../model/checkpoint.js';
import { selectedLogProbs } from '../model/logprobs.js';
import { baseCheckpointDir } from '../paths.js';
import { makeRLConfig } from '../rl/config.js';
import { defaultEnvFactory, sampleGroups } from '../rl/grpo.js';
import { ppoClipLoss } from '../rl/loss.js';
import { Rng } from '../rng.js';
import type { Recipe } from './types.js';

export const recipe121Mask: Recipe = {
  name: '12.1-mask',
  section: '12.1',
  title: 'Which positions get gradient: the policy-gradient loss differentiated w.r.t. the logits',
  mechanism: 'gradient on policy positions only',
  trains: false,
  async run(ctx) {
    const base = loadCheckpoint(baseCheckpointDir(), ctx.tok, { expect: 'policy' });
    const cfg = makeRLConfig({ seed: ctx.seed });
    const trajs = sampleGroups(
      base,
      defaultEnvFactory(cfg),
      makeTasks('train').slice(0, 2),
      ctx.tok,
      cfg,
      new Rng(ctx.seed),
    );
    const batch = collate(trajs, ctx.tok.padId);
    const B = trajs.length;
    const T = batch.ids[0].length;
    // logits = base(ids)[:, :-1] as a leaf; loss = the clipped loss of selected_log_probs(logits, ids[:, 1:]), A = 1
    const touched = tf.tidy(() => {
      const ids = tf.tensor2d(batch.ids, undefined, 'int32');
      const logits = tf.slice(base.logits(ids), [0, 0, 0], [B, T - 1, ctx.tok.size]) as tf.Tensor3D;
      const next = tf.slice(ids, [0, 1], [B, T - 1]) as tf.Tensor2D;
      const mask = tf.tensor2d(batch.actionMask);
      // The training loss at ratio 1 (oldLogp = logp's value): its gradient is REINFORCE's.
      const old = selectedLogProbs(logits, next);
      const adv = tf.ones([B]) as tf.Tensor1D;
      const grad = tf.grad(
        (l: tf.Tensor) =>
          ppoClipLoss(selectedLogProbs(l as tf.Tensor3D, next), old, adv, mask, cfg.clip, cfg.lossMode).loss,
      )(logits);
      return tf.greater(tf.sum(tf.abs(grad), -1), 0).arraySync() as unknown as boolean[][];
    });
    base.dispose();
    const rows = OWNER_NAMES.map((name) => {
      const code = OWNER[name];
      let predicted = 0;
      let withGrad = 0;
      batch.owner.forEach((row, b) => {
        row.forEach((o, i) => {
          if (o === code) {
            predicted++;
            if (touched[b][i]) withGrad++;
          }
        });
      });
      return [name, predicted, withGrad];
    });
    const padWithGrad = batch.owner.reduce(
      (n, row, b) => n + row.filter((o, i) => o === -1 && touched[b][i]).length,
      0,
    );
    return {
      tables: [
        {
          title: `12.1 gradient by owner: ${B} base-agent episodes on 2 training tasks (seed ${ctx.seed})`,
          columns: ['owner', 'predicted positions', 'with gradient'],
          rows,
          digits: [0, 0, 0],
        },
      ],
      figures: [],
      runs: [],
      notes: [`padding positions with gradient: ${padWithGrad}`],
    };
  },
};

export const recipe121Budget: Recipe = {
  name: '12.1-budget',
  section: '12.1',
  title: 'Turn budgets 6, 12, 24 on the RL base: episode length, policy share, context overflow',
  mechanism: 'policy share about 0.3; overflow only at large budgets',
  trains: false,
  async run(ctx) {
    const base = loadCheckpoint(baseCheckpointDir(), ctx.tok, { expect: 'policy' });
    const rows: (string | number)[][] = [];
    const tasks = makeTasks('train');
    for (const maxTurns of [6, 12, 24]) {
      const cfg = makeRLConfig({ maxTurns, seed: ctx.seed });
      const trajs = sampleGroups(
        base,
        defaultEnvFactory(cfg),
        ctx.smoke ? tasks.slice(0, 4) : tasks,
        ctx.tok,
        cfg,
        new Rng(ctx.seed + 1),
      );
      const lengths = trajs.map((t) => t.ids.length);
      const policy = trajs.reduce((a, t) => a + t.actionMask.reduce((p, q) => p + q, 0), 0);
      const predicted = lengths.reduce((a, n) => a + n - 1, 0);
      rows.push([
        `max_turns ${maxTurns}`,
        lengths.reduce((a, b) => a + b, 0) / trajs.length,
        Math.max(...lengths),
        policy / predicted,
        trajs.filter((t) => t.info.stop === 'truncated').length / trajs.length,
      ]);
      ctx.log(`max_turns ${maxTurns}: ${trajs.length} episodes`);
    }
    base.dispose();
    return {
      tables: [
        {
          title: `12.1 turn budgets on the RL base (${ctx.smoke ? 4 : 20} training tasks x 8, seed ${ctx.seed})`,
          columns: ['budget', 'tokens per episode', 'max tokens', 'policy share', 'context overflow'],
          rows,
          digits: [0, 1, 0, 2, 3],
        },
      ],
      figures: [],
      runs: [],
      notes: [],
    };
  },
};
