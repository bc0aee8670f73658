/**
 * The CLI as users run it (`node dist/cli.js`, the esbuild bundle): `builtCli()` returns its path,
 * rebuilding dist/ first (once per test process) when a file under src/ is newer than the bundle.
 * A test that spawns the CLI through tsx instead would spend about 2 s per run transpiling it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..');
const CLI = path.join(root, 'dist', 'cli.js');
let checked = false;

/** The newest modification time (ms) of any file under dir. */
function newest(dir: string): number {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce(
      (m, d) =>
        Math.max(
          m,
          d.isDirectory() ? newest(path.join(dir, d.name)) : fs.statSync(path.join(dir, d.name)).mtimeMs,
        ),
      0,
    );
}

/** The path of dist/cli.js, built from the current sources. */
export function builtCli(): string {
  if (checked) return CLI;
  if (!fs.existsSync(CLI) || fs.statSync(CLI).mtimeMs < newest(path.join(root, 'src'))) {
    const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, `build failed: ${r.stderr}`);
  }
  checked = true;
  return CLI;
}
