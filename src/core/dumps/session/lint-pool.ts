/**
 * Linting on N threads (`lint --jobs N`): files, and ranges of a line-based file's records, linted
 * by this thread and N - 1 workers (lint-worker.ts, bundled as dist/lint-worker.js) and joined here
 * in file order by FileLinter.absorb, so that a file's lint is exactly `lintFile`'s, whatever N.
 *
 * A file is cut into ranges of lines only when its format's samples are not linted against earlier
 * records (no `episode`: a turn's context is checked against the previous turn's); a range after the
 * first starts as if the tokenizer fit the records before it, and is linted again from the state they
 * really left when they did not (a misfit, or no sample yet). Each worker loads the tokenizer from
 * its folder once; a tokenizer that is not a loadable folder, a lint that wants `onSample`, and
 * files while the files given add up to less than 256 MiB run on this thread alone (`lintFile`).
 * Progress and a cancel are taken range by range.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Result } from '../../schema.js';
import {
  type FileLint,
  FileLinter,
  type FitState,
  type LintFileOptions,
  type LintPart,
  lintFile,
  lintPart,
} from '../lint/lint-file.js';
import type { RuleId } from '../lint/rules.js';
import { openDumpFile } from '../readers/dump-file.js';
import { type DumpFormat, readerOf } from '../readers/formats/index.js';
import { type LineRange, lineRanges } from '../readers/lines.js';
import type { DumpTokenizer } from '../templates/hf-tokenizer.js';
import { addGathered, type Gather, type Gathered, noneGathered, SampleGatherer } from './gather.js';

/** A file is cut into ranges of at least this many bytes, */
const MIN_PART_BYTES = 32 << 20;
/** and into at most this many ranges per thread (smaller ranges even out the threads' loads). */
const PARTS_PER_WORKER = 4;
/** The threads start once the files given add up to this many ranges (a worker's start costs about a range). */
const POOL_PARTS = 8;

/** The options of a lint a worker runs: LintFileOptions without functions or the tokenizer object. */
export interface PartOptions {
  rules?: RuleId[];
  logprobGap?: number;
  templateKwargs?: Record<string, unknown>;
  maxFindings?: number;
  allowUnknownOwners?: boolean;
}

/** One range of one file, as sent to a worker. */
export interface PartTask {
  id: number;
  path: string;
  format: DumpFormat;
  range?: LineRange;
  fit?: FitState;
  /** The tokenizer's folder and its fingerprint (`tokenizerPrint`), or null for none. */
  tokenizer: { dir: string; print: string } | null;
  opts: PartOptions;
  /** What to gather from every sample besides the lint. */
  gather?: Gather;
}

/** A worker's answer to a PartTask. */
export type PartAnswer =
  | { id: number; ok: true; part: LintPart; gathered: Gathered }
  | { id: number; ok: false; error: string; tokenizerChanged?: boolean };

/** What identifies a loaded tokenizer for the lint: a worker's must match the caller's. */
export function tokenizerPrint(tok: DumpTokenizer): string {
  return JSON.stringify([
    tok.source,
    tok.vocabSize,
    tok.templateFile ?? null,
    tok.chatTemplate ?? null,
    tok.eosId ?? null,
    tok.padId ?? null,
  ]);
}

/** The lint of a file with what was gathered from its samples, as a pool gives it. */
export interface GatheredLint extends FileLint {
  gathered: Gathered;
}

/**
 * A range's lint with the tokenizer `tok` (the task's own, already checked): its answer, never a
 * throw. Workers and the pool's own thread run ranges through it.
 */
export async function runPartTask(t: PartTask, tok: DumpTokenizer | undefined): Promise<PartAnswer> {
  const g = new SampleGatherer(t.gather, tok);
  try {
    const r = await lintPart(
      t.path,
      t.format,
      {
        ...t.opts,
        rules: t.opts.rules ? new Set(t.opts.rules) : undefined,
        tok,
        onSample: t.gather ? (s, f, at) => g.add(s, f, at) : undefined,
      },
      { range: t.range, fit: t.fit },
    );
    return r.ok
      ? { id: t.id, ok: true, part: r.value, gathered: g.result() }
      : { id: t.id, ok: false, error: r.error };
  } catch (e) {
    return { id: t.id, ok: false, error: `${t.path}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The worker's script: next to the bundle (dist/lint-worker.js), or the source under tsx (tests). */
function workerScript(): string | null {
  const candidates = [path.join(__dirname, 'lint-worker.js'), path.join(__dirname, 'lint-worker.ts')];
  return candidates.find((f) => fs.existsSync(f)) ?? null;
}

/** The machine's cores: `--jobs`'s default. */
export function defaultJobs(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** What runs one range at a time: a worker thread, or the pool's own thread. */
interface PartRunner {
  /** False once it takes no more tasks. */
  readonly alive: boolean;
  /** `tok`: the caller's tokenizer object (the pool's own thread lints with it; a worker loads its own). */
  run(task: PartTask, tok: DumpTokenizer | undefined): Promise<PartAnswer>;
  close(): Promise<unknown>;
}

/** The pool's own thread as one of its `jobs` (it holds the tokenizer already: no load, no start). */
class HereRunner implements PartRunner {
  readonly alive = true;
  run(task: PartTask, tok: DumpTokenizer | undefined): Promise<PartAnswer> {
    return runPartTask(task, tok);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A lint worker thread that runs one PartTask at a time. */
class PartWorker implements PartRunner {
  private readonly worker: Worker;
  private waiting: ((a: PartAnswer) => void) | undefined;
  /** False once the thread has exited (it takes no more tasks). */
  alive = true;
  constructor(script: string) {
    // Under tsx the worker registers tsx's loader itself (Node 20 does not pass loader hooks on).
    this.worker = script.endsWith('.ts')
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, { eval: true })
      : new Worker(script);
    this.worker.unref();
    this.worker.on('message', (a: PartAnswer) => this.answer(a));
    this.worker.on('error', (e) => this.answer({ id: -1, ok: false, error: `lint worker: ${e.message}` }));
    this.worker.on('exit', (code) => {
      this.alive = false;
      this.answer({ id: -1, ok: false, error: `lint worker exited (code ${code})` });
    });
  }

  private answer(a: PartAnswer): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.(a);
  }

  run(task: PartTask): Promise<PartAnswer> {
    if (!this.alive) return Promise.resolve({ id: task.id, ok: false, error: 'lint worker exited' });
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.worker.postMessage(task);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

/** N lint runners (this thread and N - 1 workers) and the queue of ranges they take in order. */
export class LintPool {
  private readonly runners: PartRunner[] = [];
  private readonly idle: PartRunner[] = [];
  private readonly queue: {
    task: PartTask;
    done: (a: PartAnswer) => void;
    signal?: AbortSignal;
    tok?: DumpTokenizer;
  }[] = [];
  private nextId = 0;
  private readonly script: string | null;
  private readonly minPartBytes: number;
  /** The bytes of the files given so far. */
  private given = 0;

  /**
   * `jobs` runners: this thread and `jobs - 1` worker threads (started as needed); `minPartBytes`:
   * the least a file's range holds (tests cut small files).
   */
  constructor(
    readonly jobs: number,
    opts: { minPartBytes?: number } = {},
  ) {
    this.script = workerScript();
    this.minPartBytes = opts.minPartBytes ?? MIN_PART_BYTES;
  }

  /**
   * Whether the lint of a file with these options runs on the threads: not when it wants `onSample`,
   * nor while the files given (this one too) add up to less than POOL_PARTS ranges: too little to be
   * worth a worker's start (its own tokenizer load).
   */
  private canRun(file: string, opts: LintFileOptions): boolean {
    if (!this.script || opts.onSample) return false;
    if (opts.tok && !fs.existsSync(path.join(opts.tok.source, 'tokenizer.json'))) return false;
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    this.given += size;
    return size >= POOL_PARTS * this.minPartBytes || this.given >= POOL_PARTS * this.minPartBytes;
  }

  /**
   * The lint of a file (`lintFile`'s contract and result), its ranges on the workers, and what
   * `gather` asks of every sample, in file order. Progress is said as each range is joined; a cancel
   * stops the join there (the lint of the ranges before it, `cancelled`) and drops the file's ranges
   * no worker has taken.
   */
  async lintFile(file: string, opts: LintFileOptions, gather?: Gather): Promise<Result<GatheredLint>> {
    if (!this.canRun(file, opts)) return here(file, opts, gather);
    const opened = await openDumpFile(file, opts.format ?? 'auto');
    if (!opened.ok) return opened;
    const format = opened.value.format;
    const splits = opened.value.lines && !readerOf(format)?.carries.includes('episode');
    const ranges = splits
      ? await lineRanges(file, this.jobs * PARTS_PER_WORKER, this.minPartBytes)
      : [undefined];
    const base = taskBase(file, format, opts, gather);
    const signal = opts.signal;
    const plain: FitState = { checked: true };
    const answers = ranges.map((range, i) =>
      this.submit({ ...base, range, fit: i > 0 ? plain : undefined }, signal, opts.tok),
    );
    const linter = new FileLinter(file, format, opts);
    const gathered = noneGathered();
    const size = fs.statSync(file).size;
    for (let i = 0; i < ranges.length; i++) {
      let a = await answers[i];
      const fit = linter.fitState;
      if (a.ok && i > 0 && (!fit.checked || fit.misfit !== undefined))
        a = await this.submit({ ...base, range: ranges[i], fit }, signal, opts.tok);
      if (signal?.aborted) break;
      if (!a.ok) return a.tokenizerChanged ? here(file, opts, gather) : { ok: false, error: a.error };
      // A format whose samples named an episode after all is linted whole.
      if (a.part.episodes && ranges.length > 1) {
        await Promise.all(answers);
        return this.whole(file, format, opts, gather);
      }
      linter.absorb(a.part);
      addGathered(gathered, a.gathered);
      opts.onProgress?.(ranges[i + 1]?.start ?? size, size);
    }
    return finished(file, linter, opts, gathered);
  }

  /** A file linted as one range on a worker. */
  private async whole(
    file: string,
    format: DumpFormat,
    opts: LintFileOptions,
    gather: Gather | undefined,
  ): Promise<Result<GatheredLint>> {
    const base = taskBase(file, format, opts, gather);
    const a = await this.submit({ ...base, range: undefined }, opts.signal, opts.tok);
    const linter = new FileLinter(file, format, opts);
    if (opts.signal?.aborted) return finished(file, linter, opts, noneGathered());
    if (!a.ok) return a.tokenizerChanged ? here(file, opts, gather) : { ok: false, error: a.error };
    linter.absorb(a.part);
    return finished(file, linter, opts, a.gathered);
  }

  /**
   * Lint one range (a shard's unit) on the next free runner: its answer, never a throw; `cancelled`
   * when `signal` is aborted before a runner takes it.
   */
  runPart(
    t: Omit<PartTask, 'id'>,
    tok: DumpTokenizer | undefined,
    signal?: AbortSignal,
  ): Promise<PartAnswer> {
    return this.submit(t, signal, tok);
  }

  /** Queue a range; one whose `signal` is aborted before a worker takes it is answered `cancelled`. */
  private submit(t: Omit<PartTask, 'id'>, signal?: AbortSignal, tok?: DumpTokenizer): Promise<PartAnswer> {
    const task = { ...t, id: this.nextId++ };
    return new Promise((done) => {
      this.queue.push({ task, done, signal, tok });
      this.pump();
    });
  }

  /** Give queued ranges to idle runners (this thread first, then workers started up to `jobs`). */
  private pump(): void {
    for (const q of this.queue.filter((x) => x.signal?.aborted)) {
      this.queue.splice(this.queue.indexOf(q), 1);
      q.done({ id: q.task.id, ok: false, error: 'cancelled' });
    }
    while (this.queue.length) {
      let r = this.idle.pop();
      if (!r && this.runners.length < this.jobs && this.script) {
        r = this.runners.length === 0 ? new HereRunner() : new PartWorker(this.script);
        this.runners.push(r);
      }
      if (!r) return;
      const { task, done, tok } = this.queue.shift() as (typeof this.queue)[number];
      const runner = r;
      runner.run(task, tok).then((a) => {
        if (runner.alive) this.idle.push(runner);
        else this.runners.splice(this.runners.indexOf(runner), 1);
        done(a.id === task.id || a.ok ? a : { ...a, id: task.id });
        this.pump();
      });
    }
  }

  /** How many runners have started (this thread counts as one). */
  get running(): number {
    return this.runners.length;
  }

  /** Stop the workers. */
  async close(): Promise<void> {
    await Promise.all(this.runners.map((w) => w.close()));
    this.runners.length = 0;
    this.idle.length = 0;
  }
}

/** What every range of a file's task shares. */
function taskBase(
  file: string,
  format: DumpFormat,
  opts: LintFileOptions,
  gather: Gather | undefined,
): Omit<PartTask, 'id'> {
  return {
    path: file,
    format,
    tokenizer: opts.tok ? { dir: opts.tok.source, print: tokenizerPrint(opts.tok) } : null,
    opts: {
      rules: opts.rules ? [...opts.rules] : undefined,
      logprobGap: opts.logprobGap,
      templateKwargs: opts.templateKwargs ? { ...opts.templateKwargs } : undefined,
      maxFindings: opts.maxFindings,
      allowUnknownOwners: opts.allowUnknownOwners,
    },
    gather,
  };
}

/** The joined file's lint, as `lintFile` ends it. */
function finished(
  file: string,
  linter: FileLinter,
  opts: LintFileOptions,
  gathered: Gathered,
): Result<GatheredLint> {
  if (linter.samples === 0 && !opts.signal?.aborted)
    return { ok: false, error: `${file}: no records (the file is empty)` };
  return { ok: true, value: { ...linter.finish(), gathered } };
}

/** A file linted on this thread, with what `gather` asks. */
async function here(
  file: string,
  opts: LintFileOptions,
  gather: Gather | undefined,
): Promise<Result<GatheredLint>> {
  const g = new SampleGatherer(gather, opts.tok);
  const onSample = opts.onSample;
  const r = await lintFile(file, {
    ...opts,
    onSample:
      gather || onSample
        ? (s, findings, at) => {
            g.add(s, findings, at);
            onSample?.(s, findings, at);
          }
        : undefined,
  });
  return r.ok ? { ok: true, value: { ...r.value, gathered: g.result() } } : r;
}
