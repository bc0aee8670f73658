/**
 * Pickled dumps: SkyRL `dump_data_batch` pickles and slime/miles `--dump-details` torch files,
 * read without Python and without executing anything (docs/pickled-dumps.md).
 */
import type { Result } from '../../schema.js';
import { detectPickled, type PickledDump } from './common.js';
import { readSkyrlFile } from './skyrl.js';
import { readSlimeFile } from './slime.js';

export * from './common.js';
export { readSkyrlFile, readSkyrlSource, SKYRL_MODULES, skyrlAllowList, stepFromName } from './skyrl.js';
export { readSlimeFile, readSlimeSource } from './slime.js';

/** Detect a file's pickled format by content and read it: Result<lazy dump>, the error one line. */
export function readPickledFile(path: string): Result<PickledDump, string> {
  const d = detectPickled(path);
  if (!d.ok) return d;
  return d.value.format === 'skyrl' ? readSkyrlFile(path) : readSlimeFile(path);
}
