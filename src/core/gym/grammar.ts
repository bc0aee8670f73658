/**
 * The gym's text grammar, with no interpreter behind it: special tokens, tools and operations, how
 * text splits into words, how a call parses, and the token pattern each bug leaves in a source
 * (what `inferOp` reads). The webview uses it, so it must stay free of the Python interpreter.
 */

export const PAD = '<pad>';
export const CALL_START = '<call>';
export const CALL_END = '</call>';
export const OBS_START = '<obs>';
export const OBS_END = '</obs>';
export const NEWLINE = '\n';

export const SPECIAL_TOKENS = [PAD, CALL_START, CALL_END, OBS_START, OBS_END, NEWLINE] as const;
export const TOOLS = ['read', 'edit', 'test', 'submit'] as const;
export type Tool = (typeof TOOLS)[number];

export const OPS = ['fix_comparison', 'fix_off_by_one', 'fix_operator', 'fix_return', 'fix_init'] as const;
export type Op = (typeof OPS)[number];

export function isOp(x: string): x is Op {
  return (OPS as readonly string[]).includes(x);
}

/** Split text into words: whitespace separates, `\n` is a word. */
export function splitWords(text: string): string[] {
  return text
    .replace(/\n/g, ' \n ')
    .split(/ +/)
    .filter((t) => t !== '');
}

/** The kind of a parsed call. */
export type ParsedCall =
  | { ok: true; tool: Tool; op?: Op }
  | { ok: false; error: 'malformed call' | 'unknown tool' | 'unknown op' };

/** Parse one call's text. */
export function parseCall(actionText: string): ParsedCall {
  const t = splitWords(actionText);
  if (t.length < 3 || t[0] !== CALL_START || t[t.length - 1] !== CALL_END)
    return { ok: false, error: 'malformed call' };
  const inner = t.slice(1, -1);
  if (inner.includes(CALL_START) || inner.includes(CALL_END)) return { ok: false, error: 'malformed call' };
  const tool = inner[0];
  if (!(TOOLS as readonly string[]).includes(tool)) return { ok: false, error: 'unknown tool' };
  if (tool === 'edit') {
    if (inner.length !== 2) return { ok: false, error: 'malformed call' };
    if (!isOp(inner[1])) return { ok: false, error: 'unknown op' };
    return { ok: true, tool, op: inner[1] };
  }
  if (inner.length !== 1) return { ok: false, error: 'malformed call' };
  return { ok: true, tool: tool as Tool };
}

/** The operation that fixes a compact source, from the token pattern its bug leaves (null: none). */
export function inferOpOfWords(t: readonly string[]): Op | null {
  if (t.includes('None')) return 'fix_return';
  if (t.includes('>=') || t.includes('<=')) return 'fix_comparison';
  if (t.includes('-=')) return 'fix_operator';
  for (let i = 0; i + 2 < t.length; i++)
    if (t[i] === '[' && t[i + 1] === '1' && t[i + 2] === ':') return 'fix_off_by_one';
  for (let i = 0; i + 2 < t.length; i++)
    if (t[i] === '=' && t[i + 1] === '-' && t[i + 2] === '1') return 'fix_init';
  return null;
}
