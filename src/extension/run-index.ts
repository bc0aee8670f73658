/**
 * An incremental index of a run folder for the run explorer (no `vscode` import, unit-tested).
 * `episodes.jsonl` is append-only, so each refresh reads only the bytes appended since the last
 * one and keeps a small summary per episode (its byte range, step, pass, reward, turns, stop);
 * the full trajectory is read from its byte range when the inspector opens it. A last line still
 * being written (no newline yet) is left for the next refresh.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type TrajectoryJSON, validateTrajectoryJSON } from '../core/gym/trajectory-json.js';
import { type HistoryEntry, type RunMeta, readMeta } from '../core/runs/run-files.js';

export interface EpisodeEntry {
  /** 0-based line in episodes.jsonl. */
  line: number;
  /** Byte range of the line. */
  offset: number;
  length: number;
  step: number;
  /** Index within the step. */
  index: number;
  pass: boolean;
  submitted: boolean;
  reward: number;
  turns: number;
  stop: string;
  taskId: string;
  tokens: number;
}

/** Lines per slice before yielding to the event loop. */
const SLICE = 500;
const tick = () => new Promise<void>((r) => setImmediate(r));

/** Reads the new complete lines of an append-only JSON-lines file, from where it stopped. */
class TailReader {
  private pos = 0;
  line = 0;
  constructor(readonly file: string) {}

  /** Reset when the file shrank (it was replaced). */
  async read(onLine: (text: string, offset: number, length: number, line: number) => void): Promise<boolean> {
    let size: number;
    try {
      size = (await fs.promises.stat(this.file)).size;
    } catch {
      return false;
    }
    if (size < this.pos) {
      this.pos = 0;
      this.line = 0;
    }
    if (size === this.pos) return false;
    const fh = await fs.promises.open(this.file, 'r');
    try {
      const buf = Buffer.alloc(size - this.pos);
      await fh.read(buf, 0, buf.length, this.pos);
      let start = 0;
      let n = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl < 0) break;
        if (nl > start) onLine(buf.toString('utf8', start, nl), this.pos + start, nl - start, this.line);
        this.line++;
        start = nl + 1;
        if (++n % SLICE === 0) await tick();
      }
      this.pos += start;
      return start > 0;
    } finally {
      await fh.close();
    }
  }
}

export class RunIndex {
  meta: RunMeta | null = null;
  readonly history = new Map<number, HistoryEntry>();
  readonly episodes: EpisodeEntry[] = [];
  readonly byStep = new Map<number, EpisodeEntry[]>();
  readonly warnings: string[] = [];
  private readonly eps: TailReader;
  private readonly hist: TailReader;

  constructor(readonly dir: string) {
    this.eps = new TailReader(path.join(dir, 'episodes.jsonl'));
    this.hist = new TailReader(path.join(dir, 'history.jsonl'));
  }

  get name(): string {
    return path.basename(this.dir);
  }

  /** Steps that have episodes or a history line, in order. */
  steps(): number[] {
    return [...new Set([...this.history.keys(), ...this.byStep.keys()])].sort((a, b) => a - b);
  }

  /** Read what was appended since the last update; true when anything changed. */
  async update(): Promise<boolean> {
    let changed = false;
    if (!this.meta) {
      try {
        this.meta = readMeta(this.dir);
        changed = true;
      } catch (e) {
        this.warnings.push((e as Error).message);
        return false;
      }
    }
    changed =
      (await this.hist.read((text, _o, _l, line) => {
        try {
          const h = JSON.parse(text) as HistoryEntry;
          if (typeof h.step === 'number') this.history.set(h.step, h);
        } catch {
          this.warnings.push(`history.jsonl: line ${line + 1} is corrupt; skipped`);
        }
      })) || changed;
    changed =
      (await this.eps.read((text, offset, length, line) => {
        try {
          const e = JSON.parse(text) as TrajectoryJSON;
          const step = e.step ?? 0;
          const list = this.byStep.get(step) ?? [];
          const entry: EpisodeEntry = {
            line,
            offset,
            length,
            step,
            index: e.index ?? list.length,
            pass: Boolean(e.info?.hidden_pass),
            submitted: Boolean(e.info?.submitted),
            reward: Number(e.reward),
            turns: Number(e.info?.n_turns),
            stop: String(e.info?.stop),
            taskId: String(e.task?.id),
            tokens: Array.isArray(e.ids) ? e.ids.length : 0,
          };
          this.episodes.push(entry);
          list.push(entry);
          this.byStep.set(step, list);
        } catch {
          this.warnings.push(`episodes.jsonl: line ${line + 1} is corrupt; skipped`);
        }
      })) || changed;
    return changed;
  }

  /** Read one episode's full trajectory from its byte range. */
  async readEpisode(entry: EpisodeEntry): Promise<TrajectoryJSON> {
    const fh = await fs.promises.open(path.join(this.dir, 'episodes.jsonl'), 'r');
    try {
      const buf = Buffer.alloc(entry.length);
      await fh.read(buf, 0, entry.length, entry.offset);
      return validateTrajectoryJSON(JSON.parse(buf.toString('utf8')));
    } finally {
      await fh.close();
    }
  }
}

/** One line for an episode: `pass · reward 1.00 · 3 turns · submitted`. */
export function describeEpisode(e: EpisodeEntry): string {
  return `${e.pass ? 'pass' : 'fail'} · reward ${e.reward.toFixed(2)} · ${e.turns} turn${e.turns === 1 ? '' : 's'} · ${e.stop}`;
}

/** One line for a step from its history entry. */
export function describeStep(h: HistoryEntry | undefined, episodes: number): string {
  const parts = [`${episodes} episode${episodes === 1 ? '' : 's'}`];
  if (h) {
    for (const k of ['pass_rate', 'reward', 'turns'] as const)
      if (typeof h[k] === 'number') parts.push(`${k.replace('_rate', '')} ${(h[k] as number).toFixed(2)}`);
  }
  return parts.join(' · ');
}
