/**
 * BugFix tasks: tiny functions with exactly one injected bug, an issue text and a hidden test.
 *
 * Five bug kinds, each fixed by one edit operation. The operation is readable from the source
 * (each bug leaves a small token pattern that correct code never has), never from the issue.
 * Held-out tasks use function templates that never occur in training.
 */
import type { Rng } from '../rng.js';
import { inferOpOfWords, OPS, type Op } from './grammar.js';
import { callFunction, codeTokens, equal, parseFunction, type Value } from './pylite.js';

export { isOp, OPS, type Op } from './grammar.js';

export type Split = 'train' | 'heldout';
export { TASK_SPLITS, type TaskSplit } from './names.js';

export interface TestCase {
  args: Value[];
  expected: Value;
}

export interface Task {
  /** Stable id, for example `train-03`. */
  id: string;
  split: Split;
  /** The function template the task was made from. */
  template: string;
  /** The operation that fixes the bug (what `inferOp(source)` recovers). */
  kind: Op;
  /** The function's name as it appears in the source and the issue. */
  fname: string;
  /** The buggy source, Python-like, 4-space indentation. */
  source: string;
  /** The issue text (prompt): names the function and a symptom that does not identify the kind. */
  issue: string;
  /** The visible test that the `test` tool runs. */
  visible: TestCase;
  /** The hidden test that grades a submission (all cases must pass). */
  hidden: TestCase[];
  /** Identifiers of the source that renaming may change (the function name first). */
  identifiers: string[];
}

interface Template {
  name: string;
  split: Split;
  /** The correct function. */
  source: string;
}

/**
 * Function templates. Training and held-out templates differ in structure (parameters, nested or
 * combined conditions, an else branch, the update expression), so that a policy can only
 * generalise by reading the bug's token pattern, not its position. Each template takes every
 * bug kind; a split uses each template with two kinds, rotating so that the kinds stay balanced.
 */
const TEMPLATES: Template[] = [
  {
    name: 'count_above',
    split: 'train',
    source:
      'def count_above(xs, t):\n    c = 0\n    for x in xs:\n        if x > t:\n            c += 1\n    return c',
  },
  {
    name: 'sum_below',
    split: 'train',
    source:
      'def sum_below(xs, t):\n    s = 0\n    for x in xs:\n        if x < t:\n            s += x\n    return s',
  },
  {
    name: 'count_pos',
    split: 'train',
    source:
      'def count_pos(xs):\n    c = 0\n    for x in xs:\n        if x > 0:\n            c += 1\n    return c',
  },
  {
    name: 'sum_sq_below',
    split: 'train',
    source:
      'def sum_sq_below(xs, t):\n    s = 0\n    for x in xs:\n        if x < t:\n            s += x * x\n    return s',
  },
  {
    name: 'sum_scaled_above',
    split: 'train',
    source:
      'def sum_scaled_above(xs, t, k):\n    s = 0\n    for x in xs:\n        if x > t:\n            s += x * k\n    return s',
  },
  {
    name: 'count_in_range',
    split: 'train',
    source:
      'def count_in_range(xs, lo, hi):\n    c = 0\n    for x in xs:\n        if x > lo:\n            if x < hi:\n                c += 1\n    return c',
  },
  {
    name: 'score_below',
    split: 'train',
    source:
      'def score_below(xs, t):\n    s = 0\n    for x in xs:\n        if x < t:\n            s += x\n        else:\n            s += 1\n    return s',
  },
  {
    name: 'count_shifted_above',
    split: 'train',
    source:
      'def count_shifted_above(xs, t, k):\n    c = 0\n    for x in xs:\n        if x + k > t:\n            c += 1\n    return c',
  },
  {
    name: 'sum_plus_above',
    split: 'train',
    source:
      'def sum_plus_above(xs, t):\n    s = 0\n    for x in xs:\n        if x > t:\n            s += x + t\n    return s',
  },
  {
    name: 'sum_double_below',
    split: 'train',
    source:
      'def sum_double_below(xs, t):\n    s = 0\n    for x in xs:\n        if x + x < t:\n            s += x\n    return s',
  },
  {
    name: 'count_outside',
    split: 'heldout',
    source:
      'def count_outside(xs, lo, hi):\n    c = 0\n    for x in xs:\n        if x < lo or x > hi:\n            c += 1\n    return c',
  },
  {
    name: 'sum_sq_above',
    split: 'heldout',
    source:
      'def sum_sq_above(xs, t):\n    s = 0\n    for x in xs:\n        if x > t:\n            s += x * x\n    return s',
  },
  {
    name: 'count_between',
    split: 'heldout',
    source:
      'def count_between(xs, lo, hi):\n    c = 0\n    for x in xs:\n        if x > lo and x < hi:\n            c += 1\n    return c',
  },
  {
    name: 'sum_plus_k_below',
    split: 'heldout',
    source:
      'def sum_plus_k_below(xs, t, k):\n    s = 0\n    for x in xs:\n        if x < t:\n            s += x + k\n    return s',
  },
  {
    name: 'count_neg',
    split: 'heldout',
    source:
      'def count_neg(xs):\n    c = 0\n    for x in xs:\n        if x < 0:\n            c += 1\n    return c',
  },
];

/** Bug kinds a template is used with in its split: two per template, rotating through OPS. */
function kindsOf(indexInSplit: number): Op[] {
  return [OPS[(2 * indexInSplit) % OPS.length], OPS[(2 * indexInSplit + 1) % OPS.length]];
}

/**
 * Test cases for a template, found by a seeded search: the visible case makes every one of the
 * five bugs fail (so `test` says FAIL before the right edit, PASS after), and the hidden test adds
 * three more cases.
 */
function makeCases(tpl: Template, seed: number): TestCase[] {
  const fn = parseFunction(tpl.source);
  const bugged = OPS.map((k) => parseFunction(injectBug(tpl.source, k)));
  const rng = new RngForCases(seed);
  const candidate = (): Value[] => {
    const xs = Array.from({ length: 3 + rng.int(3) }, () => rng.int(10) - (tpl.name.includes('neg') ? 5 : 0));
    return fn.params.map((p, i) =>
      i === 0 ? xs : p === 'k' ? 1 + rng.int(3) : p === 'hi' ? 5 + rng.int(5) : xs[rng.int(xs.length)],
    );
  };
  const result = (f: ReturnType<typeof parseFunction>, args: Value[]) => {
    try {
      return callFunction(f, args);
    } catch {
      return undefined;
    }
  };
  const catchesAll = (args: Value[]) => {
    const want = result(fn, args) as Value;
    return bugged.every((b) => {
      const got = result(b, args);
      return got === undefined || !equal(got, want);
    });
  };
  for (let tries = 0; tries < 10_000; tries++) {
    const args = candidate();
    if (!catchesAll(args)) continue;
    const cases = [args, candidate(), candidate(), candidate()];
    return cases.map((a) => ({ args: a, expected: callFunction(fn, a) }));
  }
  throw new Error(`no visible test catches every bug of template ${tpl.name}`);
}

/** A tiny LCG for the case search, so that tasks do not depend on the Rng's stream layout. */
class RngForCases {
  constructor(private state: number) {}
  int(n: number): number {
    this.state = (Math.imul(this.state, 1664525) + 1013904223) >>> 0;
    return Math.floor((this.state / 4294967296) * n);
  }
}

/** Symptoms the issue may state; none of them identifies the bug kind. */
export const SYMPTOMS = ['wrong result', 'test fails', 'bad output'] as const;

/** Pools that `randomizeNames` draws identifiers from. */
export const FUNCTION_NAMES = [
  'f',
  'g',
  'h',
  'calc',
  'solve',
  'run',
  'scan',
  'tally',
  'check',
  'agg',
] as const;
export const VARIABLE_NAMES = [
  'a',
  'b',
  'k',
  'm',
  'n',
  'p',
  'q',
  'r',
  'u',
  'v',
  'w',
  'y',
  'z',
  'acc',
  'val',
] as const;

/** Python-like layout of one line of code tokens. */
export function formatTokens(tokens: readonly string[]): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const prev = tokens[i - 1];
    const tight =
      i === 0 ||
      [')', ']', ',', ':'].includes(t) ||
      prev === '(' ||
      prev === '[' ||
      (prev === '-' && ['=', '(', ',', '[', '+=', '-=', 'return'].includes(tokens[i - 2] ?? '')) ||
      ((t === '(' || t === '[') && /^[A-Za-z_]/.test(prev ?? '') && !KEYWORDS.has(prev ?? ''));
    out += (tight ? '' : ' ') + t;
  }
  return out;
}

const KEYWORDS = new Set(['def', 'for', 'in', 'if', 'else', 'return', 'and', 'or', 'not']);

function mapSource(source: string, f: (tokens: string[], lineIndex: number) => string[]): string {
  return source
    .split('\n')
    .map((line, i) => {
      const indent = line.length - line.trimStart().length;
      return ' '.repeat(indent) + formatTokens(f(codeTokens(line), i));
    })
    .join('\n');
}

/** The token projection of a source that the `read` tool returns (about 20 to 30 tokens). */
export function compactSource(source: string): string {
  return source
    .split('\n')
    .flatMap((l) => codeTokens(l))
    .join(' ');
}

/** Inject the bug of `kind` into a correct source. */
function injectBug(source: string, kind: Op): string {
  let done = false;
  const out = mapSource(source, (t) => {
    if (done) return t;
    const r = t.slice();
    switch (kind) {
      case 'fix_comparison': {
        const i = r.findIndex((x) => x === '>' || x === '<');
        if (t[0] === 'if' && i >= 0) {
          r[i] = `${r[i]}=`;
          done = true;
        }
        break;
      }
      case 'fix_off_by_one':
        if (t[0] === 'for') {
          r.splice(r.length - 1, 0, '[', '1', ':', ']');
          done = true;
        }
        break;
      case 'fix_operator': {
        const i = r.indexOf('+=');
        if (i >= 0) {
          r[i] = '-=';
          done = true;
        }
        break;
      }
      case 'fix_return':
        if (t[0] === 'return') {
          done = true;
          return ['return', 'None'];
        }
        break;
      case 'fix_init':
        if (t.length === 3 && t[1] === '=' && t[2] === '0') {
          r.splice(2, 1, '-', '1');
          done = true;
        }
        break;
    }
    return r;
  });
  if (!done) throw new Error(`template cannot take bug ${kind}`);
  return out;
}

/**
 * Apply an edit operation to a source; the source comes back unchanged when the operation finds
 * nothing to fix (an edit is never refused for that: the tool says `ok` either way).
 */
export function applyOp(source: string, op: Op): string {
  let done = false;
  const lines = source.split('\n');
  const accumulator = lines.length > 1 ? codeTokens(lines[1])[0] : undefined;
  return mapSource(source, (t, lineIndex) => {
    if (done) return t;
    const r = t.slice();
    switch (op) {
      case 'fix_comparison': {
        const i = r.findIndex((x) => x === '>=' || x === '<=');
        if (i >= 0) {
          r[i] = r[i][0];
          done = true;
        }
        break;
      }
      case 'fix_off_by_one': {
        const i = r.indexOf('[');
        if (t[0] === 'for' && i >= 0 && r[i + 1] === '1' && r[i + 2] === ':' && r[i + 3] === ']') {
          r.splice(i, 4);
          done = true;
        }
        break;
      }
      case 'fix_operator': {
        const i = r.indexOf('-=');
        if (i >= 0) {
          r[i] = '+=';
          done = true;
        }
        break;
      }
      case 'fix_return':
        if (t[0] === 'return' && t[1] === 'None' && accumulator) {
          done = true;
          return ['return', accumulator];
        }
        break;
      case 'fix_init':
        if (lineIndex === 1 && t.length === 4 && t[1] === '=' && t[2] === '-' && t[3] === '1') {
          r.splice(2, 2, '0');
          done = true;
        }
        break;
    }
    return r;
  });
}

/**
 * The operation that fixes a source, read off its tokens (a deterministic oracle), or null when
 * the source shows none of the five bug patterns.
 */
export function inferOp(source: string): Op | null {
  return inferOpOfWords(source.includes('\n') ? compactSource(source).split(' ') : source.split(/\s+/));
}

/** Run a source on a test case: true when it returns the expected value (errors fail). */
export function runCase(source: string, c: TestCase): boolean {
  try {
    return equal(callFunction(parseFunction(source), c.args), c.expected);
  } catch {
    return false;
  }
}

/** True when the source passes every case. */
export function passes(source: string, cases: readonly TestCase[]): boolean {
  return cases.every((c) => runCase(source, c));
}

function makeIssue(fname: string, symptom: string): string {
  return `fix ${fname} : ${symptom}`;
}

let cache: Task[] | null = null;

function allTasks(): Task[] {
  if (cache) return cache;
  const out: Task[] = [];
  const counters: Record<Split, number> = { train: 0, heldout: 0 };
  const templatesSeen: Record<Split, number> = { train: 0, heldout: 0 };
  TEMPLATES.forEach((tpl, t) => {
    const fn = parseFunction(tpl.source);
    const cases = makeCases(tpl, 1000 + t);
    const identifiers = [fn.name, ...collectVariables(tpl.source, fn.name)];
    for (const kind of kindsOf(templatesSeen[tpl.split]++)) {
      const index = counters[tpl.split]++;
      out.push({
        id: `${tpl.split}-${String(index).padStart(2, '0')}`,
        split: tpl.split,
        template: tpl.name,
        kind,
        fname: fn.name,
        source: injectBug(tpl.source, kind),
        issue: makeIssue(fn.name, SYMPTOMS[index % SYMPTOMS.length]),
        visible: cases[0],
        hidden: cases,
        identifiers,
      });
    }
  });
  cache = out;
  return out;
}

function collectVariables(source: string, fname: string): string[] {
  const names = new Set<string>();
  for (const line of source.split('\n'))
    for (const t of codeTokens(line))
      if (/^[A-Za-z_]\w*$/.test(t) && !KEYWORDS.has(t) && !BUILTINS.has(t) && t !== fname) names.add(t);
  return [...names];
}

const BUILTINS = new Set(['None', 'True', 'False', 'len', 'range', 'abs', 'min', 'max']);

/** The tasks of a split: 20 training tasks, 10 held-out tasks from unseen templates, or all 30. */
export function makeTasks(split: Split | 'all' = 'all'): Task[] {
  const tasks = allTasks();
  return split === 'all' ? tasks.slice() : tasks.filter((t) => t.split === split);
}

/** The names of the function templates of a split. */
export function templateNames(split: Split | 'all' = 'all'): string[] {
  return TEMPLATES.filter((t) => split === 'all' || t.split === split).map((t) => t.name);
}

/**
 * A copy of the task with the function and its variables renamed from the identifier pools and a
 * fresh symptom, so that a policy cannot memorise tasks. The bug, its fix and the tests keep
 * their meaning (renaming changes no behaviour).
 */
export function randomizeNames(task: Task, rng: Rng): Task {
  const [fname, ...vars] = task.identifiers;
  const newF = rng.choice(FUNCTION_NAMES);
  const pool = rng.shuffle(VARIABLE_NAMES);
  const map = new Map<string, string>([[fname, newF]]);
  for (const [i, v] of vars.entries()) map.set(v, pool[i]);
  const rename = (t: string[]) => t.map((x) => map.get(x) ?? x);
  const single = task.issue.includes('\n');
  const issue = makeIssue(newF, rng.choice(SYMPTOMS));
  const source = mapSource(task.source, rename);
  return {
    ...task,
    fname: newF,
    source,
    issue: single ? `${compactSource(source)}\n${issue}` : issue,
    identifiers: task.identifiers.map((x) => map.get(x) ?? x),
  };
}

/**
 * A copy of the task whose prompt carries the source: `compactSource(source) + "\n" + issue`. The
 * source comes first, so that both formats end their prompt with the issue and the first token
 * tells them apart: a model cannot take the end of a multi-turn prompt for the middle of a
 * single-turn one.
 */
export function singleTurn(task: Task): Task {
  if (task.issue.includes('\n')) return task;
  return { ...task, issue: `${compactSource(task.source)}\n${task.issue}` };
}

/** True for a single-turn copy of a task (its prompt carries the source). */
export function isSingleTurn(task: Task): boolean {
  return task.issue.includes('\n');
}
