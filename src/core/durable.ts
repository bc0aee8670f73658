/**
 * Durable file operations for run files and checkpoints: what a crash (a kill, a power cut) can
 * leave behind is always either the old state or the new one, and a reader can tell which.
 *
 * - `writeFileDurable` writes a whole file and fsyncs it (for files inside a folder that is not in
 *   place yet); `writeFileAtomic` writes `file.tmp`, fsyncs it and renames it over `file`.
 * - `appendDurable` appends to a JSON-lines file and fsyncs it; a torn last line (a write killed
 *   halfway) is cut off first, so a new line never continues a partial one.
 * - `replaceDir` moves a complete folder `dir.tmp` into place: rename `dir` to `dir.old`, rename
 *   `dir.tmp` to `dir`, remove `dir.old` (renaming over a non-empty folder fails on Linux).
 *   `pickDir` (read-only, for loaders) and `recoverDir` (for a writer, at resume) handle every
 *   kill point in between: when `dir` is missing or incomplete, the complete one of `dir.tmp` /
 *   `dir.old` is taken.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** fsync a folder, so that the entries created or renamed in it are on disk (best effort). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open a folder: its entries are durable when the call returns.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let at = 0;
  while (at < buf.byteLength) at += fs.writeSync(fd, buf, at, buf.byteLength - at);
}

/** Write a whole file (replacing it) and fsync it. */
export function writeFileDurable(file: string, data: string | Uint8Array): void {
  const fd = fs.openSync(file, 'w');
  try {
    writeAll(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Replace `file` in one step: write `file.tmp`, fsync, rename over `file`, fsync the folder. */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.tmp`;
  writeFileDurable(tmp, data);
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

/**
 * Cut a torn last line (bytes after the last newline: a write killed halfway) off a JSON-lines
 * file. Returns a one-line description of what was cut, or null when the file ends cleanly.
 */
export function repairTail(file: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    return null; // no file: nothing to repair
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return null;
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 10) return null;
    // Find the last newline, reading backwards in chunks.
    let cut = 0;
    const chunk = Buffer.alloc(64 * 1024);
    for (let end = size; end > 0 && cut === 0; ) {
      const start = Math.max(0, end - chunk.length);
      fs.readSync(fd, chunk, 0, end - start, start);
      const nl = chunk.subarray(0, end - start).lastIndexOf(10);
      if (nl >= 0) cut = start + nl + 1;
      end = start;
    }
    fs.ftruncateSync(fd, cut);
    fs.fsyncSync(fd);
    return `${path.basename(file)}: cut off a torn last line (${size - cut} bytes without a newline: the run stopped mid-write)`;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Append text (whole lines) to a file and fsync it. A torn tail is cut off first (see repairTail);
 * its description is passed to `onRepair`.
 */
export function appendDurable(file: string, text: string, onRepair?: (message: string) => void): void {
  if (text === '') return;
  const created = !fs.existsSync(file);
  if (!created) {
    const cut = repairTail(file);
    if (cut) onRepair?.(cut);
  }
  const fd = fs.openSync(file, 'a');
  try {
    writeAll(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) fsyncDir(path.dirname(file));
}

/**
 * Cut a JSON-lines file whose lines carry a non-decreasing `step` at its first line with a step
 * above `lastStep` (lines of steps that never committed). Reads backwards from the end, so only
 * the lines cut are parsed. Returns how many lines were cut. The file must end with a newline
 * (run repairTail first).
 */
export function cutAfterStep(file: string, lastStep: number): number {
  if (!fs.existsSync(file)) return 0;
  const buf = fs.readFileSync(file);
  let end = buf.length;
  let cutAt = end;
  let cut = 0;
  while (end > 0) {
    // The line is buf[start, lineEnd) where lineEnd is the newline at end - 1.
    const lineEnd = buf[end - 1] === 10 ? end - 1 : end;
    const start = lineEnd > 0 ? buf.lastIndexOf(10, lineEnd - 1) + 1 : 0;
    const text = buf.toString('utf8', start, lineEnd);
    let step: unknown;
    try {
      step = (JSON.parse(text) as { step?: unknown }).step;
    } catch {
      step = undefined;
    }
    if (typeof step === 'number' && step <= lastStep) break;
    if (typeof step !== 'number' && text.trim() !== '') break; // not a step line: keep it and what precedes
    if (text.trim() !== '') cut++;
    cutAt = start;
    end = start;
  }
  if (cutAt < buf.length) {
    const fd = fs.openSync(file, 'r+');
    try {
      fs.ftruncateSync(fd, cutAt);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
  return cut;
}

const exists = (p: string) => fs.existsSync(p);

/**
 * Move the complete folder `tmp` into place as `dir`, replacing any `dir`: rename dir -> dir.old,
 * rename tmp -> dir, fsync the parent, remove dir.old.
 */
export function replaceDir(tmp: string, dir: string): void {
  const old = `${dir}.old`;
  const parent = path.dirname(dir);
  if (exists(dir)) {
    if (exists(old)) fs.rmSync(old, { recursive: true, force: true });
    fs.renameSync(dir, old);
  }
  fs.renameSync(tmp, dir);
  fsyncDir(parent);
  if (exists(old)) fs.rmSync(old, { recursive: true, force: true });
}

/** The three places a folder written by replaceDir can be, in order of preference. */
export function dirCandidates(dir: string): string[] {
  return [dir, `${dir}.tmp`, `${dir}.old`];
}

/**
 * Read-only: the first of dir, dir.tmp, dir.old that exists and is accepted (complete), or null.
 * For loaders, which must not move files a writer may be moving.
 */
export function pickDir(dir: string, accept: (d: string) => boolean): string | null {
  for (const d of dirCandidates(dir)) if (exists(d) && accept(d)) return d;
  return null;
}

/**
 * For a writer (at resume): put the first accepted of dir, dir.tmp, dir.old in place as `dir` and
 * remove the others. Returns false when none is accepted (then none of them is left).
 */
export function recoverDir(dir: string, accept: (d: string) => boolean): boolean {
  const chosen = pickDir(dir, accept);
  for (const d of dirCandidates(dir))
    if (d !== chosen && d !== dir && exists(d)) fs.rmSync(d, { recursive: true, force: true });
  if (chosen === null) {
    if (exists(dir)) fs.rmSync(dir, { recursive: true, force: true });
    return false;
  }
  if (chosen !== dir) {
    if (exists(dir)) fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(chosen, dir);
    fsyncDir(path.dirname(dir));
  }
  return true;
}
