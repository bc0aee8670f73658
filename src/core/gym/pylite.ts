/**
 * A tiny interpreter for the Python subset the BugFix tasks are written in, so that the `test`
 * tool and the hidden test really run the (edited) code instead of comparing labels.
 *
 * Supported: one `def`, assignments (`=`, `+=`, `-=`, `*=`), `for NAME in EXPR:`, `if EXPR:` with an
 * optional `else:`, `return EXPR`; expressions with `or and not`, comparisons, `+ - *`, unary
 * minus, calls of `len range abs min max`, indexing and slicing, `None True False`, list literals.
 * Blocks are given by 4-space indentation.
 */

export type Value = number | boolean | null | Value[];

/** Tokens of one line of code: identifiers, integers, operators and punctuation. */
export function codeTokens(line: string): string[] {
  const re = /\s*(>=|<=|==|!=|\+=|-=|\*=|[A-Za-z_][A-Za-z0-9_]*|\d+|[()[\],:=+\-*<>])/y;
  const out: string[] = [];
  re.lastIndex = 0;
  while (re.lastIndex < line.length) {
    if (/^\s*$/.test(line.slice(re.lastIndex))) break;
    const m = re.exec(line);
    if (!m) throw new SyntaxError(`cannot tokenize '${line.slice(re.lastIndex).trim()}' in: ${line.trim()}`);
    out.push(m[1]);
  }
  return out;
}

interface Line {
  indent: number;
  tokens: string[];
}

type Expr =
  | { k: 'num'; v: number }
  | { k: 'const'; v: Value }
  | { k: 'name'; name: string }
  | { k: 'list'; items: Expr[] }
  | { k: 'unary'; op: string; e: Expr }
  | { k: 'bin'; op: string; a: Expr; b: Expr }
  | { k: 'call'; fn: string; args: Expr[] }
  | { k: 'index'; e: Expr; i: Expr }
  | { k: 'slice'; e: Expr; lo: Expr | null; hi: Expr | null };

type Stmt =
  | { k: 'assign'; name: string; op: string; e: Expr }
  | { k: 'for'; name: string; iter: Expr; body: Stmt[] }
  | { k: 'if'; cond: Expr; body: Stmt[]; orelse: Stmt[] }
  | { k: 'return'; e: Expr };

export interface FunctionDef {
  name: string;
  params: string[];
  body: Stmt[];
}

/** Parse a source holding exactly one function definition. Throws SyntaxError on anything else. */
export function parseFunction(source: string): FunctionDef {
  const lines: Line[] = source
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const indent = l.length - l.trimStart().length;
      if (indent % 4 !== 0) throw new SyntaxError(`indentation must be a multiple of 4: ${l}`);
      return { indent: indent / 4, tokens: codeTokens(l) };
    });
  if (lines.length === 0) throw new SyntaxError('empty source');
  const head = lines[0].tokens;
  if (head[0] !== 'def' || head[2] !== '(' || head[head.length - 2] !== ')' || head[head.length - 1] !== ':')
    throw new SyntaxError(`expected 'def NAME ( ... ) :', got: ${head.join(' ')}`);
  const params = head.slice(3, -2).filter((t) => t !== ',');
  const [body, next] = parseBlock(lines, 1, 1);
  if (next !== lines.length) throw new SyntaxError(`unexpected line: ${lines[next].tokens.join(' ')}`);
  return { name: head[1], params, body };
}

function parseBlock(lines: Line[], start: number, indent: number): [Stmt[], number] {
  const out: Stmt[] = [];
  let i = start;
  while (i < lines.length && lines[i].indent === indent) {
    const t = lines[i].tokens;
    if (t[0] === 'for') {
      if (t[2] !== 'in' || t[t.length - 1] !== ':') throw new SyntaxError(`bad for: ${t.join(' ')}`);
      const iter = parseExpr(t.slice(3, -1));
      const [body, next] = parseBlock(lines, i + 1, indent + 1);
      out.push({ k: 'for', name: t[1], iter, body });
      i = next;
    } else if (t[0] === 'if') {
      if (t[t.length - 1] !== ':') throw new SyntaxError(`bad if: ${t.join(' ')}`);
      const cond = parseExpr(t.slice(1, -1));
      const [body, next] = parseBlock(lines, i + 1, indent + 1);
      let orelse: Stmt[] = [];
      i = next;
      if (i < lines.length && lines[i].indent === indent && lines[i].tokens.join(' ') === 'else :') {
        [orelse, i] = parseBlock(lines, i + 1, indent + 1);
      }
      out.push({ k: 'if', cond, body, orelse });
    } else if (t[0] === 'return') {
      out.push({ k: 'return', e: parseExpr(t.slice(1)) });
      i++;
    } else if (['=', '+=', '-=', '*='].includes(t[1])) {
      out.push({ k: 'assign', name: t[0], op: t[1], e: parseExpr(t.slice(2)) });
      i++;
    } else {
      throw new SyntaxError(`unknown statement: ${t.join(' ')}`);
    }
  }
  if (i < lines.length && lines[i].indent > indent)
    throw new SyntaxError(`unexpected indent: ${lines[i].tokens.join(' ')}`);
  if (out.length === 0) throw new SyntaxError('empty block');
  return [out, i];
}

const BINARY: Record<string, number> = {
  or: 1,
  and: 2,
  '<': 4,
  '>': 4,
  '<=': 4,
  '>=': 4,
  '==': 4,
  '!=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
};

/** Pratt parser over a token list. */
function parseExpr(tokens: string[]): Expr {
  let pos = 0;
  const peek = () => tokens[pos];
  const take = (want?: string) => {
    const t = tokens[pos++];
    if (want !== undefined && t !== want) throw new SyntaxError(`expected '${want}', got '${t ?? 'end'}'`);
    if (t === undefined) throw new SyntaxError('unexpected end of expression');
    return t;
  };
  const expr = (minPrec: number): Expr => {
    let left = prefix();
    for (;;) {
      const op = peek();
      const prec = op === undefined ? undefined : BINARY[op];
      if (prec === undefined || prec < minPrec) return left;
      take();
      left = { k: 'bin', op, a: left, b: expr(prec + 1) };
    }
  };
  const prefix = (): Expr => {
    const t = take();
    let e: Expr;
    if (t === 'not') return { k: 'unary', op: 'not', e: expr(3) };
    if (t === '-') return { k: 'unary', op: '-', e: expr(7) };
    if (/^\d+$/.test(t)) e = { k: 'num', v: Number(t) };
    else if (t === 'None') e = { k: 'const', v: null };
    else if (t === 'True' || t === 'False') e = { k: 'const', v: t === 'True' };
    else if (t === '(') {
      e = expr(0);
      take(')');
    } else if (t === '[') {
      const items: Expr[] = [];
      while (peek() !== ']') {
        items.push(expr(0));
        if (peek() === ',') take();
      }
      take(']');
      e = { k: 'list', items };
    } else if (/^[A-Za-z_]/.test(t)) e = { k: 'name', name: t };
    else throw new SyntaxError(`unexpected '${t}'`);
    // postfix: calls, indexing, slicing
    for (;;) {
      if (peek() === '(' && e.k === 'name') {
        take();
        const args: Expr[] = [];
        while (peek() !== ')') {
          args.push(expr(0));
          if (peek() === ',') take();
        }
        take(')');
        e = { k: 'call', fn: e.name, args };
      } else if (peek() === '[') {
        take();
        const lo = peek() === ':' ? null : expr(0);
        if (peek() === ':') {
          take();
          const hi = peek() === ']' ? null : expr(0);
          take(']');
          e = { k: 'slice', e, lo, hi };
        } else {
          take(']');
          e = { k: 'index', e, i: lo as Expr };
        }
      } else return e;
    }
  };
  const e = expr(0);
  if (pos !== tokens.length) throw new SyntaxError(`unexpected '${tokens[pos]}' in: ${tokens.join(' ')}`);
  return e;
}

/** Raised for a run-time error of the interpreted code (a type error, an unknown name, ...). */
export class PyError extends Error {}

class Return {
  constructor(readonly value: Value) {}
}

const MAX_STEPS = 10_000;

/** Call the function with the given arguments; returns its value (None when it falls off the end). */
export function callFunction(fn: FunctionDef, args: Value[]): Value {
  if (args.length !== fn.params.length)
    throw new PyError(`${fn.name} takes ${fn.params.length} arguments, got ${args.length}`);
  const env = new Map<string, Value>(fn.params.map((p, i) => [p, args[i]]));
  const budget = { steps: 0 };
  try {
    execBlock(fn.body, env, budget);
  } catch (e) {
    if (e instanceof Return) return e.value;
    throw e;
  }
  return null;
}

function execBlock(body: Stmt[], env: Map<string, Value>, budget: { steps: number }): void {
  for (const s of body) {
    if (++budget.steps > MAX_STEPS) throw new PyError('step limit exceeded');
    switch (s.k) {
      case 'assign': {
        const v = evalExpr(s.e, env);
        if (s.op === '=') env.set(s.name, v);
        else {
          const old = lookup(env, s.name);
          env.set(s.name, binary(s.op[0], old, v));
        }
        break;
      }
      case 'for': {
        const it = evalExpr(s.iter, env);
        if (!Array.isArray(it)) throw new PyError(`cannot iterate over ${show(it)}`);
        for (const x of it) {
          env.set(s.name, x);
          execBlock(s.body, env, budget);
        }
        break;
      }
      case 'if':
        execBlock(truthy(evalExpr(s.cond, env)) ? s.body : s.orelse, env, budget);
        break;
      case 'return':
        throw new Return(evalExpr(s.e, env));
    }
  }
}

function lookup(env: Map<string, Value>, name: string): Value {
  if (!env.has(name)) throw new PyError(`name '${name}' is not defined`);
  return env.get(name) as Value;
}

function truthy(v: Value): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}

function num(v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new PyError(`expected a number, got ${show(v)}`);
}

function binary(op: string, a: Value, b: Value): Value {
  switch (op) {
    case '+':
      if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
      return num(a) + num(b);
    case '-':
      return num(a) - num(b);
    case '*':
      return num(a) * num(b);
    case '<':
      return num(a) < num(b);
    case '>':
      return num(a) > num(b);
    case '<=':
      return num(a) <= num(b);
    case '>=':
      return num(a) >= num(b);
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
  }
  throw new PyError(`unknown operator ${op}`);
}

function evalExpr(e: Expr, env: Map<string, Value>): Value {
  switch (e.k) {
    case 'num':
    case 'const':
      return e.v;
    case 'name':
      return lookup(env, e.name);
    case 'list':
      return e.items.map((x) => evalExpr(x, env));
    case 'unary': {
      const v = evalExpr(e.e, env);
      return e.op === 'not' ? !truthy(v) : -num(v);
    }
    case 'bin': {
      if (e.op === 'and') {
        const a = evalExpr(e.a, env);
        return truthy(a) ? evalExpr(e.b, env) : a;
      }
      if (e.op === 'or') {
        const a = evalExpr(e.a, env);
        return truthy(a) ? a : evalExpr(e.b, env);
      }
      return binary(e.op, evalExpr(e.a, env), evalExpr(e.b, env));
    }
    case 'call': {
      const args = e.args.map((x) => evalExpr(x, env));
      return builtin(e.fn, args);
    }
    case 'index': {
      const xs = evalExpr(e.e, env);
      if (!Array.isArray(xs)) throw new PyError(`cannot index ${show(xs)}`);
      let i = num(evalExpr(e.i, env));
      if (i < 0) i += xs.length;
      if (i < 0 || i >= xs.length) throw new PyError('index out of range');
      return xs[i];
    }
    case 'slice': {
      const xs = evalExpr(e.e, env);
      if (!Array.isArray(xs)) throw new PyError(`cannot slice ${show(xs)}`);
      const lo = e.lo === null ? undefined : num(evalExpr(e.lo, env));
      const hi = e.hi === null ? undefined : num(evalExpr(e.hi, env));
      return xs.slice(lo, hi);
    }
  }
}

function builtin(fn: string, args: Value[]): Value {
  switch (fn) {
    case 'len': {
      const xs = args[0];
      if (!Array.isArray(xs)) throw new PyError(`len of ${show(xs)}`);
      return xs.length;
    }
    case 'range': {
      const [lo, hi] = args.length === 1 ? [0, num(args[0])] : [num(args[0]), num(args[1])];
      const out: number[] = [];
      for (let i = lo; i < hi; i++) out.push(i);
      return out;
    }
    case 'abs':
      return Math.abs(num(args[0]));
    case 'min':
    case 'max': {
      const xs = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
      if (xs.length === 0) throw new PyError(`${fn} of an empty sequence`);
      const ns = xs.map(num);
      return fn === 'min' ? Math.min(...ns) : Math.max(...ns);
    }
  }
  throw new PyError(`name '${fn}' is not defined`);
}

/** Python-like equality (deep for lists). */
export function equal(a: Value, b: Value): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => equal(x, b[i]));
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return a !== null && b !== null && num(a) === num(b);
  return a === b;
}

/** Python-like rendering of a value. */
export function show(v: Value): string {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  return String(v);
}
