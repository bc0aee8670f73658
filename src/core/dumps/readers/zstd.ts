/**
 * zstd-compressed files (RFC 8878), decompressed in memory with fzstd (pure JavaScript, decompression
 * only, bundled into dist; Node 20's zlib has no zstd). Every call is bounded and never throws: a
 * frame whose header asks for a window or content larger than the caller's limit is refused before
 * anything is allocated, and output past the limit stops the decompression.
 */
import { Decompress } from 'fzstd';
import { fail, ok, type Result } from '../../schema.js';

/** The magic number that starts every zstd frame, as its 4 bytes on disk (0xFD2FB528, little-endian). */
const MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;

/** The largest window a frame may ask for (zstd's level 6 uses 2 MiB; the format allows up to 3.75 TiB). */
const MAX_WINDOW = 256 << 20;

/** Whether bytes start with a zstd frame's magic number. */
export function isZstd(head: Uint8Array): boolean {
  return head.length >= 4 && MAGIC.every((b, i) => head[i] === b);
}

/** What a frame header declares: its window size and its content size (undefined: not declared). */
export interface FrameHeader {
  window: number;
  content?: number;
}

/**
 * The first frame's header (RFC 8878 §3.1.1.1), or why it is not one: `Result<FrameHeader>`. A
 * reserved bit set, or a header cut short, is an error.
 */
export function frameHeader(bytes: Uint8Array): Result<FrameHeader, string> {
  if (!isZstd(bytes)) return fail('it does not start with the zstd magic number 28 b5 2f fd');
  if (bytes.length < 6) return fail('its frame header is cut short');
  const flags = bytes[4];
  if (flags & 0x08) return fail('its frame header has the reserved bit set');
  const singleSegment = (flags >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][flags & 3];
  const fcsField = flags >> 6;
  const fcsBytes = fcsField ? 1 << fcsField : singleSegment;
  let at = 5;
  let window = 0;
  if (!singleSegment) {
    const wd = bytes[at++];
    const base = 2 ** (10 + (wd >> 3));
    window = base + (base / 8) * (wd & 7);
  }
  at += dictBytes;
  if (bytes.length < at + fcsBytes) return fail('its frame header is cut short');
  let content: number | undefined;
  if (fcsBytes) {
    content = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) content = content * 256 + bytes[at + i];
    if (fcsBytes === 2) content += 256;
  }
  return ok({ window: singleSegment ? (content ?? 0) : window, content });
}

/**
 * Decompress zstd bytes (one frame or several) to at most `maxBytes`: `Result<bytes, why>`. The why
 * is one phrase (`it is not zstd: ...`, `it decompresses to more than N bytes`, `its zstd data is
 * corrupt (...)`, `it is cut short`). `final` false decompresses what the bytes hold so far (the head
 * of a file), without requiring the frame to end.
 */
export function unzstd(bytes: Uint8Array, maxBytes: number, final = true): Result<Uint8Array, string> {
  const head = frameHeader(bytes);
  if (!head.ok) return fail(`it is not zstd: ${head.error}`);
  if (head.value.window > MAX_WINDOW)
    return fail(
      `its zstd frame asks for a ${head.value.window}-byte window, more than the ${MAX_WINDOW} read`,
    );
  if (head.value.content !== undefined && head.value.content > maxBytes)
    return fail(`it decompresses to ${head.value.content} bytes, more than the ${maxBytes} read whole`);
  const parts: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const d = new Decompress((chunk) => {
    total += chunk.length;
    if (total > maxBytes) {
      over = true;
      throw new Error('over');
    }
    parts.push(chunk.slice());
  });
  try {
    const step = 1 << 20;
    for (let i = 0; i < bytes.length; i += step) {
      const last = i + step >= bytes.length;
      d.push(bytes.subarray(i, Math.min(bytes.length, i + step)), final && last);
    }
  } catch (e) {
    if (over) return fail(`it decompresses to more than the ${maxBytes} bytes read whole`);
    const code = (e as { code?: number }).code;
    if (code === 5)
      return final ? fail('its zstd data is cut short (the file is truncated)') : ok(join(parts, total));
    return fail(`its zstd data is corrupt (${(e as Error).message || 'no message'})`);
  }
  return ok(join(parts, total));
}

function join(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
