/**
 * The dump files opened in this window (no `vscode` import): each with the tokenizer folder it
 * is read with and, once the trainer process has linted and indexed it, its summary. The run
 * explorer lists them beside the runs.
 */
import * as path from 'node:path';
import type { DumpFileSummary } from '../core/dumps/view.js';

/** A dump file and the tokenizer folder to read it with (null: one beside the file, or none). */
export interface DumpFileRef {
  file: string;
  tokenizer: string | null;
}

export interface OpenedDump {
  ref: DumpFileRef;
  /** Null while the trainer reads it. */
  summary: DumpFileSummary | null;
  error: string | null;
}

export class DumpFiles {
  private readonly files = new Map<string, OpenedDump>();

  /** The opened files, in the order they were opened. */
  list(): OpenedDump[] {
    return [...this.files.values()];
  }

  get(file: string): OpenedDump | undefined {
    return this.files.get(path.resolve(file));
  }

  /** Start tracking a file (again: its summary is read anew). */
  open(ref: DumpFileRef): OpenedDump {
    const key = path.resolve(ref.file);
    const entry: OpenedDump = { ref: { ...ref, file: key }, summary: null, error: null };
    this.files.delete(key);
    this.files.set(key, entry);
    return entry;
  }

  close(file: string): void {
    this.files.delete(path.resolve(file));
  }
}

/** Records of a summary as tree rows: the first `limit` records, with findings first marked. */
export function recordRows(
  s: DumpFileSummary,
  limit = 2000,
): { record: number; label: string; findings: number }[] {
  const n = Math.min(s.records, limit);
  return Array.from({ length: n }, (_, r) => ({
    record: r,
    findings: s.findingsPerRecord[r] ?? 0,
    label: `record ${r + 1}`,
  })).filter((row) => s.lengths[row.record] > 0);
}
