/**
 * Word-level tokenizer of the BugFix gym. Text is a sequence of space-separated tokens, with the
 * newline `\n` a token of its own. The vocabulary is built from the tasks plus every token the
 * tools, calls and renaming can produce, in a fixed order, so that the same tasks give the same ids.
 */
import {
  CALL_END,
  CALL_START,
  NEWLINE,
  OBS_END,
  OBS_START,
  OPS,
  PAD,
  SPECIAL_TOKENS,
  splitWords,
  TOOLS,
} from './grammar.js';
import { compactSource, FUNCTION_NAMES, SYMPTOMS, type Task, VARIABLE_NAMES } from './tasks.js';

export {
  CALL_END,
  CALL_START,
  NEWLINE,
  OBS_END,
  OBS_START,
  PAD,
  SPECIAL_TOKENS,
  TOOLS,
  type Tool,
} from './grammar.js';

/** Words the tools write in observations (results, errors, the remaining budget). */
export const TOOL_WORDS = [
  'ok',
  'PASS',
  'FAIL',
  'error',
  'malformed',
  'call',
  'unknown',
  'tool',
  'op',
  'budget',
  'turns',
  'left',
  '...',
] as const;

export const DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'] as const;

export class TokenizerError extends Error {}

export interface TokenizerJSON {
  vocab: string[];
}

export class Tokenizer {
  readonly itos: readonly string[];
  readonly stoi: ReadonlyMap<string, number>;
  readonly padId: number;
  readonly callStartId: number;
  readonly callEndId: number;
  readonly obsStartId: number;
  readonly obsEndId: number;
  readonly newlineId: number;

  constructor(vocab: readonly string[]) {
    const seen = new Set<string>();
    for (const t of vocab) {
      if (seen.has(t)) throw new TokenizerError(`duplicate token '${t}' in the vocabulary`);
      seen.add(t);
    }
    for (const s of SPECIAL_TOKENS)
      if (!seen.has(s)) throw new TokenizerError(`the vocabulary lacks the special token '${s}'`);
    this.itos = vocab.slice();
    this.stoi = new Map(vocab.map((t, i) => [t, i]));
    this.padId = this.id(PAD);
    this.callStartId = this.id(CALL_START);
    this.callEndId = this.id(CALL_END);
    this.obsStartId = this.id(OBS_START);
    this.obsEndId = this.id(OBS_END);
    this.newlineId = this.id(NEWLINE);
  }

  get size(): number {
    return this.itos.length;
  }

  /** The id of one token; a clear error for a token outside the vocabulary. */
  id(token: string): number {
    const i = this.stoi.get(token);
    if (i === undefined)
      throw new TokenizerError(
        `unknown token '${token === '\n' ? '\\n' : token}': it is not in the vocabulary of ${this.itos.length} tokens ` +
          `built from the tasks (identifiers must come from the renaming pools, code tokens from the task sources)`,
      );
    return i;
  }

  /** Split text into tokens: whitespace separates, `\n` is a token. */
  static split(text: string): string[] {
    return splitWords(text);
  }

  encode(text: string): number[] {
    return Tokenizer.split(text).map((t) => this.id(t));
  }

  /** Token texts joined by spaces (a newline token stands alone). */
  decode(ids: readonly number[]): string {
    return ids
      .map((i) => this.token(i))
      .join(' ')
      .replace(/ \n /g, '\n');
  }

  token(id: number): string {
    const t = this.itos[id];
    if (t === undefined)
      throw new TokenizerError(`token id ${id} is outside the vocabulary (size ${this.size})`);
    return t;
  }

  toJSON(): TokenizerJSON {
    return { vocab: this.itos.slice() };
  }

  static fromJSON(json: TokenizerJSON): Tokenizer {
    if (!json || !Array.isArray(json.vocab) || !json.vocab.every((t) => typeof t === 'string'))
      throw new TokenizerError('a tokenizer needs {"vocab": [string, ...]}');
    return new Tokenizer(json.vocab);
  }

  /** True when both tokenizers map every token to the same id. */
  sameAs(other: Tokenizer): boolean {
    return this.size === other.size && this.itos.every((t, i) => other.itos[i] === t);
  }
}

/**
 * Build the vocabulary from tasks: special tokens, tools, operations, tool words, digits, the
 * renaming pools, then every token of the tasks' issues and sources, in order of first appearance.
 */
export function buildTokenizer(tasks: readonly Task[]): Tokenizer {
  const vocab: string[] = [];
  const seen = new Set<string>();
  const add = (t: string) => {
    if (!seen.has(t)) {
      seen.add(t);
      vocab.push(t);
    }
  };
  [...SPECIAL_TOKENS, ...TOOLS, ...OPS, ...TOOL_WORDS, ...DIGITS].forEach(add);
  [...FUNCTION_NAMES, ...VARIABLE_NAMES].forEach(add);
  for (const s of SYMPTOMS) Tokenizer.split(s).forEach(add);
  for (const task of tasks) {
    Tokenizer.split(task.issue).forEach(add);
    Tokenizer.split(compactSource(task.source)).forEach(add);
  }
  return new Tokenizer(vocab);
}
