/**
 * Checkpoint validation and the checkpoint swap: model.json is checked by a
 * schema, weights.bin by the manifest's size and for non-finite values, a training state by its
 * state.json and optimizer.bin, each with a one-line error that says what is wrong and what to do.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import {
  CheckpointError,
  defaultModelConfig,
  initBackend,
  isCompleteCheckpoint,
  loadCheckpoint,
  makeRLConfig,
  saveCheckpoint,
  TinyAgent,
} from '../../../src/core/index.js';
import { resumeSteps, tok, trainSteps } from '../../fixtures.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'el-ckpt-'));

/** The error a load gives: a CheckpointError of one line, never a raw TypeError. */
function loadError(dir: string, expect?: 'policy' | 'critic'): string {
  try {
    loadCheckpoint(dir, tok, { expect }).dispose();
  } catch (e) {
    assert.ok(e instanceof CheckpointError, `${(e as Error).name}: ${(e as Error).message}`);
    assert.doesNotMatch(e.message, /\n|TypeError|Cannot read properties|is not a function|undefined/);
    return e.message;
  }
  assert.fail('the checkpoint loaded');
}

describe('checkpoint validation', () => {
  let model: TinyAgent;
  let root: string;
  before(async () => {
    await initBackend();
    model = TinyAgent.create(defaultModelConfig(tok.size), 3);
    root = tmp();
  });
  /** A saved checkpoint whose model.json is edited by `edit`. */
  const edited = (name: string, edit: (h: Record<string, unknown>) => void) => {
    const d = path.join(root, name);
    saveCheckpoint(d, model, tok, {});
    const h = JSON.parse(fs.readFileSync(path.join(d, 'model.json'), 'utf8'));
    edit(h);
    fs.writeFileSync(path.join(d, 'model.json'), JSON.stringify(h));
    return d;
  };

  it('rejects a header without a manifest, a vocabulary that is not a list of strings, a bad model config', () => {
    assert.match(
      loadError(
        edited('no-manifest', (h) => {
          delete h.weightsManifest;
        }),
      ),
      /model\.json: weightsManifest: is required/,
    );
    assert.match(
      loadError(
        edited('vocab', (h) => {
          h.vocab = 'abc';
        }),
      ),
      /vocab: expected a list of at most \d+ strings/,
    );
    assert.match(
      loadError(
        edited('vocab2', (h) => {
          h.vocab = [1, 2];
        }),
      ),
      /vocab: expected a list/,
    );
    assert.match(
      loadError(
        edited('ctx', (h) => {
          (h.config as { contextLength: number }).contextLength = 16;
        }),
      ),
      /config\.contextLength: expected an integer from 64 to/,
    );
    assert.match(
      loadError(
        edited('heads', (h) => {
          (h.config as { nHeads: number }).nHeads = 5;
        }),
      ),
      /dModel must be a multiple of nHeads/,
    );
    assert.match(
      loadError(
        edited('layers', (h) => {
          (h.config as { nLayers: number }).nLayers = 1e9;
        }),
      ),
      /config\.nLayers: expected an integer from 1 to 64/,
    );
    assert.match(
      loadError(
        edited('empty', (h) => {
          for (const k of Object.keys(h)) delete h[k];
        }),
      ),
      /is not an Episode Lab checkpoint/,
    );
    fs.mkdirSync(path.join(root, 'array'));
    fs.writeFileSync(path.join(root, 'array', 'model.json'), '[1, 2]');
    assert.match(loadError(path.join(root, 'array')), /expected a checkpoint header/);
  });

  it('rejects a manifest that does not match weights.bin or the model', () => {
    assert.match(
      loadError(
        edited('extra', (h) => {
          const m = (h.weightsManifest as { weights: unknown[] }[])[0];
          m.weights.push({ name: 'extra', shape: [4], dtype: 'float32' });
        }),
      ),
      /the manifest lists \d+ parameters, the config has \d+ \(extra is not a parameter/,
    );
    const d = path.join(root, 'short');
    saveCheckpoint(d, model, tok, {});
    fs.truncateSync(path.join(d, 'weights.bin'), 1000);
    assert.match(
      loadError(d),
      /weights\.bin has 1000 bytes, the manifest needs \d+ \(truncated or corrupt\)/,
    );
  });

  it('rejects NaN and Infinity weights', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const d = path.join(root, `nan-${bad}`);
      saveCheckpoint(d, model, tok, {});
      const w = fs.readFileSync(path.join(d, 'weights.bin'));
      w.writeFloatLE(bad, 4 * 1234);
      fs.writeFileSync(path.join(d, 'weights.bin'), w);
      assert.match(
        loadError(d),
        new RegExp(`parameter wte holds ${bad} at index 1234 \\(the training diverged\\)`),
      );
    }
  });

  it('saves over an existing checkpoint through a swap, and a loader finds it at any point of the swap', () => {
    const d = path.join(root, 'final');
    saveCheckpoint(d, model, tok, { n: 1 });
    saveCheckpoint(d, model, tok, { n: 2 });
    assert.deepEqual(
      fs.readdirSync(root).filter((f) => f.startsWith('final')),
      ['final'],
    );
    assert.ok(isCompleteCheckpoint(d));
    // Killed between "final -> final.old" and "final.tmp -> final": the new one is loaded.
    fs.renameSync(d, `${d}.tmp`);
    loadCheckpoint(d, tok).dispose();
    // Killed with only the old copy complete.
    fs.renameSync(`${d}.tmp`, `${d}.old`);
    loadCheckpoint(d, tok).dispose();
    fs.rmSync(`${d}.old`, { recursive: true });
    assert.match(loadError(d), /has no model\.json/);
  });
});

describe('training state validation (resume)', () => {
  const cfg = makeRLConfig({ promptsPerStep: 2, groupSize: 2, epochs: 1, seed: 4 });
  /** A finished-but-resumable run: 2 steps of 3 trained, stopped. */
  async function stoppedRun(): Promise<string> {
    const dir = path.join(tmp(), 'run');
    await trainSteps(dir, cfg, 3, 2);
    return dir;
  }
  const resume = (dir: string) => resumeSteps(dir, cfg, 3);
  /** The resume is refused with a CheckpointError of one line naming the problem and what to do. */
  async function refused(dir: string, problem: RegExp): Promise<void> {
    await assert.rejects(resume(dir), (e: Error) => {
      assert.ok(e instanceof CheckpointError, `${e.name}: ${e.message}`);
      assert.match(e.message, problem);
      assert.match(e.message, /start a new run from its last numbered checkpoint .* or from scratch/);
      assert.doesNotMatch(e.message, /\n|TypeError|Cannot read properties/);
      return true;
    });
  }
  before(async () => {
    await initBackend();
  });

  it('a truncated optimizer.bin', async () => {
    const dir = await stoppedRun();
    const f = path.join(dir, 'checkpoints', 'latest', 'optimizer.bin');
    fs.truncateSync(f, 100);
    await refused(dir, /latest: optimizer\.bin has 100 bytes, state\.json lists \d+/);
    assert.ok(fs.existsSync(f), 'the damaged state is left for a look');
  });

  it('a garbage or wrong-shape state.json', async () => {
    const dir = await stoppedRun();
    const f = path.join(dir, 'checkpoints', 'latest', 'state.json');
    const good = fs.readFileSync(f, 'utf8');
    fs.writeFileSync(f, 'garbage');
    await refused(dir, /latest: state\.json is not valid JSON/);
    fs.writeFileSync(f, JSON.stringify({ ...JSON.parse(good), rng: 'x' }));
    await refused(dir, /latest: state\.json: rng: expected a list of numbers/);
    fs.writeFileSync(f, JSON.stringify({ ...JSON.parse(good), optimizer: [{ name: 'm/0', shape: [] }] }));
    await refused(dir, /latest: optimizer\.bin has \d+ bytes, state\.json lists 4/);
  });

  it('an optimizer entry that does not fit the model, and NaN moments', async () => {
    const dir = await stoppedRun();
    const latest = path.join(dir, 'checkpoints', 'latest');
    const f = path.join(latest, 'state.json');
    const state = JSON.parse(fs.readFileSync(f, 'utf8'));
    const bad = {
      ...state,
      optimizer: state.optimizer.map((w: { name: string }, i: number) =>
        i === 2 ? { ...w, name: 'm/999' } : w,
      ),
    };
    fs.writeFileSync(f, JSON.stringify(bad));
    await assert.rejects(
      resume(dir),
      /optimizer entry m\/999: the model has \d+ parameters.*start a new run/,
    );
    fs.writeFileSync(f, JSON.stringify(state));
    const bin = fs.readFileSync(path.join(latest, 'optimizer.bin'));
    bin.writeFloatLE(Number.NaN, 40);
    fs.writeFileSync(path.join(latest, 'optimizer.bin'), bin);
    await assert.rejects(resume(dir), /optimizer\.bin holds NaN at index 10.*start a new run/);
  });

  it('a state that does not match the last history step', async () => {
    const dir = await stoppedRun();
    fs.rmSync(path.join(dir, 'checkpoints', 'latest'), { recursive: true });
    await refused(
      dir,
      /history\.jsonl ends at step 1 but no complete training state after it is saved \(checkpoints\/latest is missing\)/,
    );
  });
});
