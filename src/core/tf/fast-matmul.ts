/**
 * A faster BatchMatMul for TF.js's `wasm` backend (issue 18). The backend runs 2-D matmuls without
 * transpose flags in XNNPACK and every other matmul (attention's batched products, and the
 * transposed ones autodiff makes in the backward pass) in a scalar loop, which was most of a
 * training step. This replaces the kernel with one that keeps XNNPACK's case and sends the rest to
 * a WebAssembly SIMD module (kernels/matmul.wat) that works in the backend's own memory and
 * computes, bit for bit, what the scalar loop does: a seeded run is unchanged.
 *
 * `installFastMatmul()` is called by `initBackend` on `wasm`; EPISODE_LAB_FAST_MATMUL=0 leaves the
 * backend's kernel alone, and `setFastMatmul(false)` switches back at run time (tests, benchmark).
 */
import * as tf from '@tensorflow/tfjs-core';
import { WASM_BASE64 } from './kernels/matmul-wasm.js';

/** The parts of TF.js's wasm backend this kernel uses (it does not export their types). */
interface WasmBackend {
  wasm: { asm?: { memory?: unknown }; _malloc(bytes: number): number; _free(ptr: number): void };
  dataIdMap: { get(dataId: object): { memoryOffset?: number | null } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): tf.TensorInfo;
}

type Bmm = (
  a: number,
  b: number,
  out: number,
  batch: number,
  m: number,
  k: number,
  n: number,
  strideA: number,
  strideB: number,
  rowA: number,
  colA: number,
  transposedB: number,
  scratch: number,
) => void;

let installed: { original: tf.KernelFunc; bmm: Bmm } | null = null;
let enabled = true;

/** Use (true) or bypass (false) the SIMD kernel once installed; returns the previous setting. */
export function setFastMatmul(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** True once the SIMD kernel replaces the wasm backend's BatchMatMul (and it is not bypassed). */
export function fastMatmulActive(): boolean {
  return installed !== null && enabled;
}

/**
 * Replace the wasm backend's BatchMatMul with the SIMD one (once; the backend must be `wasm` and
 * ready). Returns false, changing nothing, when that is not possible.
 */
export function installFastMatmul(): boolean {
  if (installed) return true;
  if (process.env.EPISODE_LAB_FAST_MATMUL === '0' || tf.getBackend() !== 'wasm') return false;
  const backend = tf.backend() as unknown as WasmBackend;
  const memory = backend.wasm?.asm?.memory;
  const original = tf.getKernel('BatchMatMul', 'wasm');
  if (!(memory instanceof WebAssembly.Memory) || !original) return false;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64')), {
    env: { memory },
  });
  const bmm = instance.exports.bmm as Bmm;
  installed = { original: original.kernelFunc, bmm };
  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    kernelFunc: (args) => batchMatMul(args),
  });
  return true;
}

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function batchMatMul(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { original, bmm } = installed!;
  const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
  const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
  if (!enabled || a.dtype !== 'float32' || b.dtype !== 'float32') return original(args);
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
  const k = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
  const kb = transposeB ? b.shape[rb - 1] : b.shape[rb - 2];
  const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
  const batchA = size(a.shape.slice(0, -2));
  const batchB = size(b.shape.slice(0, -2));
  // XNNPACK's case stays XNNPACK's; shapes TF.js rejects or that are empty stay TF.js's to report.
  if (!transposeA && !transposeB && batchA === 1 && batchB === 1) return original(args);
  if (k !== kb || m * n * k === 0 || (batchA !== batchB && batchA !== 1 && batchB !== 1))
    return original(args);
  const backend = args.backend as unknown as WasmBackend;
  const offsetA = backend.dataIdMap.get(a.dataId)?.memoryOffset;
  const offsetB = backend.dataIdMap.get(b.dataId)?.memoryOffset;
  if (typeof offsetA !== 'number' || typeof offsetB !== 'number') return original(args);
  const outer = tf.broadcast_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const batch = Math.max(batchA, batchB);
  const out = backend.makeOutput([batch, m, n], 'float32');
  const offsetOut = backend.dataIdMap.get(out.dataId)?.memoryOffset as number;
  const scratch = transposeB ? backend.wasm._malloc(k * n * 4) : 0;
  try {
    bmm(
      offsetA,
      offsetB,
      offsetOut,
      batch,
      m,
      k,
      n,
      batchA === 1 ? 0 : m * k * 4,
      batchB === 1 ? 0 : k * n * 4,
      transposeA ? 4 : k * 4,
      transposeA ? m * 4 : 4,
      transposeB ? 1 : 0,
      scratch,
    );
  } finally {
    if (scratch) backend.wasm._free(scratch);
  }
  return { dataId: out.dataId, shape: [...outer, m, n], dtype: 'float32' };
}
