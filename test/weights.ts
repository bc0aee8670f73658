/** Weight comparisons for tests that check two updates agree. */
import type { TinyAgent } from '../src/core/index.js';

/** The model's weights, as plain arrays (one per variable). */
export function weightsOf(model: TinyAgent): number[][] {
  return model.variables().map((v) => Array.from(v.dataSync()));
}

/** Largest difference between two weight sets (`gap`), and how far `a` moved from `before` (`moved`). */
export function weightGap(a: number[][], b: number[][], before: number[][]): { gap: number; moved: number } {
  let gap = 0;
  let moved = 0;
  for (const [i, row] of a.entries())
    for (const [j, x] of row.entries()) {
      gap = Math.max(gap, Math.abs(x - b[i][j]));
      moved = Math.max(moved, Math.abs(x - before[i][j]));
    }
  return { gap, moved };
}
