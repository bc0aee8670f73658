/**
 * A model's parameters (or their gradients) as one Float32Array in checkpoint order (the order of
 * `parameterShapes`): how worker threads receive the weights and send gradients back.
 */
import { type ModelConfig, parameterShapes, type TinyAgent } from './tinyagent.js';

/** Every parameter's values in checkpoint order, in one array. */
export function packParameters(config: ModelConfig, values: (name: string) => Float32Array): Float32Array {
  const shapes = parameterShapes(config);
  const total = shapes.reduce((a, [, s]) => a + s.reduce((x, y) => x * y, 1), 0);
  const out = new Float32Array(total);
  let off = 0;
  for (const [name, shape] of shapes) {
    const n = shape.reduce((x, y) => x * y, 1);
    const v = values(name);
    if (v.length !== n)
      throw new Error(`parameter ${name} has ${v.length} values, its shape [${shape}] needs ${n}`);
    out.set(v, off);
    off += n;
  }
  return out;
}

/** The inverse of `packParameters`: views into the flat array, by name. */
export function unpackParameters(config: ModelConfig, flat: Float32Array): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  let off = 0;
  for (const [name, shape] of parameterShapes(config)) {
    const n = shape.reduce((x, y) => x * y, 1);
    out.set(name, flat.subarray(off, off + n));
    off += n;
  }
  if (off !== flat.length) throw new Error(`${flat.length} values for parameters that need ${off}`);
  return out;
}

/** The model's current parameters, flat. */
export function flatWeights(model: TinyAgent): Float32Array {
  return packParameters(model.config, (name) => model.p(name).dataSync() as Float32Array);
}
