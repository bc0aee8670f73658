/**
 * skyrl-capture's zstd-compressed files, read whole: a committed trajectory record
 * `committed/<xx>/<trajectory_id>.json.zst` (`serialize`: `compress(orjson.dumps(record_document))`,
 * persistence/committed.py @ ddc0bb7) and an export artifact
 * `exports/artifacts/<export_id>/<scope>-<format>.jsonl.zst` (`render_artifact` then `compress`,
 * export/service.py @ ddc0bb7; `skyrl-capture export --compression zst` writes the same), both one
 * zstd frame at level 6 (compression.py @ 5a91f21) around JSON lines that the `skyrl-capture` reader
 * reads (skyrl-capture.ts). Each sample is one record here: a token-samples row is one, a committed
 * record or a graph line gives one per path.
 *
 * Detection (`detectBytes`): the zstd magic number, and a head that decompresses to a line starting
 * as skyrl-capture's orjson writes its documents (`{"record_version":` or
 * `{"schema_version":N,"path_id"|"trajectory_id":`). Decompression is bounded (`CAPTURE_MAX_BYTES`,
 * readers/zstd.ts) and every failure is one line saying what is wrong and what to do.
 */
import * as fs from 'node:fs';
import { fail, ok, type Result } from '../../../schema.js';
import type { DumpSample, Read } from '../sample.js';
import { isZstd, unzstd } from '../zstd.js';
import type { FileReader, SampleFile } from './reader.js';
import { skyrlCapture } from './skyrl-capture.js';

/** The largest file read, compressed and decompressed alike: a file is read whole into memory. */
export const CAPTURE_MAX_BYTES = 256 * 1024 * 1024;

const TEXT = new TextDecoder('utf-8');

/** How skyrl-capture's documents start (orjson writes them compact, keys in the writer's order; spaces allowed). */
const CAPTURE_START = /^\s*\{\s*"(record_version"|schema_version"\s*:\s*\d+\s*,\s*"(path_id|trajectory_id)")/;

/** The decompressed start of a zstd file's head (as much as its complete blocks give), or undefined. */
function headText(head: Uint8Array): string | undefined {
  const r = unzstd(head, 16 << 20, false);
  return r.ok ? TEXT.decode(r.value.subarray(0, 4096)) : undefined;
}

/**
 * Whether a file's first bytes are a zstd frame of one of skyrl-capture's documents: its first lines
 * start as they do, or its first 64 KiB end before the frame's first block does (a block too large to
 * tell from the head: the file is opened, and its lines say what they are).
 */
export function isCaptureZstdHead(head: Uint8Array): boolean {
  if (!isZstd(head)) return false;
  const text = headText(head);
  return text !== undefined && (CAPTURE_START.test(text) || (text === '' && head.length >= 65536));
}

/**
 * Why a file that starts with zstd's magic number is not read (one line, with what to do), from its
 * first bytes (`head`, up to 64 KiB: a shorter head is the whole file, and must end its frames).
 */
export function zstdWhy(path: string, head: Uint8Array): string {
  const partial = unzstd(head, 16 << 20, head.length < 65536);
  if (!partial.ok) return `${path}: zstd-compressed, but ${partial.error}: check it with \`zstd -t ${path}\``;
  const start = TEXT.decode(partial.value.subarray(0, 60)).replace(/\s+/g, ' ');
  return `${path}: zstd-compressed, but not a skyrl-capture committed record or export (it starts ${JSON.stringify(start)}); the zstd files read are skyrl-capture's: for another dump, \`zstd -d ${path}\` and open the result`;
}

/** A line's text from the decompressed bytes. */
const lineAt = (data: Uint8Array, a: number, b: number) =>
  TEXT.decode(data.subarray(a, b > a && data[b - 1] === 0x0d ? b - 1 : b));

/** The [start, end) of each non-blank line of `data`. */
function linesOf(data: Uint8Array): [number, number][] {
  const out: [number, number][] = [];
  let a = 0;
  while (a < data.length) {
    let b = data.indexOf(0x0a, a);
    if (b < 0) b = data.length;
    let blank = true;
    for (let i = a; i < b && blank; i++) blank = data[i] === 0x20 || data[i] === 0x09 || data[i] === 0x0d;
    if (!blank) out.push([a, b]);
    a = b + 1;
  }
  return out;
}

/** One line's samples (the skyrl-capture reader's), numbered from `first`; a line that is not JSON is a rejection. */
function lineSamples(text: string, line: number, first: number): Read<DumpSample[]> {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    return fail({
      record: first,
      field: '',
      expected: `a JSON object on line ${line + 1} of the decompressed file`,
      found: `invalid JSON (${(e as Error).message.split('\n')[0].slice(0, 200)})`,
    });
  }
  const r = skyrlCapture.read(x, first);
  if (!r.ok) return r;
  r.value.forEach((s, k) => {
    s.record = first + k;
    s.offset = 0;
  });
  return r;
}

/** The file's bytes, decompressed: `Result<bytes, one line>`. */
function decompressed(path: string): Result<Uint8Array, string> {
  let bytes: Buffer;
  try {
    const st = fs.statSync(path);
    if (!st.isFile()) return fail(`${path}: not a file`);
    if (st.size > CAPTURE_MAX_BYTES)
      return fail(
        `${path}: ${st.size} bytes, more than the ${CAPTURE_MAX_BYTES} read whole: \`zstd -d\` it and open the .jsonl (read one line at a time)`,
      );
    bytes = fs.readFileSync(path);
  } catch (e) {
    return fail(`${path}: ${(e as Error).message}`);
  }
  const r = unzstd(bytes, CAPTURE_MAX_BYTES);
  if (r.ok) return r;
  const fix = /more than/.test(r.error)
    ? `\`zstd -d ${path}\` and open the .jsonl (read one line at a time)`
    : `check it with \`zstd -t ${path}\`; a record being written is renamed into place whole, so a bad one was damaged after`;
  return fail(`${path}: ${r.error}: ${fix}`);
}

/**
 * Open a zstd file of skyrl-capture (module comment): its samples, one record each, or the one-line
 * reason it cannot be read. Token-samples rows are parsed when asked for; a committed record's or a
 * graph line's paths when the file is opened. A line that cannot be read is one record holding its
 * rejection. Never throws.
 */
export function openCaptureZstd(path: string): Result<SampleFile, string> {
  const d = decompressed(path);
  if (!d.ok) return d;
  const data = d.value;
  const lines = linesOf(data);
  if (!lines.length) return fail(`${path}: decompresses to no lines (an export of no rows)`);
  const firstText = lineAt(data, ...lines[0]);
  const rows = /^\s*\{\s*"schema_version"\s*:\s*\d+\s*,\s*"path_id"/.test(firstText);
  const bad = (i: number, n: number): Read<DumpSample> =>
    fail({ record: i, field: '', expected: `a record below ${n}`, found: String(i) });
  if (rows) {
    return ok({
      count: lines.length,
      sample: (i) => {
        if (!(i >= 0 && i < lines.length)) return bad(i, lines.length);
        const r = lineSamples(lineAt(data, ...lines[i]), i, i);
        if (!r.ok) return r;
        return r.value.length === 1
          ? ok(r.value[0])
          : fail({
              record: i,
              field: '',
              expected: 'one token-samples row per line',
              found: `${r.value.length} samples`,
            });
      },
      notes: [],
    });
  }
  const all: Read<DumpSample>[] = [];
  lines.forEach(([a, b], line) => {
    const r = lineSamples(lineAt(data, a, b), line, all.length);
    if (!r.ok) all.push(r);
    else for (const s of r.value) all.push(ok(s));
  });
  if (!all.length) return fail(`${path}: no path with tokens (a trajectory that made no model call)`);
  return ok({ count: all.length, sample: (i) => all[i] ?? bad(i, all.length), notes: [] });
}

export const skyrlCaptureZst = {
  id: 'skyrl-capture-zst',
  kind: 'file',
  label: 'skyrl-capture zstd (committed record, export artifact)',
  source:
    'NovaSky-AI/SkyRL skyrl-capture/ @ ddc0bb790cc155060f8b8897780c7f2a06b8f0c1: persistence/committed.py (serialize), export/service.py (render_artifact, artifact_filename); @ 5a91f21e6b4ae96b3ea37f4e18bfcc369eadab71: compression.py, persistence/layout.py',
  fields:
    'a zstd frame (magic 28 b5 2f fd) around a committed record (`{"record_version":5,...}`) or export lines (token-samples rows, graph lines)',
  detectBytes: isCaptureZstdHead,
  open: openCaptureZstd,
  carries: skyrlCapture.carries,
} as const satisfies FileReader;
