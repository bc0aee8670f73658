/**
 * Which folders a revived panel may read (no `vscode` import): a panel's saved state comes from the
 * webview and is not trusted, so only folders inside the workspace's runs are opened again.
 */
import * as path from 'node:path';

/** True when `dir` is `root` or a folder inside it (after resolving `..` and the like). */
export function isInside(root: string | undefined, dir: string): boolean {
  if (!root) return false;
  const rel = path.relative(path.resolve(root), path.resolve(dir));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
