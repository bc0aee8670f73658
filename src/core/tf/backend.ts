/**
 * Choosing the TF.js backend. `@tensorflow/tfjs-node` (an optional dependency) is used when it
 * loads; otherwise the `wasm` backend, whose .wasm files ship next to the bundle; `cpu` only as a
 * last resort (15 to 30 times slower here). The choice is reported, never silent.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
// A used binding: the package declares no side effects, so a bare import would be dropped by the bundler.
import { version_cpu } from '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { installFastKernels } from './fast-kernels.js';

export type BackendName = 'tensorflow' | 'wasm' | 'cpu';
export type BackendPreference = 'auto' | BackendName;

export interface BackendInfo {
  name: BackendName;
  /** One line for logs and the UI, for example `wasm (SIMD, 1 thread; tfjs-node not installed)`. */
  detail: string;
}

let current: BackendInfo | null = null;

const WASM_FILE = 'tfjs-backend-wasm-simd.wasm';

/** Folders where the .wasm files may be: next to the bundle, or in node_modules (tests, dev). */
function wasmDir(): string | null {
  const candidates = [__dirname, path.join(__dirname, '..', 'dist'), path.join(__dirname, 'dist')];
  try {
    candidates.push(
      path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm')),
    );
  } catch {
    // not resolvable from here (bundled): the bundle's folder is the place
  }
  return candidates.find((d) => fs.existsSync(path.join(d, WASM_FILE))) ?? null;
}

/**
 * Initialise a backend once per process and return what runs. `auto` tries tfjs-node, then wasm,
 * then cpu. Asking for a specific backend that cannot start is an error.
 */
export async function initBackend(pref: BackendPreference = 'auto'): Promise<BackendInfo> {
  if (current && (pref === 'auto' || pref === current.name)) return current;
  const notes: string[] = [];
  if (pref === 'auto' || pref === 'tensorflow') {
    try {
      require('@tensorflow/tfjs-node');
      if (await tf.setBackend('tensorflow')) {
        current = { name: 'tensorflow', detail: 'tensorflow (tfjs-node, native)' };
        return current;
      }
      notes.push('tfjs-node loaded but its backend did not start');
    } catch (e) {
      notes.push(
        /Cannot find module/.test(String(e))
          ? 'tfjs-node not installed'
          : `tfjs-node failed: ${(e as Error).message}`,
      );
    }
    if (pref === 'tensorflow')
      throw new Error(`the tensorflow backend is not available: ${notes.join('; ')}`);
  }
  if (pref === 'auto' || pref === 'wasm') {
    const dir = wasmDir();
    if (dir) {
      await import('@tensorflow/tfjs-backend-wasm');
      setWasmPaths(dir + path.sep);
      // setBackend returns false without throwing when the .wasm files are not found.
      if (await tf.setBackend('wasm')) {
        await tf.ready();
        // SIMD matmul, sum and transpose kernels (bit for bit the backend's results), unless off.
        const fast = installFastKernels();
        current = {
          name: 'wasm',
          detail: `wasm (SIMD, 1 thread${fast ? '; SIMD matmul, sum, transpose' : ''}${notes.length ? `; ${notes.join('; ')}` : ''})`,
        };
        return current;
      }
      notes.push(`wasm did not start from ${dir}`);
    } else notes.push(`wasm files (${WASM_FILE}) not found next to the bundle`);
    if (pref === 'wasm') throw new Error(`the wasm backend is not available: ${notes.join('; ')}`);
  }
  if (!version_cpu || !(await tf.setBackend('cpu'))) throw new Error('no TF.js backend could start');
  current = { name: 'cpu', detail: `cpu (pure JS, slow${notes.length ? `; ${notes.join('; ')}` : ''})` };
  return current;
}

/** The backend in use, or null before initBackend. */
export function backendInfo(): BackendInfo | null {
  return current;
}
