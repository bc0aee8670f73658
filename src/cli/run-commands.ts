/**
 * Run folders in the CLI: `lint RUN_DIR` and `mismatch RUN_DIR` over a run's completed steps, and
 * `lint RUN_DIR --json-lines [--follow]`: one JSON object per completed step, as it lands.
 *
 * The step lines (`--json-lines`), on stdout and nothing else there:
 * `{"step", "path", "samples", "findings": [{"path", "sample", "rule", "positions", "message"}],
 *   "summary": {…run-summary.ts StepSummary}, "errors": [...], "advisories": [...],
 *   "file_findings": [{"path", "rule", "message"}] (owners-unknown, tokenizer-mismatch)}`
 * where `path` is the step's folder or file, each finding's `path` its data file and `sample` the
 * 0-based record in that file, and `advisories` the run's health advisories over the steps so far.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RuleId } from '../core/dumps/index.js';
import type { StepSource } from '../core/dumps/mismatch/mismatch-file.js';
import { followRun } from '../core/dumps/run-folders/follow.js';
import { defaultCacheDir, IndexCache } from '../core/dumps/run-folders/index-cache.js';
import {
  listRun,
  RUN_LAYOUTS,
  RUN_WATCH_DEFAULTS,
  type RunStep,
} from '../core/dumps/run-folders/run-folder.js';
import {
  ADVISORY_DEFAULTS,
  type Advisory,
  type AdvisoryThresholds,
  advise,
  parseAdvise,
  type SummarisedStep,
} from '../core/dumps/run-folders/run-health.js';
import { type StepReport, type StepScanOptions, scanStep } from '../core/dumps/run-folders/step-scan.js';
import { RunTails } from '../core/dumps/run-folders/step-tail.js';
import type { LintPool } from '../core/dumps/session/lint-pool.js';
import {
  loadTokenizerCached,
  resolveTokenizer,
  TOKENIZER_ENV,
  type TokenizerPolicy,
  tokenizerIn,
  tokenizerNote,
} from '../core/dumps/session/tokenizer-choice.js';
import { fail, ok, type Result } from '../core/schema.js';
import { type OptionSpec, type OptionValues, UsageError } from './args.js';

/** The options `lint` gains for run folders. */
export const RUN_LINT_OPTIONS: Record<string, OptionSpec> = {
  jsonLines: {
    type: 'boolean',
    default: false,
    help: 'for one run folder: print one JSON object per completed step ({step, path, samples, findings, summary, errors, advisories})',
  },
  follow: {
    type: 'boolean',
    default: false,
    help: 'for one run folder: keep reading steps as they complete, until interrupted (Ctrl-C ends it, exit 0)',
  },
  advise: {
    type: 'string',
    metavar: 'name=value,...',
    help: 'for run folders: health advisory thresholds (zero_std, truncated, onset_steps, rising_figure, rising_window, rising_ratio, rising_floor; docs/runs.md)',
  },
  quietMs: {
    type: 'int',
    default: RUN_WATCH_DEFAULTS.quietMs,
    min: 0,
    metavar: 'MS',
    help: 'a step without a completion marker is complete once its files stay unchanged this long',
  },
};

export interface RunIO {
  out: (s: string) => void;
  err: (s: string) => void;
}

export const isFolder = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;

const NO_STEPS = `no step files found (layouts: ${RUN_LAYOUTS.join(', ')}; see docs/runs.md)`;

/** A run folder's completed steps now (waiting once for files that are settling): `Result<RunStep[]>`. */
export async function completed(dir: string, quietMs: number): Promise<Result<RunStep[]>> {
  const r = await listRun(dir, { quietMs });
  if (!r.ok) return r;
  const { layout, steps } = r.value;
  if (!layout) return fail(`${dir}: ${NO_STEPS}`);
  const done = steps.filter((s) => s.complete);
  if (!done.length)
    return fail(`${dir}: no completed step yet (${steps.length} being written; layout ${layout.kind})`);
  return ok(done);
}

/** The completed steps of a run folder for `mismatchSteps` (`{step, path, files}`); [] when there is none. */
export async function runStepSources(
  dir: string,
  quietMs: number = RUN_WATCH_DEFAULTS.quietMs,
): Promise<StepSource[]> {
  const r = await completed(dir, quietMs);
  return r.ok ? r.value.map((s) => ({ step: s.step, path: s.path, files: s.files })) : [];
}

/** `--advise name=value,...` over the defaults; throws UsageError (one line naming the allowed names) when malformed. */
export function adviseOption(o: OptionValues): AdvisoryThresholds {
  if (o.advise === undefined) return ADVISORY_DEFAULTS;
  const r = parseAdvise(String(o.advise));
  if (!r.ok) throw new UsageError(r.error);
  return r.value;
}

/** What `lint` has parsed already, for the step reader. */
export interface RunLintSettings {
  /** The advisories' thresholds (default ADVISORY_DEFAULTS). */
  advise?: AdvisoryThresholds;
  rules?: Set<RuleId>;
  /** The user's tokenizer wishes (--tokenizer, EPISODE_LAB_TOKENIZER): core's precedence decides. */
  policy?: TokenizerPolicy;
  logprobGap?: number;
  format?: StepScanOptions['format'];
  templateKwargs?: Record<string, unknown>;
  allowUnknownOwners?: boolean;
}

/**
 * The step reader's options for a run folder: the given tokenizer, else one in the folder (named on
 * `say` either way), and the index cache of the run (none when the cache would be inside it).
 */
export function runScanOptions(
  dir: string,
  settings: RunLintSettings,
  say: (s: string) => void,
): StepScanOptions {
  const chosen = resolveTokenizer(path.join(dir, 'x'), settings.policy ?? {});
  const tok = chosen.tok;
  if (chosen.error) say(`${chosen.dir}: ${chosen.error}`);
  say(tok ? tokenizerNote(chosen) : 'no tokenizer (give --tokenizer DIR): owner rules off');
  const { advise: _, policy: __, ...rest } = settings;
  return { ...rest, tok, cache: IndexCache.forRun(defaultCacheDir(), dir) };
}

/**
 * The CLI's tokenizer policy: `--tokenizer DIR` (checked now: a folder that holds no tokenizer, or
 * one that does not load, is a usage error) and the EPISODE_LAB_TOKENIZER default (one that holds
 * no tokenizer is passed over, said on `say`).
 */
export function cliTokenizerPolicy(o: OptionValues, say: (s: string) => void): TokenizerPolicy {
  const picked = o.tokenizer ? String(o.tokenizer) : null;
  if (picked) {
    const t = loadTokenizerCached(picked);
    if (t.error) throw new UsageError(`--tokenizer: ${t.error}`);
  }
  const setting = process.env[TOKENIZER_ENV] ?? '';
  const policy: TokenizerPolicy = { picked, setting, settingName: TOKENIZER_ENV };
  if (!picked && setting.trim() && !tokenizerIn(setting.trim()))
    say(
      `${TOKENIZER_ENV} names ${setting.trim()}, which holds no tokenizer.json and tokenizer_config.json (nor does its tokenizer/): not used`,
    );
  return policy;
}

/** A run folder read once: its completed steps' reports and the run's advisories over them. */
export interface RunScan {
  dir: string;
  steps: StepReport[];
  advisories: Advisory[];
}

/**
 * `lint RUN_DIR` without --follow: every completed step read (unchanged files from the index cache)
 * and the advisories over them; the error names a folder without a completed step. Notes on `say`.
 * With a pool, every step's files are linted on its workers at once (the same results).
 */
export async function scanRunOnce(
  dir: string,
  settings: RunLintSettings,
  quietMs: number,
  say: (s: string) => void,
  pool?: LintPool,
): Promise<Result<RunScan>> {
  const r = await completed(dir, quietMs);
  if (!r.ok) return r;
  const opts = { ...runScanOptions(dir, settings, say), pool };
  const steps: StepReport[] = pool ? await Promise.all(r.value.map((s) => scanStep(s, opts))) : [];
  if (!pool) for (const s of r.value) steps.push(await scanStep(s, opts));
  return ok({ dir, steps, advisories: advise(steps, settings.advise) });
}

/** The advisories as text lines (indented two spaces), or why there are none: over `read` steps read, `unreadable` not. */
export function advisoryLines(advisories: readonly Advisory[], read = 1, unreadable = 0): string[] {
  if (!advisories.length)
    return [
      read === 0 && unreadable > 0
        ? '  advisories not checked: no step could be read'
        : unreadable > 0
          ? `  no advisories in the ${read} step${read === 1 ? '' : 's'} read`
          : '  no advisories',
    ];
  return advisories.map((a) => `  advisory ${a.id}: ${a.message}; see ${linkText(a.link)}`);
}

/** `step 12` or `step 12, run/x.jsonl sample 3`. */
const linkText = (l: Advisory['link']) =>
  `step ${l.step}${l.path !== undefined ? `, ${l.path} sample ${l.sample}` : ''}`;

/** `lint RUN_DIR --json-lines [--follow]` (and `--follow` in text): the exit code (0, 1 findings, 2 unreadable). */
export async function lintRunSteps(
  paths: readonly string[],
  settings: RunLintSettings,
  o: OptionValues,
  io: RunIO,
  signal?: AbortSignal,
): Promise<number> {
  if (paths.length !== 1 || !isFolder(paths[0]))
    throw new UsageError('--follow and --json-lines take one run folder');
  if (o.json) throw new UsageError('--json lists files; --json-lines lists steps: give one of them');
  const dir = paths[0];
  const say = (s: string) => io.err(`episode-lab lint: ${s}\n`);
  const opts = runScanOptions(dir, settings, say);
  opts.signal = signal;
  const history: SummarisedStep[] = [];
  const printed = new Set<string>();
  let code = 0;
  const tails = new RunTails(opts);
  const onStep = async (step: RunStep) => {
    const rep = await scanStep(step, opts, tails.take(step.step));
    if (opts.signal?.aborted) return;
    history.push({ step: rep.step, summary: rep.summary });
    const advisories = advise(history, settings.advise);
    for (const e of rep.errors) say(e);
    if (rep.errors.length) code = 2;
    else if (rep.findings.length || rep.fileFindings.length) code = Math.max(code, 1);
    if (o.jsonLines) io.out(`${JSON.stringify(stepLine(rep, advisories))}\n`);
    else io.out(stepText(rep, advisories, printed));
  };
  const quietMs = Number(o.quietMs ?? RUN_WATCH_DEFAULTS.quietMs);
  if (!o.follow) {
    const r = await completed(dir, quietMs);
    if (!r.ok) {
      say(r.error);
      return 2;
    }
    for (const s of r.value) await onStep(s);
    return code;
  }
  const { signal: stop, release } = signal ? { signal, release: () => undefined } : interrupts();
  opts.signal = stop;
  try {
    const r = await followRun(dir, { signal: stop, quietMs, onStep, pending: (s) => tails.advance(s) });
    if (!r.ok) {
      say(r.error);
      return 2;
    }
    return 0;
  } finally {
    release();
  }
}

/** A signal that Ctrl-C (SIGINT) or SIGTERM aborts, and the function that stops listening. */
function interrupts(): { signal: AbortSignal; release: () => void } {
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: ac.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** The JSON object of one step (the module comment gives its shape). */
export function stepLine(rep: StepReport, advisories: Advisory[]) {
  return {
    step: rep.step,
    path: rep.path,
    samples: rep.samples,
    findings: rep.findings,
    summary: rep.summary,
    errors: rep.errors,
    advisories,
    file_findings: rep.fileFindings,
  };
}

/** A figure for the text: 3 significant digits, exponent form when small; `n/a` for null. */
const num = (x: number | null) =>
  x === null ? 'n/a' : x !== 0 && Math.abs(x) < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(3)));
const pct = (x: number | null) => (x === null ? 'n/a' : `${Number((x * 100).toPrecision(3))}%`);

/** The text of one step: a line of figures, its findings by rule, and the advisories new or grown at it. */
function stepText(rep: StepReport, advisories: Advisory[], printed: Set<string>): string {
  const s = rep.summary;
  const parts = [
    `${rep.samples} samples in ${rep.files.length} file${rep.files.length === 1 ? '' : 's'}`,
    `reward ${num(s.reward_mean)} ± ${num(s.reward_std)}`,
    `zero-std groups ${pct(s.zero_std_groups)} of ${s.groups}`,
    `truncated ${pct(s.truncated)}`,
    `response ${num(s.response_tokens_mean)} tokens, ${num(s.turns_mean)} turns`,
    ...(s.weight_versions !== null ? [`${s.weight_versions} versions, ${pct(s.mixed_versions)} mixed`] : []),
    `k3 ${num(s.mismatch.k3)} over ${s.mismatch.tokens} tokens`,
  ];
  const lines = [`step ${rep.step} (${rep.path}): ${parts.join('; ')}`];
  const rules = Object.entries(s.findings);
  const counts = rules.map(([r, n]) => `${r} ${n}`);
  if (rep.fileFindings.length) counts.push(`${rep.fileFindings.length} about a whole file`);
  lines.push(counts.length ? `  findings: ${counts.join(', ')}` : '  no findings');
  for (const x of rep.fileFindings) lines.push(`  ${x.rule} (${path.basename(x.path)}): ${x.message}`);
  for (const a of advisories) {
    // An advisory is printed when it first holds and again when this step adds to its evidence.
    const key = `${a.id} ${a.rule ?? ''} ${a.evidence[a.evidence.length - 1]?.step}`;
    if (printed.has(key)) continue;
    printed.add(key);
    lines.push(...advisoryLines([a]));
  }
  return `${lines.join('\n')}\n`;
}
