/**
 * Faster kernels for TF.js's `wasm` backend, computing bit for bit what the backend's
 * own kernels compute, so a seeded run is unchanged:
 * - BatchMatMul: the backend runs 2-D matmuls without transpose flags in XNNPACK and every other
 *   matmul (attention's batched products, the transposed ones autodiff makes in the backward pass)
 *   in a scalar loop, most of a training step. XNNPACK's case stays; the rest goes to SIMD.
 * - Sum over axes that are not the innermost (every bias and LayerNorm gradient sums over the
 *   batch and time axes): the backend transposes the input first; this sums in place, in SIMD.
 * - Transpose that swaps two adjacent groups of axes (a matrix transpose, as linear layers'
 *   gradients make; attention's head split and merge): copied in cache-sized tiles.
 * - Identity (autodiff passes gradients through it): shares the input's memory instead of a copy,
 *   as the cpu backend does.
 * The SIMD code (kernels/kernels.wat) works in the backend's own memory.
 *
 * `installFastKernels()` is called by `initBackend` on `wasm`; EPISODE_LAB_FAST_KERNELS=0 leaves
 * the backend's kernels alone, and `setFastKernels(false)` switches back at run time (tests, bench).
 */
import * as tf from '@tensorflow/tfjs-core';
import { WASM_BASE64 } from './kernels/kernels-wasm.js';

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

type ColSum = (x: number, out: number, outer: number, rows: number, inner: number) => void;
type Swap = (src: number, dst: number, outer: number, na: number, nb: number, inner: number) => void;

let installed: {
  original: tf.KernelFunc;
  bmm: Bmm;
  originalSum: tf.KernelFunc;
  colsum: ColSum;
  originalTranspose: tf.KernelFunc;
  swap: Swap;
  originalIdentity: tf.KernelFunc;
} | null = null;
let enabled = true;

/** Use (true) or bypass (false) the SIMD kernels once installed; returns the previous setting. */
export function setFastKernels(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** True once the SIMD kernels replace the wasm backend's (and they are not bypassed). */
export function fastKernelsActive(): boolean {
  return installed !== null && enabled;
}

/**
 * Replace the wasm backend's BatchMatMul, Sum, Transpose and Identity with these (once; the backend
 * must be `wasm` and ready). Returns false, changing nothing, when that is not possible.
 */
export function installFastKernels(): boolean {
  if (installed) return true;
  if (process.env.EPISODE_LAB_FAST_KERNELS === '0' || tf.getBackend() !== 'wasm') return false;
  const backend = tf.backend() as unknown as WasmBackend;
  const memory = backend.wasm?.asm?.memory;
  const original = tf.getKernel('BatchMatMul', 'wasm');
  const originalSum = tf.getKernel('Sum', 'wasm');
  const originalTranspose = tf.getKernel('Transpose', 'wasm');
  const originalIdentity = tf.getKernel('Identity', 'wasm');
  if (
    !(memory instanceof WebAssembly.Memory) ||
    !original ||
    !originalSum ||
    !originalTranspose ||
    !originalIdentity
  )
    return false;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64')), {
    env: { memory },
  });
  installed = {
    original: original.kernelFunc,
    bmm: instance.exports.bmm as Bmm,
    originalSum: originalSum.kernelFunc,
    colsum: instance.exports.colsum as ColSum,
    originalTranspose: originalTranspose.kernelFunc,
    swap: instance.exports.swap as Swap,
    originalIdentity: originalIdentity.kernelFunc,
  };
  tf.unregisterKernel('BatchMatMul', 'wasm');
  tf.registerKernel({ kernelName: 'BatchMatMul', backendName: 'wasm', kernelFunc: batchMatMul });
  tf.unregisterKernel('Sum', 'wasm');
  tf.registerKernel({ kernelName: 'Sum', backendName: 'wasm', kernelFunc: sum });
  tf.unregisterKernel('Transpose', 'wasm');
  tf.registerKernel({ kernelName: 'Transpose', backendName: 'wasm', kernelFunc: transpose });
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({ kernelName: 'Identity', backendName: 'wasm', kernelFunc: identity });
  return true;
}

/** The input itself, one more reference to its memory (kernels never write into their inputs). */
function identity(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { x } = args.inputs as { x: tf.TensorInfo };
  if (!enabled || x.dtype === 'string') return installed!.originalIdentity(args);
  (args.backend as unknown as { incRef(dataId: object): void }).incRef(x.dataId);
  return { dataId: x.dataId, shape: [...x.shape], dtype: x.dtype };
}

/**
 * The permutation as a swap of two adjacent groups of axes, once axes of size 1 are set aside:
 * [0..p), [q..r), [p..q), [r..n) gives outer = |[0..p)|, na = |[p..q)|, nb = |[q..r)|, inner =
 * |[r..n)| (sizes as products). Null for any other permutation, or none.
 */
export function asSwap(
  shape: readonly number[],
  perm: readonly number[],
): { outer: number; na: number; nb: number; inner: number } | null {
  const kept = shape.map((d, i) => (d === 1 ? -1 : i)).filter((i) => i >= 0);
  const index = new Map(kept.map((axis, i) => [axis, i]));
  const dims = kept.map((i) => shape[i]);
  const rp = perm.filter((a) => shape[a] !== 1).map((a) => index.get(a)!);
  const n = rp.length;
  let p = 0;
  while (p < n && rp[p] === p) p++;
  if (p === n) return null;
  // Positions p, p + 1, ... hold q, q + 1, ..., r - 1 (the group that moves forward); the next
  // position must then hold p (the group it moves past cannot continue it, as p < q).
  const q = rp[p];
  let r = q;
  while (p + (r - q) < n && rp[p + (r - q)] === r) r++;
  // Then p .. q - 1 in order, then r .. n - 1 where they were.
  for (let k = 0; k < q - p; k++) if (rp[p + (r - q) + k] !== p + k) return null;
  for (let k = r; k < n; k++) if (rp[k] !== k) return null;
  const prod = (a: number, b: number) => dims.slice(a, b).reduce((x, y) => x * y, 1);
  return { outer: prod(0, p), na: prod(p, q), nb: prod(q, r), inner: prod(r, n) };
}

function transpose(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { originalTranspose, swap } = installed!;
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { perm } = args.attrs as { perm: number[] };
  if (!enabled || (x.dtype !== 'float32' && x.dtype !== 'int32') || size(x.shape) === 0)
    return originalTranspose(args);
  const plan = asSwap(x.shape, perm);
  const backend = args.backend as unknown as WasmBackend;
  const offsetX = backend.dataIdMap.get(x.dataId)?.memoryOffset;
  if (!plan || typeof offsetX !== 'number') return originalTranspose(args);
  const outShape = perm.map((a) => x.shape[a]);
  const out = backend.makeOutput(outShape, x.dtype as 'float32');
  swap(
    offsetX,
    backend.dataIdMap.get(out.dataId)?.memoryOffset as number,
    plan.outer,
    plan.na,
    plan.nb,
    plan.inner,
  );
  return { dataId: out.dataId, shape: outShape, dtype: x.dtype };
}

/**
 * Sum over a run of axes [s, e) that are not the innermost, in place: out[o, j] = the sum over r of
 * x[o, r, j]. Any other case (innermost axes, which need no transpose; axes out of order or apart;
 * int32) is the backend's.
 */
function sum(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { originalSum, colsum } = installed!;
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { axis, keepDims } = args.attrs as { axis: number | number[]; keepDims: boolean };
  if (!enabled || x.dtype !== 'float32') return originalSum(args);
  const rank = x.shape.length;
  const axes = tf.util.parseAxisParam(axis, x.shape);
  const s = axes[0];
  const e = s + axes.length;
  if (axes.length === 0 || axes.some((a, i) => a !== s + i) || e >= rank || size(x.shape) === 0)
    return originalSum(args);
  const backend = args.backend as unknown as WasmBackend;
  const offsetX = backend.dataIdMap.get(x.dataId)?.memoryOffset;
  if (typeof offsetX !== 'number') return originalSum(args);
  const outShape = x.shape.filter((_, i) => i < s || i >= e);
  const out = backend.makeOutput(outShape, 'float32');
  colsum(
    offsetX,
    backend.dataIdMap.get(out.dataId)?.memoryOffset as number,
    size(x.shape.slice(0, s)),
    size(x.shape.slice(s, e)),
    size(x.shape.slice(e)),
  );
  const shape = keepDims ? x.shape.map((d, i) => (i >= s && i < e ? 1 : d)) : outShape;
  return { dataId: out.dataId, shape, dtype: 'float32' };
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

/**
 * A new float32 tensor whose values `fill` writes. On the wasm backend it writes straight into the
 * tensor's memory in the backend's heap, saving the copy `tf.tensor(values)` makes (the sampler
 * builds its attention keys and values this way every tick); elsewhere from a JS array. `fill` must
 * write every value (the memory is not cleared) and must not call TF.js (the heap may move).
 */
export function filledTensor(shape: number[], fill: (values: Float32Array) => void): tf.Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  if (tf.getBackend() === 'wasm' && size > 0) {
    const backend = tf.backend() as unknown as WasmBackend;
    const memory = backend.wasm?.asm?.memory;
    if (memory instanceof WebAssembly.Memory) {
      const info = backend.makeOutput(shape, 'float32');
      const offset = backend.dataIdMap.get(info.dataId)?.memoryOffset;
      if (typeof offset === 'number') {
        fill(new Float32Array(memory.buffer, offset, size));
        return tf.engine().makeTensorFromTensorInfo(info);
      }
      tf.engine().makeTensorFromTensorInfo(info).dispose();
    }
  }
  const values = new Float32Array(size);
  fill(values);
  return tf.tensor(values, shape, 'float32');
}
