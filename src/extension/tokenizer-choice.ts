/**
 * Which tokenizer folder a dump file is read with (no `vscode` import). The precedence, first that
 * applies (docs/formats.md, "Which tokenizer"):
 *   1. `picked`: the folder the user picked for this file on the inspector's page (remembered per file);
 *   2. `beside`: the file's own folder, or its `tokenizer/`, holds `tokenizer.json` and `tokenizer_config.json`;
 *   3. `run-folder`: a folder named `tokenizer` in one of the RUN_FOLDER_LEVELS folders above the
 *      file's (slime and miles save one in the dump folder, the steps below it);
 *   4. `setting`: the `episodeLab.tokenizer` setting, a default for files that bring none (passed
 *      over, with the reason, when its folder holds no tokenizer);
 *   else none (ids and masks only; the inspector offers a folder picker).
 * A file's own tokenizer wins over the global setting: a GPT-OSS file beside its tokenizer is never
 * read with the Qwen3 folder the setting names.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TokenizerOrigin } from '../protocol/webview.js';

/** How many folders above a dump file's own folder are searched for a `tokenizer/` folder. */
export const RUN_FOLDER_LEVELS = 3;

/** The folder to read a file with (null: none found) and why it is that one (null: none). */
export interface TokenizerChoice {
  dir: string | null;
  origin: TokenizerOrigin | null;
  /** Why the setting was passed over: it names a folder that holds no tokenizer. */
  ignored?: string;
}

/** Whether a folder holds a Hugging Face tokenizer (`tokenizer.json` and `tokenizer_config.json`). */
export type IsTokenizerDir = (dir: string) => boolean;

export const isTokenizerDir: IsTokenizerDir = (dir) =>
  fs.existsSync(path.join(dir, 'tokenizer.json')) && fs.existsSync(path.join(dir, 'tokenizer_config.json'));

/** A folder the user picked, as a tokenizer folder: itself, or its `tokenizer/`; null when neither holds one. */
export function tokenizerIn(dir: string, isDir: IsTokenizerDir = isTokenizerDir): string | null {
  for (const d of [dir, path.join(dir, 'tokenizer')]) if (isDir(d)) return path.resolve(d);
  return null;
}

/**
 * The tokenizer folder for `file` by the precedence above. `picked` is the folder remembered for
 * this file (skipped when it no longer holds a tokenizer), `setting` the setting's value ('' or
 * blank: unset).
 */
export function chooseTokenizer(
  file: string,
  opts: { picked?: string | null; setting?: string | null },
  isDir: IsTokenizerDir = isTokenizerDir,
): TokenizerChoice {
  const picked = opts.picked ? tokenizerIn(opts.picked, isDir) : null;
  if (picked) return { dir: picked, origin: 'picked' };
  const here = path.dirname(path.resolve(file));
  const beside = tokenizerIn(here, isDir);
  if (beside) return { dir: beside, origin: 'beside' };
  let up = here;
  for (let k = 0; k < RUN_FOLDER_LEVELS; k++) {
    const parent = path.dirname(up);
    if (parent === up) break;
    up = parent;
    const named = path.join(up, 'tokenizer');
    if (isDir(named)) return { dir: named, origin: 'run-folder' };
  }
  const setting = opts.setting?.trim() ?? '';
  if (!setting) return { dir: null, origin: null };
  const named = tokenizerIn(setting, isDir);
  if (named) return { dir: named, origin: 'setting' };
  const ignored = `the episodeLab.tokenizer setting names ${setting}, which holds no tokenizer.json and tokenizer_config.json (nor does its tokenizer/)`;
  return { dir: null, origin: null, ignored };
}

/** Key-value storage that survives a window reload (VS Code's Memento, or a stand-in). */
export interface Store {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

/** A Store in memory (forgotten with the window). */
export function memoryStore(): Store {
  const data = new Map<string, unknown>();
  return {
    get: <T>(key: string) => data.get(key) as T | undefined,
    update: async (key: string, value: unknown) => {
      data.set(key, value);
    },
  };
}

const KEY = 'episodeLab.dumpTokenizers';
/** At most this many files are remembered; the oldest choice goes first. */
export const MAX_REMEMBERED = 200;

/** The tokenizer folder the user picked for each dump file (absolute paths), kept in a Store. */
export class PickedTokenizers {
  constructor(private readonly store: Store) {}

  private all(): Record<string, string> {
    const v = this.store.get<unknown>(KEY);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    return Object.fromEntries(
      Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  }

  get(file: string): string | null {
    return this.all()[path.resolve(file)] ?? null;
  }

  /** Remember `dir` for `file` (the newest last; the oldest dropped beyond MAX_REMEMBERED). */
  async set(file: string, dir: string): Promise<void> {
    const key = path.resolve(file);
    const entries = Object.entries(this.all()).filter(([f]) => f !== key);
    entries.push([key, dir]);
    await this.store.update(KEY, Object.fromEntries(entries.slice(-MAX_REMEMBERED)));
  }
}
