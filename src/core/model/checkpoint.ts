/**
 * Checkpoints: a folder with `model.json` (a small header: format, vocabulary, model config, how
 * it was made, and a TF.js-style weights manifest) and `weights.bin` (float32, little-endian, in
 * manifest order). Loading checks the vocabulary and the shapes before touching TF.js, and says
 * what does not match and what to do.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Tokenizer } from '../gym/tokenizer.js';
import { type ModelConfig, parameterShapes, TinyAgent } from './tinyagent.js';

export const CHECKPOINT_FORMAT = 1;

export interface CheckpointHeader {
  format: number;
  kind: 'episode-lab-tinyagent';
  config: ModelConfig;
  vocab: string[];
  /** How it was made: command, seed, steps, calibration, ... */
  made: Record<string, unknown>;
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: 'float32' }[] }[];
}

export class CheckpointError extends Error {}

export function saveCheckpoint(
  dir: string,
  model: TinyAgent,
  tok: Tokenizer,
  made: Record<string, unknown>,
): void {
  fs.mkdirSync(dir, { recursive: true });
  const shapes = parameterShapes(model.config);
  const values = model.snapshot();
  const total = shapes.reduce((n, [, s]) => n + s.reduce((a, b) => a * b, 1), 0);
  const buf = new Float32Array(total);
  let at = 0;
  for (const [name] of shapes) {
    const v = values.get(name) as Float32Array;
    buf.set(v, at);
    at += v.length;
  }
  const header: CheckpointHeader = {
    format: CHECKPOINT_FORMAT,
    kind: 'episode-lab-tinyagent',
    config: model.config,
    vocab: tok.itos.slice(),
    made,
    weightsManifest: [
      { paths: ['weights.bin'], weights: shapes.map(([name, shape]) => ({ name, shape, dtype: 'float32' })) },
    ],
  };
  // Write the weights first and the header last (atomically), so a crash never leaves a header
  // that points at missing or partial weights.
  fs.writeFileSync(path.join(dir, 'weights.bin'), Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
  const tmp = path.join(dir, `model.json.tmp-${process.pid}`);
  fs.writeFileSync(tmp, `${JSON.stringify(header, null, 1)}\n`);
  fs.renameSync(tmp, path.join(dir, 'model.json'));
}

export function readCheckpointHeader(dir: string): CheckpointHeader {
  const file = path.join(dir, 'model.json');
  if (!fs.existsSync(file))
    throw new CheckpointError(`${dir} is not a checkpoint: it has no model.json (was it saved completely?)`);
  let h: CheckpointHeader;
  try {
    h = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CheckpointError(
      `${file} is not valid JSON (${(e as Error).message}): the checkpoint is corrupt`,
    );
  }
  if (h.kind !== 'episode-lab-tinyagent')
    throw new CheckpointError(`${file} is not an Episode Lab checkpoint`);
  if (h.format !== CHECKPOINT_FORMAT)
    throw new CheckpointError(
      `${file} has checkpoint format ${h.format}; this version reads ${CHECKPOINT_FORMAT}`,
    );
  return h;
}

export interface LoadOptions {
  /** Require a critic (value head) or a policy. */
  expect?: 'policy' | 'critic';
}

/**
 * Load a checkpoint for a tokenizer. Errors name the mismatch (vocabulary, shapes, file size) and
 * say what to do, before any TF.js work.
 */
export function loadCheckpoint(dir: string, tok: Tokenizer, opts: LoadOptions = {}): TinyAgent {
  const h = readCheckpointHeader(dir);
  if (h.vocab.length !== tok.size || h.vocab.some((t, i) => tok.itos[i] !== t)) {
    const i = h.vocab.findIndex((t, k) => tok.itos[k] !== t);
    const where =
      h.vocab.length !== tok.size
        ? `it has ${h.vocab.length} tokens, the gym's tokenizer has ${tok.size}`
        : `token ${i} is '${h.vocab[i]}' there and '${tok.itos[i]}' here`;
    throw new CheckpointError(
      `checkpoint ${dir} was made with another vocabulary (${where}). ` +
        'It belongs to another version of the gym: rebuild the base with `episode-lab make-base` or retrain.',
    );
  }
  if (opts.expect === 'critic' && !h.config.valueHead)
    throw new CheckpointError(`checkpoint ${dir} is a policy, a critic (value head) was expected`);
  if (opts.expect === 'policy' && h.config.valueHead)
    throw new CheckpointError(`checkpoint ${dir} is a critic, a policy was expected`);
  const expected = parameterShapes(h.config);
  const listed = h.weightsManifest.flatMap((m) => m.weights);
  for (const [name, shape] of expected) {
    const w = listed.find((x) => x.name === name);
    if (!w)
      throw new CheckpointError(
        `checkpoint ${dir} lacks parameter ${name} for its config (${h.config.nLayers} layers, d=${h.config.dModel})`,
      );
    if (w.shape.join('x') !== shape.join('x'))
      throw new CheckpointError(
        `checkpoint ${dir}: parameter ${name} has shape [${w.shape}] but the config needs [${shape}]`,
      );
  }
  const file = path.join(dir, 'weights.bin');
  if (!fs.existsSync(file)) throw new CheckpointError(`checkpoint ${dir} has no weights.bin`);
  const bytes = fs.readFileSync(file);
  const need = listed.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1), 0) * 4;
  if (bytes.byteLength !== need)
    throw new CheckpointError(
      `checkpoint ${dir}: weights.bin has ${bytes.byteLength} bytes, the manifest needs ${need} (truncated or corrupt)`,
    );
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const values = new Map<string, Float32Array>();
  let at = 0;
  for (const w of listed) {
    const n = w.shape.reduce((a, b) => a * b, 1);
    values.set(w.name, all.slice(at, at + n));
    at += n;
  }
  return new TinyAgent(h.config, values);
}
