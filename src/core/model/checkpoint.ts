/**
 * Checkpoints: a folder with `model.json` (a small header: format, vocabulary, model config, how
 * it was made, and a TF.js-style weights manifest) and `weights.bin` (float32, little-endian, in
 * manifest order). Loading checks the header with a schema, the vocabulary, the shapes, the size of
 * weights.bin and that every weight is finite before touching TF.js, and says what does not match
 * and what to do.
 *
 * A checkpoint is never written in place: it is written to `<dir>.tmp` (weights.bin, then
 * model.json, each fsynced), then moved into place by replaceDir (src/core/durable.ts). A
 * folder is complete when its model.json is valid and weights.bin has the manifest's size; a loader
 * whose folder is missing or incomplete (a kill mid-swap) takes the complete one of `<dir>.tmp` /
 * `<dir>.old`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v from 'valibot';
import { fsyncDir, pickDir, replaceDir, writeFileDurable } from '../durable.js';
import type { Tokenizer } from '../gym/tokenizer.js';
import { bool, int, list, loose, oneOf, parse, show, strict, strings, text } from '../schema.js';
import { type ModelConfig, parameterShapes, TinyAgent } from './tinyagent.js';

export const CHECKPOINT_FORMAT = 1;

/** Largest model dimensions a checkpoint may declare (the gym's models are far smaller). */
export const MODEL_LIMITS = { vocabSize: 100_000, dModel: 4096, nLayers: 64, nHeads: 64, mlpRatio: 16 };

const ModelConfigSchema = v.pipe(
  strict(
    {
      vocabSize: int(1, MODEL_LIMITS.vocabSize),
      dModel: int(1, MODEL_LIMITS.dModel),
      nLayers: int(1, MODEL_LIMITS.nLayers),
      nHeads: int(1, MODEL_LIMITS.nHeads),
      mlpRatio: int(1, MODEL_LIMITS.mlpRatio),
      // Episodes are up to about 60 tokens; a shorter context cannot hold one.
      contextLength: int(64, 65_536),
      valueHead: bool(),
    },
    'a model config',
  ),
  v.check(
    (c) => c.dModel % c.nHeads === 0,
    (i) =>
      `dModel must be a multiple of nHeads, got ${show((i.input as ModelConfig).dModel)} and ${show((i.input as ModelConfig).nHeads)}`,
  ),
);

const HeaderSchema = loose(
  {
    format: v.literal(
      CHECKPOINT_FORMAT,
      (i) => `expected checkpoint format ${CHECKPOINT_FORMAT}, got ${show(i.input)}`,
    ),
    kind: oneOf(['episode-lab-tinyagent']),
    config: ModelConfigSchema,
    vocab: strings(MODEL_LIMITS.vocabSize),
    made: loose({}, 'an object (how the checkpoint was made)'),
    weightsManifest: list(
      loose({
        paths: list(text(200), 1, 1),
        weights: list(
          loose({
            name: text(200),
            shape: list(int(1, 1 << 24), 0, 4),
            dtype: oneOf(['float32']),
          }),
          1,
          10_000,
        ),
      }),
      1,
      1,
    ),
  },
  'a checkpoint header',
);

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

/** The float32 values of a model, in parameterShapes order, and its header. */
function serialize(model: TinyAgent, tok: Tokenizer, made: Record<string, unknown>) {
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
  return { buf, header };
}

/**
 * Write a checkpoint's files into `dir`, a folder that is not in place yet (it is created; it must
 * not exist): weights.bin, then model.json (the completeness marker), each fsynced, then the folder.
 */
export function writeCheckpointFiles(
  dir: string,
  model: TinyAgent,
  tok: Tokenizer,
  made: Record<string, unknown>,
): void {
  const { buf, header } = serialize(model, tok, made);
  fs.mkdirSync(dir, { recursive: true });
  writeFileDurable(path.join(dir, 'weights.bin'), new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
  writeFileDurable(path.join(dir, 'model.json'), `${JSON.stringify(header, null, 1)}\n`);
  fsyncDir(dir);
}

/**
 * Save a checkpoint to `dir`, replacing any checkpoint there in one step: the files are written to
 * `<dir>.tmp`, which then takes the place of `dir` (replaceDir).
 */
export function saveCheckpoint(
  dir: string,
  model: TinyAgent,
  tok: Tokenizer,
  made: Record<string, unknown>,
): void {
  const tmp = `${dir}.tmp`;
  if (fs.existsSync(tmp)) fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.resolve(dir)), { recursive: true });
  writeCheckpointFiles(tmp, model, tok, made);
  replaceDir(tmp, dir);
}

const whatToDo = 'use another checkpoint (or save this one again)';

/** Read and check `dir/model.json` (exactly that folder). */
function readHeaderAt(dir: string): CheckpointHeader {
  const file = path.join(dir, 'model.json');
  if (!fs.existsSync(file))
    throw new CheckpointError(`${dir} is not a checkpoint: it has no model.json (was it saved completely?)`);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CheckpointError(
      `${file} is not valid JSON (${(e as Error).message}): the checkpoint is corrupt; ${whatToDo}`,
    );
  }
  const kind = (raw as { kind?: unknown } | null)?.kind;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && kind !== 'episode-lab-tinyagent')
    throw new CheckpointError(`${file} is not an Episode Lab checkpoint (kind ${show(kind)})`);
  const format = (raw as { format?: unknown } | null)?.format;
  if (typeof format === 'number' && format !== CHECKPOINT_FORMAT)
    throw new CheckpointError(
      `${file} has checkpoint format ${format}; this version reads ${CHECKPOINT_FORMAT}`,
    );
  const r = parse(HeaderSchema, raw, file);
  if (!r.ok) throw new CheckpointError(`${r.error}; the checkpoint cannot be used: ${whatToDo}`);
  const h = r.value as unknown as CheckpointHeader;
  if (h.vocab.length !== h.config.vocabSize)
    throw new CheckpointError(
      `${file}: the vocabulary has ${h.vocab.length} tokens but config.vocabSize is ${h.config.vocabSize}; ${whatToDo}`,
    );
  return h;
}

/** A checkpoint folder that is complete: a valid model.json and a weights.bin of the manifest's size. */
export function isCompleteCheckpoint(dir: string): boolean {
  try {
    const h = readHeaderAt(dir);
    const size = fs.statSync(path.join(dir, 'weights.bin')).size;
    return size === manifestBytes(h);
  } catch {
    return false;
  }
}

/**
 * Where the checkpoint `dir` is: `dir` itself, or when it is missing or incomplete (a process was
 * killed while replacing it) the complete one of `<dir>.tmp` / `<dir>.old`. Read-only.
 */
export function checkpointLocation(dir: string): string {
  if (fs.existsSync(path.join(dir, 'model.json'))) return dir;
  return pickDir(dir, isCompleteCheckpoint) ?? dir;
}

const count = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
const manifestBytes = (h: CheckpointHeader) =>
  h.weightsManifest.flatMap((m) => m.weights).reduce((n, w) => n + count(w.shape), 0) * 4;

export interface LoadOptions {
  /** Require a critic (value head) or a policy. */
  expect?: 'policy' | 'critic';
}

/**
 * Load a checkpoint for a tokenizer. Errors name the mismatch (vocabulary, shapes, file size, a
 * non-finite weight) and say what to do, before any TF.js work.
 */
export function loadCheckpoint(dir: string, tok: Tokenizer, opts: LoadOptions = {}): TinyAgent {
  const at = checkpointLocation(dir);
  const h = readHeaderAt(at);
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
  if (listed.length !== expected.length) {
    const extra = listed.find((w) => !expected.some(([name]) => name === w.name));
    throw new CheckpointError(
      `checkpoint ${dir}: the manifest lists ${listed.length} parameters, the config has ${expected.length}` +
        `${extra ? ` (${extra.name} is not a parameter of this model)` : ' (one is listed twice)'}; ${whatToDo}`,
    );
  }
  const file = path.join(at, 'weights.bin');
  if (!fs.existsSync(file)) throw new CheckpointError(`checkpoint ${dir} has no weights.bin; ${whatToDo}`);
  const bytes = fs.readFileSync(file);
  const need = manifestBytes(h);
  if (bytes.byteLength !== need)
    throw new CheckpointError(
      `checkpoint ${dir}: weights.bin has ${bytes.byteLength} bytes, the manifest needs ${need} (truncated or corrupt); ${whatToDo}`,
    );
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const values = new Map<string, Float32Array>();
  let offset = 0;
  for (const w of listed) {
    const n = count(w.shape);
    const x = all.subarray(offset, offset + n);
    const bad = x.findIndex((y) => !Number.isFinite(y));
    if (bad >= 0)
      throw new CheckpointError(
        `checkpoint ${dir}: parameter ${w.name} holds ${x[bad]} at index ${bad} (the training diverged); ` +
          'use an earlier checkpoint (checkpoints/step-NNNN) or start a new run',
      );
    values.set(w.name, x.slice());
    offset += n;
  }
  return new TinyAgent(h.config, values);
}
