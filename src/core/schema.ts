/**
 * Schemas at the boundaries (valibot): every value read from a file, a message or a command line is
 * checked by a schema, and a bad one is a rejection that names its path and says what was expected
 * (`config.contextPolicy.k: expected an integer from 0 to 64, got 1.5`), never a throw. Unknown keys
 * are errors with a "did you mean". Types come from the schemas (`v.InferOutput`).
 *
 * Why valibot: its schemas are functions that tree-shake, so the webview bundle pays only for the
 * few it uses (zod's classes come whole), and its issues carry the path and the input, from which
 * these helpers write one clear line.
 */
import * as v from 'valibot';
import { suggest } from './suggest.js';

/** An outcome: the value, or why not (by default one line of text). */
export type Result<T, E = string> = { ok: true; value: T } | { ok: false; error: E };

/** `ok(value)`: a successful Result. */
export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
/** `fail(error)`: a failed Result. */
export const fail = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** Deepest nesting accepted before a schema runs (a guard against stack overflows on hostile input). */
export const MAX_DEPTH = 64;

/** Largest array any boundary accepts (sizes of their own are declared where they apply). */
export const MAX_ARRAY = 1_000_000;

/** Longest path or model reference any boundary accepts. */
export const MAX_PATH = 4096;

/** How many characters of a value's JSON a message shows (longer: cut to SHOWN - 3, then "..."). */
const SHOWN = 60;

/**
 * A copy of `x` with no more of it than its JSON's first SHOWN + 1 characters can hold: strings
 * and arrays cut to SHOWN + 1 items, plain objects to SHOWN + 1 keys, nesting to SHOWN + 1 levels
 * (every item, key or level adds at least one character). Its JSON starts with the same
 * SHOWN - 3 characters as x's and is as long when x's is at most SHOWN, so `show` never
 * serialises a huge value whole.
 */
function clipped(x: unknown, depth = 0): unknown {
  const n = SHOWN + 1;
  if (typeof x === 'string') return x.length > n ? x.slice(0, n) : x;
  if (x === null || typeof x !== 'object') return x;
  if (depth > n) return null;
  if (Array.isArray(x)) {
    // A loop, not slice or map: those read x.constructor, which a hostile array may have replaced.
    const out: unknown[] = new Array(Math.min(x.length, n));
    for (let i = 0; i < out.length; i++) out[i] = clipped(x[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return x;
  // No prototype: a key "__proto__" stays an own key, as JSON.stringify shows it.
  const out: Record<string, unknown> = Object.create(null);
  let kept = 0;
  for (const k of Object.keys(x)) {
    if (kept === n) break;
    const v = (x as Record<string, unknown>)[k];
    // Keys JSON leaves out (undefined, functions, symbols) take no room.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out[k] = clipped(v, depth + 1);
    kept++;
  }
  return out;
}

/** How a JSON value reads in a message: short, quoted like JSON (its first SHOWN characters). */
export function show(x: unknown): string {
  if (x === undefined) return 'nothing';
  if (typeof x === 'number' && !Number.isFinite(x)) return String(x);
  let s: string;
  try {
    s = JSON.stringify(clipped(x)) ?? String(x);
  } catch {
    s = String(x);
  }
  return s.length > SHOWN ? `${s.slice(0, SHOWN - 3)}...` : s;
}

/** The nesting depth of a value, counting no further than `limit + 1` (iterative: no recursion). */
export function depthOf(x: unknown, limit = MAX_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[x, 0]];
  while (stack.length) {
    const [node, d] = stack.pop()!;
    if (d > deepest) deepest = d;
    if (deepest > limit) return deepest;
    if (node && typeof node === 'object')
      for (const child of Array.isArray(node) ? node : Object.values(node))
        if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
        else if (d + 1 > deepest) deepest = d + 1;
  }
  return deepest;
}

/** The path of an issue as `a.b[2].c` (empty at the root). */
function pathOf(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string')
      out += /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return out;
}

/** One line per problem, the first few: `where.path: message`. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], where: string): string {
  // A file name is followed by ': ' and the path inside it (`runs/a/config.json: config.seed: ...`).
  const file = /[\\/]|\.jsonl?$/.test(where);
  const lines = issues.slice(0, 3).map((i) => {
    const p = pathOf(i).replace(/^\./, '');
    const at = file ? (p ? `${where}: ${p}` : where) : `${where}${pathOf(i)}`.replace(/^\./, '');
    return at ? `${at}: ${i.message}` : i.message;
  });
  if (issues.length > 3) lines.push(`(and ${issues.length - 3} more)`);
  return lines.join('; ');
}

/** Check x against a schema; a rejection names the path under `where`. Never throws. */
export function parse<S extends v.GenericSchema>(
  schema: S,
  x: unknown,
  where: string,
): Result<v.InferOutput<S>> {
  try {
    if (depthOf(x) > MAX_DEPTH)
      return { ok: false, error: `${where}: nested deeper than ${MAX_DEPTH} levels` };
    const r = v.safeParse(schema, x);
    return r.success ? { ok: true, value: r.output } : { ok: false, error: describeIssues(r.issues, where) };
  } catch (e) {
    return { ok: false, error: `${where}: could not be checked (${(e as Error).message})` };
  }
}

/** The value, or a thrown error carrying the rejection (for callers that report errors by throwing). */
export function parseOrThrow<S extends v.GenericSchema>(
  schema: S,
  x: unknown,
  where: string,
  ErrorClass: new (m: string) => Error = Error,
): v.InferOutput<S> {
  const r = parse(schema, x, where);
  if (!r.ok) throw new ErrorClass(r.error);
  return r.value;
}

const isPlainObject = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);

/** An object with exactly these keys (optional ones may be missing); an unknown key is an error with a hint. */
export function strict<E extends v.ObjectEntries>(entries: E, what = 'an object') {
  return v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, (i) => `expected ${what}, got ${show(i.input)}`),
    strictEntries(entries, what),
  );
}

/** `strict` without the plain-object guard (an array passes as an object): for the options of v.variant. */
export function strictEntries<E extends v.ObjectEntries>(entries: E, what = 'an object') {
  const keys = Object.keys(entries);
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') {
      const key = String(issue.input);
      const hint = suggest(key, keys);
      return `unknown key ${JSON.stringify(key)}${hint ? ` (did you mean "${hint}"?)` : ''}; known keys: ${keys.join(', ')}`;
    }
    if (issue.input === undefined && issue.expected?.startsWith('"')) return 'is required';
    return `expected ${what}, got ${show(issue.input)}`;
  });
}

/** An object that keeps keys it does not know (for records written by other versions or tools). */
export function loose<E extends v.ObjectEntries>(entries: E, what = 'an object') {
  return v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, (i) => `expected ${what}, got ${show(i.input)}`),
    v.looseObject(entries, (issue) =>
      issue.input === undefined && issue.expected?.startsWith('"')
        ? 'is required'
        : `expected ${what}, got ${show(issue.input)}`,
    ),
  );
}

/** An integer in [min, max]. */
export function int(min: number, max: number) {
  const msg = (i: v.BaseIssue<unknown>) => `expected an integer from ${min} to ${max}, got ${show(i.input)}`;
  return v.pipe(v.number(msg), v.integer(msg), v.minValue(min, msg), v.maxValue(max, msg));
}

/** A finite number in [min, max] (pass `exclusive` to exclude the bounds). */
export function num(min: number, max: number, exclusive: { min?: boolean; max?: boolean } = {}) {
  const range = `${exclusive.min ? '(' : '['}${min}, ${max}${exclusive.max ? ')' : ']'}`;
  const msg = (i: v.BaseIssue<unknown>) => `expected a number in ${range}, got ${show(i.input)}`;
  return v.pipe(
    v.number(msg),
    v.finite(msg),
    v.check((x) => (exclusive.min ? x > min : x >= min) && (exclusive.max ? x < max : x <= max), msg),
  );
}

/** A finite number. */
export function finite() {
  const msg = (i: v.BaseIssue<unknown>) => `expected a finite number, got ${show(i.input)}`;
  return v.pipe(v.number(msg), v.finite(msg));
}

/** A boolean. */
export function bool() {
  return v.boolean((i) => `expected true or false, got ${show(i.input)}`);
}

/** A string of 1 to maxLength characters. */
export function text(maxLength = 4096) {
  const msg = (i: v.BaseIssue<unknown>) =>
    `expected a string of 1 to ${maxLength} characters, got ${show(i.input)}`;
  return v.pipe(v.string(msg), v.minLength(1, msg), v.maxLength(maxLength, msg));
}

/** Any string of at most maxLength characters (empty allowed). */
export function anyText(maxLength = 1_000_000) {
  const msg = `expected a string of at most ${maxLength} characters`;
  return v.pipe(v.string(msg), v.maxLength(maxLength, msg));
}

/** One of a list of strings. */
export function oneOf<const T extends readonly string[]>(values: T) {
  return v.picklist(
    values as unknown as T[number][],
    (i) => `expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${show(i.input)}`,
  );
}

/** An array of items, of `min` to `max` entries. */
export function list<S extends v.GenericSchema>(item: S, min = 0, max = MAX_ARRAY) {
  const msg = (i: v.BaseIssue<unknown>) =>
    `expected a list of ${min} to ${max} entries, got ${Array.isArray(i.input) ? `${i.input.length} entries` : show(i.input)}`;
  // The length is checked before any item, so a huge array costs one comparison, not an issue per item.
  return v.pipe(
    v.custom<unknown[]>((x) => Array.isArray(x) && x.length >= min && x.length <= max, msg),
    v.array(item, msg),
  );
}

/** An array of finite numbers (a fast check: one schema for the whole array, not one per entry). */
export function numbers(max = MAX_ARRAY) {
  return v.custom<number[]>(
    (x) => Array.isArray(x) && x.length <= max && x.every((n) => typeof n === 'number' && Number.isFinite(n)),
    (i) =>
      Array.isArray(i.input)
        ? i.input.length > max
          ? `expected at most ${max} numbers, got ${i.input.length}`
          : `expected finite numbers, found ${show((i.input as unknown[]).find((n) => typeof n !== 'number' || !Number.isFinite(n)))}`
        : `expected a list of numbers, got ${show(i.input)}`,
  );
}

/** An array of strings (a fast check). */
export function strings(max = MAX_ARRAY) {
  return v.custom<string[]>(
    (x) => Array.isArray(x) && x.length <= max && x.every((s) => typeof s === 'string'),
    (i) => `expected a list of at most ${max} strings, got ${show(i.input)}`,
  );
}
