/**
 * A dump file's records, whatever its container: a JSONL file streamed one line at a time, or a
 * whole-file format (a pickle, a torch archive) read one sample at a time. Detection is by content
 * (formats/index.ts): a file's first bytes for the whole-file formats, whatever its name, else the
 * fields of its first JSON record.
 *
 * Where a record is (`RecordLocation`): for JSONL, its 0-based line, the line's byte offset and its
 * length in bytes; for a whole-file format, its 0-based sample index, `offset` the same index and
 * `bytes` 1 (a placeholder: the record is read back by its index, and a length of 0 marks a blank
 * line for the viewers).
 */
import * as fs from 'node:fs';
import { fail, ok, type Result } from '../../schema.js';
import { isJsonDocumentHead } from './formats/harbor.js';
import {
  type DumpFormat,
  detectBytesFormat,
  detectLineFormat,
  parseRecord,
  readerOf,
  type SampleFile,
} from './formats/index.js';
import { zstdWhy } from './formats/skyrl-capture-zst.js';
import {
  indexLines,
  type LineIndex,
  type LineRange,
  lineText,
  readLineAt,
  readLineBytes,
  readLines,
  type ScanHooks,
} from './lines.js';
import { detectPickledHead, isPickle, looksPickled, readSkyrlFile } from './pickled/index.js';
import type { DumpSample, Read } from './sample.js';
import { isZstd } from './zstd.js';

export interface RecordLocation {
  index: number;
  offset: number;
  bytes: number;
}

/** One record of a file: where it is, and its samples or the rejection naming what is wrong. */
export interface FileRecord extends RecordLocation {
  samples: Read<DumpSample[]>;
}

/** A dump file opened for reading: its format and its records in order (blank lines skipped). */
export interface OpenDump {
  format: DumpFormat;
  /**
   * The records, in order; for a JSONL format, only the lines of `range` (line starts and indices as
   * lines.ts's LineRange), for a whole-file format all of them.
   */
  records(hooks?: ScanHooks, range?: LineRange): AsyncGenerator<FileRecord>;
  /** Whether the records are lines, so that a byte range of lines can be read on its own. */
  lines: boolean;
}

/** The read size of a JSONL file's records (lines.ts reads 1 MiB by default). */
const RECORD_CHUNK_BYTES = 8 << 20;

const HEAD_BYTES = 65536;

/** A file's first bytes (up to 64 KiB). Throws when it cannot be read. */
function headOf(path: string): Uint8Array {
  const fd = fs.openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Why a file that is read as lines of JSON is not text, or null. JSON text is UTF-8 and holds no
 * control byte but tab, line feed and carriage return (a string's control characters are escaped),
 * so its first bytes show it: a NUL byte (anywhere in them), else another control byte, else bytes
 * that are not UTF-8 (a character cut at the end of `head` is not counted), each named with where
 * it is.
 */
export function binaryWhy(path: string, head: Uint8Array): string | null {
  const why = notTextAt(head);
  if (!why) return null;
  return `${path} is a binary file (${why}), not JSON lines: the binary dumps read are SkyRL pickles and slime/miles .pt files; a JSONL dump is text`;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** What in `head` is not JSON text, with where (`a NUL byte at byte 17`), or null. */
function notTextAt(head: Uint8Array): string | null {
  const nul = head.indexOf(0);
  if (nul >= 0) return `a NUL byte at byte ${nul}`;
  for (let i = 0; i < head.length; i++) {
    const b = head[i];
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d)
      return `a control byte 0x${b.toString(16).padStart(2, '0')} at byte ${i}`;
  }
  // a multi-byte character cut by the end of the head is not an error: leave out up to 3 bytes
  let end = head.length;
  for (let k = 0; k < 3 && end > 0 && (head[end - 1] & 0xc0) === 0x80; k++) end--;
  if (end > 0 && head[end - 1] >= 0xc0) end--;
  try {
    UTF8.decode(head.subarray(0, end));
    return null;
  } catch {
    return `bytes that are not UTF-8 text at byte ${firstNonUtf8(head.subarray(0, end))}`;
  }
}

/** The offset of the first byte of `bytes` where UTF-8 decoding fails (bytes.length when none does). */
function firstNonUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const n =
      b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    try {
      UTF8.decode(bytes.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return bytes.length;
}

/**
 * Which format a file is in, by content: a whole-file format's first bytes, else the first
 * non-blank line's fields. The error is one line: the path, then what the file starts with, the
 * line that is not JSON, or the fields found and each format's.
 */
export async function detectDumpFile(path: string): Promise<Result<DumpFormat>> {
  let head: Uint8Array;
  try {
    head = headOf(path);
  } catch (e) {
    return fail(`${path}: ${(e as Error).message}`);
  }
  const binary = detectBytesFormat(head);
  if (binary) return ok(binary);
  if (looksPickled(head)) {
    const d = detectPickledHead(head, path);
    if (d.ok) return ok(d.value.format);
    // A pickle of no known layout is still run through an allow-list (nothing is executed), so that
    // a hostile one is named by the global it refuses (`refused global os.system`).
    const r = isPickle(head) ? readSkyrlFile(path) : undefined;
    return r && !r.ok && /refused/.test(r.error) ? fail(r.error) : d;
  }
  if (isZstd(head)) return fail(zstdWhy(path, head));
  const notText = binaryWhy(path, head);
  if (notText && /\.zst$/i.test(path))
    return fail(
      `${path} ends in .zst but is not zstd-compressed (it does not start with the zstd magic number 28 b5 2f fd): skyrl-capture's .json.zst and .jsonl.zst files are; the file may be truncated at its start or another format`,
    );
  if (notText) return fail(notText);
  if (isJsonDocumentHead(head))
    return fail(
      `${path}: a JSON document over many lines, not JSON lines: the one read so is a Harbor trial's agent/trajectory.json (an ATIF trajectory, format harbor); other formats take one record per line (\`jq -c . FILE\` puts a document on one)`,
    );
  try {
    for await (const line of readLines(path)) {
      if (line.text.trim() === '') continue;
      const d = detectLineFormat(line.text, line.index);
      return d.ok ? d : fail(`${path}: ${d.error}`);
    }
  } catch (e) {
    return fail(`${path}: ${(e as Error).message}`);
  }
  return fail(`${path}: no records (the file is empty)`);
}

/** Open a dump file in a format (`auto`: detected by content): its records, or the one-line reason it cannot be read. */
export async function openDumpFile(
  path: string,
  format: DumpFormat | 'auto' = 'auto',
): Promise<Result<OpenDump>> {
  let f: DumpFormat;
  if (format === 'auto') {
    const d = await detectDumpFile(path);
    if (!d.ok) return d;
    f = d.value;
  } else f = format;
  const reader = readerOf(f);
  if (reader?.kind !== 'file') {
    let head: Uint8Array;
    try {
      head = headOf(path);
    } catch (e) {
      return fail(`${path}: ${(e as Error).message}`);
    }
    const binary = binaryWhy(path, head);
    if (binary) return fail(binary);
    return ok({ format: f, lines: true, records: (hooks, range) => jsonlRecords(path, f, hooks, range) });
  }
  const opened = openWhole(path, reader.open);
  if (!opened.ok) return opened;
  const file = opened.value;
  return ok({ format: f, lines: false, records: (hooks) => wholeRecords(file, hooks) });
}

/**
 * A JSONL file's records: each line read from its bytes by the reader's `readBytes` when it has one
 * and the line is of its plain shape, else decoded and parsed (`parseRecord`); blank lines skipped.
 */
async function* jsonlRecords(
  path: string,
  format: DumpFormat,
  hooks: ScanHooks = {},
  range: LineRange = {},
): AsyncGenerator<FileRecord> {
  const step = pathStep(path, format);
  const reader = readerOf(format);
  const fast = reader?.kind === 'records' ? reader.readBytes : undefined;
  const scan = { ...hooks, chunkBytes: hooks.chunkBytes ?? RECORD_CHUNK_BYTES };
  for await (const line of readLineBytes(path, scan, range)) {
    const read = fast?.(line.data, line.index);
    if (read) {
      yield {
        index: line.index,
        offset: line.offset,
        bytes: line.data.length,
        samples: withStep(read, step),
      };
      continue;
    }
    const text = lineText(line);
    if (text.trim() === '') continue;
    yield {
      index: line.index,
      offset: line.offset,
      bytes: line.data.length,
      samples: withStep(parseRecord(format, text, line.index), step),
    };
  }
}

/**
 * One JSONL line of the file at `path` parsed as `format` (parseRecord), each sample without a step
 * of its own given the step the writer encodes in the path (the reader's `stepOfPath`). Never throws.
 */
export function parseFileRecord(
  path: string,
  format: DumpFormat,
  text: string,
  index: number,
): Read<DumpSample[]> {
  return withStep(parseRecord(format, text, index), pathStep(path, format));
}

/** The step a format's writer encodes in this file's path (its reader's `stepOfPath`), or undefined. */
function pathStep(path: string, format: DumpFormat): number | undefined {
  return readerOf(format)?.stepOfPath?.(path);
}

/** A record's samples, each without a step of its own given `step` (when there is one). */
function withStep(r: Read<DumpSample[]>, step: number | undefined): Read<DumpSample[]> {
  if (step !== undefined && r.ok) for (const s of r.value) s.step ??= step;
  return r;
}

async function* wholeRecords(file: SampleFile, hooks: ScanHooks = {}): AsyncGenerator<FileRecord> {
  const n = file.count;
  for (let i = 0; i < n; i++) {
    if (hooks.signal?.aborted) return;
    const s = file.sample(i);
    yield { index: i, offset: i, bytes: 1, samples: s.ok ? ok([s.value]) : s };
    if ((i & 15) === 15 || i === n - 1) hooks.onProgress?.(i + 1, n);
  }
}

/** A whole-file reader's open, with anything thrown turned into its one-line error. */
function openWhole(path: string, open: (p: string) => Result<SampleFile>): Result<SampleFile> {
  try {
    return open(path);
  } catch (e) {
    return fail(`${path}: unreadable (${(e as Error).message})`);
  }
}

/**
 * Where each record of a file is (`{offsets [R], bytes [R]}`, as lines.ts's LineIndex; blank JSONL
 * lines included with length 0). A whole-file format gives offset i and length 1 for sample i.
 * Throws with the one-line reason when a whole-file dump cannot be opened.
 */
export async function indexRecords(
  path: string,
  format: DumpFormat,
  hooks: ScanHooks = {},
): Promise<LineIndex> {
  const reader = readerOf(format);
  if (reader?.kind !== 'file') return indexLines(path, hooks);
  const f = cachedWhole(path, reader.open);
  if (!f.ok) throw new Error(f.error);
  const n = f.value.count;
  return {
    offsets: Array.from({ length: n }, (_, i) => i),
    bytes: new Array<number>(n).fill(1),
    cancelled: false,
  };
}

/** Whole-file dumps opened for `readRecordAt` (the last few, while their size and time are unchanged). */
const opened = new Map<string, { size: number; mtimeMs: number; file: SampleFile }>();

function cachedWhole(path: string, open: (p: string) => Result<SampleFile>): Result<SampleFile> {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (e) {
    return fail(`${path}: ${(e as Error).message}`);
  }
  const hit = opened.get(path);
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return ok(hit.file);
  const r = openWhole(path, open);
  if (!r.ok) return r;
  opened.delete(path);
  opened.set(path, { size: st.size, mtimeMs: st.mtimeMs, file: r.value });
  while (opened.size > 4) opened.delete(opened.keys().next().value as string);
  return r;
}

/**
 * Read one record back by where it is (`index`, `offset`, `bytes` from indexRecords or a record's
 * location): `Result<samples [S]>` for viewers. A whole-file dump stays open between calls while the
 * file is unchanged; one that cannot be opened is a rejection of the record naming why.
 */
export async function readRecordAt(
  path: string,
  format: DumpFormat,
  index: number,
  offset: number,
  bytes: number,
): Promise<Read<DumpSample[]>> {
  const reader = readerOf(format);
  if (reader?.kind !== 'file')
    return parseFileRecord(path, format, await readLineAt(path, offset, bytes), index);
  const f = cachedWhole(path, reader.open);
  if (!f.ok) return fail({ record: index, field: '', expected: `a readable ${format} file`, found: f.error });
  const s = f.value.sample(index);
  return s.ok ? ok([s.value]) : s;
}
