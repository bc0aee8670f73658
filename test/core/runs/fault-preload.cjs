// Fault injector for the run-file write-ahead test (test/core/runs/fault-injection.test.ts).
// Loaded with `node --require`; the CLI bundle is CommonJS, so patching require('fs') here reaches
// every file operation it makes. Counts the operations that change files under FAULT_ROOT (the run
// folder): mkdirSync (of a missing folder), writeFileSync, appendFileSync, writeSync (on a file opened
// under the root), renameSync, rmSync / unlinkSync / rmdirSync (of an existing path), truncateSync,
// ftruncateSync, copyFileSync. With FAULT_AT=n it SIGKILLs this process at the n-th one:
//   FAULT_MODE=before  before the operation, after  right after it,
//   half  after writing the first half of its bytes (writes and appends only).
// FAULT_LOG=file appends one line per operation: `n kind mode-able path bytes via`, via `fd` when
// the operation writes through a descriptor opened earlier (the open, which creates or truncates the
// file, is not counted), `path` otherwise.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = process.env.FAULT_ROOT ? path.resolve(process.env.FAULT_ROOT) : null;
const at = Number(process.env.FAULT_AT ?? 0);
const mode = process.env.FAULT_MODE ?? 'before';
const logFile = process.env.FAULT_LOG;

const orig = {};
for (const k of [
  'mkdirSync',
  'writeFileSync',
  'appendFileSync',
  'writeSync',
  'renameSync',
  'rmSync',
  'unlinkSync',
  'rmdirSync',
  'truncateSync',
  'ftruncateSync',
  'copyFileSync',
  'openSync',
  'closeSync',
  'existsSync',
])
  orig[k] = fs[k];

const fds = new Map();
let n = 0;
const under = (p) => {
  if (!root || (typeof p !== 'string' && !(p instanceof URL) && !Buffer.isBuffer(p))) return null;
  const r = path.resolve(String(p));
  return r === root || r.startsWith(root + path.sep) ? path.relative(root, r) || '.' : null;
};
const kill = () => {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is delivered before this returns in practice; never continue past a kill point.
  for (;;) {}
};
/** Count an operation; run it (or half of it) and kill at the chosen point. */
function op(kind, rel, bytes, run, runHalf, viaFd = false) {
  n++;
  if (logFile)
    orig.appendFileSync(
      logFile,
      `${n}\t${kind}\t${runHalf && bytes > 1 ? 'w' : '-'}\t${rel}\t${bytes}\t${viaFd ? 'fd' : 'path'}\n`,
    );
  if (n !== at) return run();
  if (mode === 'before') kill();
  if (mode === 'half' && runHalf && bytes > 1) {
    runHalf();
    kill();
  }
  try {
    return run(); // an operation that fails (rmdir of a folder not yet empty) is a kill point too
  } finally {
    kill();
  }
}

const toBuf = (data, encoding) =>
  typeof data === 'string'
    ? Buffer.from(data, typeof encoding === 'string' ? encoding : encoding?.encoding)
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength);

fs.openSync = (p, ...rest) => {
  const fd = orig.openSync.call(fs, p, ...rest);
  const rel = under(p);
  if (rel !== null) fds.set(fd, rel);
  return fd;
};
fs.closeSync = (fd) => {
  fds.delete(fd);
  return orig.closeSync.call(fs, fd);
};
fs.mkdirSync = (p, ...rest) => {
  const rel = under(p);
  if (rel === null || orig.existsSync.call(fs, p)) return orig.mkdirSync.call(fs, p, ...rest);
  return op('mkdir', rel, 0, () => orig.mkdirSync.call(fs, p, ...rest));
};
for (const k of ['rmSync', 'unlinkSync', 'rmdirSync']) {
  fs[k] = (p, ...rest) => {
    const rel = under(p);
    if (rel === null || !orig.existsSync.call(fs, p)) return orig[k].call(fs, p, ...rest);
    return op(k.replace('Sync', ''), rel, 0, () => orig[k].call(fs, p, ...rest));
  };
}
fs.renameSync = (a, b) => {
  const rel = under(a) ?? under(b);
  if (rel === null) return orig.renameSync.call(fs, a, b);
  return op('rename', `${under(a)} -> ${under(b)}`, 0, () => orig.renameSync.call(fs, a, b));
};
for (const k of ['writeFileSync', 'appendFileSync']) {
  fs[k] = (p, data, options) => {
    const rel = typeof p === 'number' ? (fds.get(p) ?? null) : under(p);
    if (rel === null) return orig[k].call(fs, p, data, options);
    const buf = toBuf(data, options);
    return op(
      k.replace('FileSync', ''),
      rel,
      buf.byteLength,
      () => orig[k].call(fs, p, data, options),
      () => orig[k].call(fs, p, buf.subarray(0, buf.byteLength >> 1)),
      typeof p === 'number',
    );
  };
}
fs.writeSync = (fd, buffer, ...rest) => {
  const rel = fds.get(fd);
  if (rel === undefined) return orig.writeSync.call(fs, fd, buffer, ...rest);
  // writeSync(fd, buffer, offset?, length?, position?) or writeSync(fd, string, position?, encoding?)
  let bytes;
  let half;
  if (typeof buffer === 'string') {
    const b = Buffer.from(buffer, typeof rest[1] === 'string' ? rest[1] : 'utf8');
    bytes = b.byteLength;
    half = () => orig.writeSync.call(fs, fd, b.subarray(0, bytes >> 1));
  } else {
    const offset = rest[0] ?? 0;
    const length = rest[1] ?? buffer.byteLength - offset;
    bytes = length;
    half = () => orig.writeSync.call(fs, fd, buffer, offset, length >> 1);
  }
  return op('write', rel, bytes, () => orig.writeSync.call(fs, fd, buffer, ...rest), half, true);
};
fs.ftruncateSync = (fd, len) => {
  const rel = fds.get(fd);
  if (rel === undefined) return orig.ftruncateSync.call(fs, fd, len);
  return op('ftruncate', rel, 0, () => orig.ftruncateSync.call(fs, fd, len), undefined, true);
};
fs.truncateSync = (p, len) => {
  const rel = under(p);
  if (rel === null) return orig.truncateSync.call(fs, p, len);
  return op('truncate', rel, 0, () => orig.truncateSync.call(fs, p, len));
};
fs.copyFileSync = (a, b, ...rest) => {
  const rel = under(b);
  if (rel === null) return orig.copyFileSync.call(fs, a, b, ...rest);
  return op('copy', rel, 0, () => orig.copyFileSync.call(fs, a, b, ...rest));
};
