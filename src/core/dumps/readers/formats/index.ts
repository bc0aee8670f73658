/**
 * The dump formats, registered once. Everything about formats comes from `DUMP_READERS`: detection,
 * the CLI's `--format` choices and the docs' table of formats; its ids must be `DUMP_FORMATS`
 * (ids.ts, kept apart so the protocol need not bundle the readers), in the same order. A file is detected by its first bytes first (the first
 * whole-file reader whose `detectBytes` holds), else as JSONL by its first record (the first
 * records reader, in this order, whose `detect` holds). A new format is one module implementing
 * DumpReader (reader.ts) and one line here.
 */
import { fail, ok, type Result } from '../../../schema.js';
import { skyrl, slime } from '../pickled/index.js';
import { type DumpSample, describeValue, type Read } from '../sample.js';
import { episodeLab } from './episode-lab.js';
import { harbor } from './harbor.js';
import type { DumpFormat } from './ids.js';
import { jsonl } from './jsonl.js';
import { nemoRl } from './nemo-rl.js';
import { primeRl } from './prime-rl.js';
import { primeRlExport } from './prime-rl-export.js';
import type { DumpReader, FileReader, RecordReader } from './reader.js';
import { skyrlCapture } from './skyrl-capture.js';
import { skyrlCaptureZst } from './skyrl-capture-zst.js';
import { turns } from './turns.js';

export {
  CARRIED_FIELDS,
  type CarriedField,
  type DumpReader,
  type FileReader,
  type RecordReader,
  type SampleFile,
} from './reader.js';

/** Every format's reader, in detection order (whole-file readers are tried first, on a file's bytes). */
export const DUMP_READERS = [
  nemoRl,
  skyrlCapture,
  primeRl,
  primeRlExport,
  turns,
  episodeLab,
  jsonl,
  skyrl,
  slime,
  harbor,
  skyrlCaptureZst,
] as const satisfies readonly DumpReader<DumpFormat>[];

/** The JSONL formats' readers, in detection order. */
export const RECORD_READERS: readonly RecordReader<DumpFormat>[] = DUMP_READERS.filter(
  (r): r is Extract<(typeof DUMP_READERS)[number], { kind: 'records' }> => r.kind === 'records',
);
/** The whole-file formats' readers, in detection order. */
export const FILE_READERS: readonly FileReader<DumpFormat>[] = DUMP_READERS.filter(
  (r): r is Extract<(typeof DUMP_READERS)[number], { kind: 'file' }> => r.kind === 'file',
);

export { DUMP_FORMATS, type DumpFormat } from './ids.js';

/** The reader of a format id (undefined for an id no reader has). */
export function readerOf(format: string): DumpReader<DumpFormat> | undefined {
  return DUMP_READERS.find((x) => x.id === format);
}

/** Which format a parsed record is in, or a message naming the found fields and each format's. */
export function detectFormat(record: unknown): Result<DumpFormat, string> {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return fail(`expected a JSON object per line, found ${describeValue(record)}`);
  const found = RECORD_READERS.find((r) => r.detect(record));
  if (found) return ok(found.id);
  const expected = RECORD_READERS.map((r) => `${r.id} (${r.fields})`).join('; ');
  return fail(
    `unknown format: found fields ${Object.keys(record).join(', ') || '(none)'}; expected one of: ${expected}`,
  );
}

/** The format of a file from the text of its line `index` (0-based): `line N is not JSON (...)` or detection's error. */
export function detectLineFormat(text: string, index: number): Result<DumpFormat, string> {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (e) {
    return fail(`line ${index + 1} is not JSON (${(e as Error).message})`);
  }
  const d = detectFormat(record);
  return d.ok ? d : fail(`line ${index + 1}: ${d.error}`);
}

/** The whole-file format whose reader recognises a file's first bytes (up to 64 KiB), or undefined. */
export function detectBytesFormat(head: Uint8Array): DumpFormat | undefined {
  return FILE_READERS.find((r) => r.detectBytes(head))?.id;
}

/** Parse one JSONL line of a format into samples; a bad line is a Rejection, never a throw. */
export function parseRecord(format: DumpFormat, text: string, index: number): Read<DumpSample[]> {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (e) {
    return fail({
      record: index,
      field: '',
      expected: 'a JSON object',
      found: `invalid JSON (${(e as Error).message})`,
    });
  }
  const reader = readerOf(format);
  if (reader?.kind !== 'records')
    return fail({
      record: index,
      field: '',
      expected: `a JSONL format of ${RECORD_READERS.map((r) => r.id).join(', ')}`,
      found: format,
    });
  return reader.read(record, index);
}
