/**
 * Readers of trainers' dump files: each turns one parsed JSONL record into normalised samples
 * (sample.ts), or into a Rejection naming the line, the field, what was expected and what was found.
 *
 * - nemo-rl: `train_data_step{N}.jsonl`, one sample per line, every value wrapped in a one-element
 *   list by `log_batched_dict_as_jsonl` and the token arrays right-padded to the batch's longest.
 * - prime-rl: `rollouts/step_{N}/{train|eval}/{all|effective}/traces.jsonl`, one verifiers
 *   `Episode.to_record()` per line: traces of message nodes, each adding `token_ids` with a `mask`.
 * - episode-lab: Episode Lab's own `episodes.jsonl` (gym/trajectory-json.ts).
 * - jsonl: the documented token-level JSONL: `ids`, `loss_mask` and optional per-token arrays [T].
 */
import * as v from 'valibot';
import { fail, ok, type Result } from '../schema.js';
import {
  type ChatMessage,
  type DumpFormat,
  type DumpSample,
  describeValue,
  type LengthIssue,
  type Read,
  type Rejection,
} from './sample.js';

/** The fields each format is recognised by (for detection and for error messages). */
export const FORMAT_FIELDS: Record<DumpFormat, string> = {
  'nemo-rl': 'token_ids, token_loss_mask (and input_lengths, advantages, generation_logprobs, prev_logprobs)',
  'prime-rl': 'traces[].nodes[] with token_ids, mask, logprobs (a verifiers Episode record)',
  'episode-lab': 'v, ids, owner, tokens, actionMask, logps',
  jsonl: 'ids, loss_mask (and logprobs, trainer_logprobs, advantages, reward, messages)',
};

/** Which format a parsed record is in, or a message naming the expected and the found fields. */
export function detectFormat(record: unknown): Result<DumpFormat, string> {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return fail(`expected a JSON object per line, found ${describeValue(record)}`);
  const has = (k: string) => k in record;
  if (has('token_ids') && has('token_loss_mask')) return ok('nemo-rl');
  if (
    Array.isArray((record as { traces?: unknown }).traces) ||
    Array.isArray((record as { nodes?: unknown }).nodes)
  )
    return ok('prime-rl');
  if (has('v') && has('actionMask') && has('owner')) return ok('episode-lab');
  if (has('ids') && has('loss_mask')) return ok('jsonl');
  const expected = Object.entries(FORMAT_FIELDS)
    .map(([f, fields]) => `${f} (${fields})`)
    .join('; ');
  return fail(
    `unknown format: found fields ${Object.keys(record).join(', ') || '(none)'}; expected one of: ${expected}`,
  );
}

type Reader = (record: unknown, index: number) => Read<DumpSample[]>;

/** The reader of a format: `(parsed record, line index) -> Result<samples>`. */
export function readerFor(format: DumpFormat): Reader {
  return { 'nemo-rl': readNemoRl, 'prime-rl': readPrimeRl, 'episode-lab': readEpisodeLab, jsonl: readJsonl }[
    format
  ];
}

/** Parse one JSONL line of a format into samples; a bad line is a Rejection, never a throw. */
export function parseRecord(format: DumpFormat, text: string, index: number): Read<DumpSample[]> {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (e) {
    return fail({
      record: index,
      field: '',
      expected: 'a JSON object',
      found: `invalid JSON (${(e as Error).message})`,
    });
  }
  return readerFor(format)(record, index);
}

// --- schema helpers ---------------------------------------------------------------------------

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** A valibot schema of an array of finite numbers (checked with one loop, fast on long arrays). */
const numbers = v.custom<number[]>(
  (x) => Array.isArray(x) && x.every(isNum),
  (issue) => `an array of numbers, found ${whatIsWrong(issue.input, isNum)}`,
);
/** An array of finite numbers or nulls. */
const numbersOrNull = v.custom<(number | null)[]>(
  (x) => Array.isArray(x) && x.every((y) => y === null || isNum(y)),
  (issue) => `an array of numbers or nulls, found ${whatIsWrong(issue.input, (y) => y === null || isNum(y))}`,
);
const bools = v.custom<(boolean | number)[]>(
  (x) => Array.isArray(x) && x.every((y) => typeof y === 'boolean' || y === 0 || y === 1),
  (issue) =>
    `an array of booleans, found ${whatIsWrong(issue.input, (y) => typeof y === 'boolean' || y === 0 || y === 1)}`,
);

function whatIsWrong(x: unknown, good: (y: unknown) => boolean): string {
  if (!Array.isArray(x)) return describeValue(x);
  const i = x.findIndex((y) => !good(y));
  return `element ${i} is ${describeValue(x[i])}`;
}

/** Turn the first valibot issue into a Rejection naming the field path. */
function reject(index: number, issues: readonly v.BaseIssue<unknown>[]): Rejection {
  const issue = issues[0];
  const field = (issue.path ?? []).map((p) => String(p.key)).join('.');
  if (issue.received === 'undefined')
    return { record: index, field, expected: 'this field', found: 'nothing' };
  const m = /^(.*), found (.*)$/s.exec(issue.message);
  if (m) return { record: index, field, expected: m[1], found: m[2] };
  return { record: index, field, expected: issue.expected ?? 'a valid value', found: issue.received };
}

function parse<S extends v.GenericSchema>(schema: S, x: unknown, index: number): Read<v.InferOutput<S>> {
  const r = v.safeParse(schema, x, { abortEarly: true });
  return r.success ? ok(r.output) : fail(reject(index, r.issues));
}

/** `[[x]] -> [x]`, `[x] -> x` for scalars: NeMo-RL wraps every value of a line in a one-element list. */
function unwrap(x: unknown, depth: 'array' | 'scalar'): unknown {
  if (depth === 'array') return Array.isArray(x) && x.length === 1 && Array.isArray(x[0]) ? x[0] : x;
  return Array.isArray(x) && x.length === 1 ? x[0] : x;
}

function lengthIssue(name: string, length: number, T: number, wanted = 'ids'): LengthIssue[] {
  return length === T
    ? []
    : [{ what: `"${name}" has ${length} values for ${T} ${wanted}`, position: length < T ? length : null }];
}

// --- NeMo-RL ----------------------------------------------------------------------------------

const NemoRl = v.object({
  token_ids: numbers,
  token_loss_mask: numbers,
  input_lengths: v.optional(v.number()),
  advantages: v.optional(numbers),
  generation_logprobs: v.optional(numbersOrNull),
  prev_logprobs: v.optional(numbersOrNull),
  rewards: v.optional(v.number()),
  idx: v.optional(v.number()),
});

function readNemoRl(record: unknown, index: number): Read<DumpSample[]> {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    return fail({ record: index, field: '', expected: 'a JSON object', found: describeValue(record) });
  const o = record as Record<string, unknown>;
  const flat: Record<string, unknown> = {};
  for (const k of ['token_ids', 'token_loss_mask', 'advantages', 'generation_logprobs', 'prev_logprobs'])
    if (o[k] !== undefined) flat[k] = unwrap(o[k], 'array');
  for (const k of ['input_lengths', 'rewards', 'idx'])
    if (o[k] !== undefined) flat[k] = unwrap(o[k], 'scalar');
  const r = parse(NemoRl, flat, index);
  if (!r.ok) return r;
  const x = r.value;
  const padded = x.token_ids.length;
  if (
    x.input_lengths !== undefined &&
    (!Number.isInteger(x.input_lengths) || x.input_lengths > padded || x.input_lengths < 0)
  )
    return fail({
      record: index,
      field: 'input_lengths',
      expected: `an integer from 0 to ${padded} (the length of token_ids)`,
      found: String(x.input_lengths),
    });
  const T = x.input_lengths ?? padded;
  const issues: LengthIssue[] = [];
  for (const k of ['token_loss_mask', 'advantages', 'generation_logprobs', 'prev_logprobs'] as const) {
    const a = x[k];
    if (a && a.length !== padded)
      issues.push({
        what: `"${k}" has ${a.length} values for ${padded} token_ids (padded; ${T} real)`,
        position: a.length < T ? a.length : null,
      });
  }
  const cut = <E>(a: E[] | undefined) => a?.slice(0, T);
  return ok([
    {
      record: index,
      offset: 0,
      ids: x.token_ids.slice(0, T),
      lossMask: x.token_loss_mask.slice(0, T),
      samplerLogprobs: cut(x.generation_logprobs),
      trainerLogprobs: cut(x.prev_logprobs),
      advantages: cut(x.advantages),
      reward: x.rewards,
      lengthIssues: issues,
    },
  ]);
}

// --- prime-rl / verifiers ---------------------------------------------------------------------

const Node = v.object({
  parent: v.optional(v.nullable(v.number())),
  message: v.optional(v.unknown()),
  sampled: v.optional(v.boolean()),
  token_ids: numbers,
  mask: bools,
  is_content: v.optional(bools),
  logprobs: v.optional(numbers),
  advantages: v.optional(v.nullable(numbers)),
});
const Trace = v.object({
  nodes: v.array(Node),
  tools: v.optional(v.array(v.unknown())),
  rewards: v.optional(
    v.record(v.string(), v.nullable(v.object({ score: v.number(), weight: v.optional(v.number()) }))),
  ),
});
const Episode = v.object({
  traces: v.array(Trace),
  run: v.optional(v.unknown()),
});

type TraceT = v.InferOutput<typeof Trace>;
type NodeT = v.InferOutput<typeof Node>;

function readPrimeRl(record: unknown, index: number): Read<DumpSample[]> {
  const isTrace = typeof record === 'object' && record !== null && 'nodes' in record && !('traces' in record);
  const r = isTrace ? parse(Trace, record, index) : parse(Episode, record, index);
  if (!r.ok) return r;
  const traces: TraceT[] = isTrace ? [r.value as TraceT] : (r.value as v.InferOutput<typeof Episode>).traces;
  const work = (record as { run?: { work?: { step?: unknown } } }).run?.work;
  const step = typeof work?.step === 'number' ? work.step : undefined;
  const samples: DumpSample[] = [];
  let offset = 0;
  traces.forEach((trace, t) => {
    const reward = trace.rewards
      ? Object.values(trace.rewards).reduce((s, w) => s + (w ? w.score * (w.weight ?? 1) : 0), 0)
      : undefined;
    const tools = trace.tools?.map((tool) => ({ type: 'function', function: tool }));
    let previous: DumpSample['previous'];
    branches(trace).forEach((path, b) => {
      const s = branchSample(trace.nodes, path, index, offset, `trace ${t} branch ${b}`);
      s.reward = reward;
      s.step = step;
      if (tools?.length) s.tools = tools;
      s.previous = previous;
      previous = { offset: s.offset, ids: s.ids, part: s.part };
      samples.push(s);
      offset += s.ids.length;
    });
  });
  return ok(samples);
}

/** Root-to-leaf node paths of a trace, one per leaf, in leaf order (verifiers' Trace.branches). */
function branches(trace: TraceT): number[][] {
  const hasChild = new Set(trace.nodes.map((n) => n.parent).filter((p): p is number => p != null));
  const paths: number[][] = [];
  for (let leaf = 0; leaf < trace.nodes.length; leaf++) {
    if (hasChild.has(leaf)) continue;
    const path: number[] = [];
    const seen = new Set<number>();
    for (let n: number | null | undefined = leaf; n != null && !seen.has(n) && trace.nodes[n]; ) {
      seen.add(n);
      path.push(n);
      n = trace.nodes[n].parent;
    }
    paths.push(path.reverse());
  }
  return paths;
}

function branchSample(
  nodes: NodeT[],
  path: number[],
  index: number,
  offset: number,
  part: string,
): DumpSample {
  const ids: number[] = [];
  const lossMask: number[] = [];
  const samplerLogprobs: (number | null)[] = [];
  const advantages: number[] = [];
  const nodeStarts: number[] = [];
  const nodeSampled: boolean[] = [];
  const messages: ChatMessage[] = [];
  const lengthIssues: LengthIssue[] = [];
  let anyAdvantages = false;
  for (const n of path) {
    const node = nodes[n];
    const start = ids.length;
    nodeStarts.push(start);
    nodeSampled.push(node.sampled ?? false);
    const msg = toChatMessage(node.message);
    if (msg) messages.push(msg);
    ids.push(...node.token_ids);
    const mask: number[] = node.mask.map((m) => (m === true || m === 1 ? 1 : 0));
    if (mask.length !== node.token_ids.length)
      lengthIssues.push({
        what: `node ${n}: "mask" has ${mask.length} values for ${node.token_ids.length} token_ids`,
        position: start + Math.min(mask.length, node.token_ids.length),
      });
    for (let i = 0; i < node.token_ids.length; i++) lossMask.push(mask[i] ?? 0);
    const trained = mask.slice(0, node.token_ids.length).reduce((s, m) => s + m, 0);
    const spread = (
      values: number[] | null | undefined,
      name: string,
      out: (number | null)[],
      fill: number | null,
    ) => {
      if (values && values.length !== trained && !(values.length === 0 && name === 'logprobs'))
        lengthIssues.push({
          what: `node ${n}: "${name}" has ${values.length} values for ${trained} masked tokens`,
          position: start,
        });
      let k = 0;
      for (let i = 0; i < node.token_ids.length; i++)
        out.push(mask[i] && values && k < values.length ? values[k++] : fill);
    };
    spread(node.logprobs, 'logprobs', samplerLogprobs, null);
    if (node.advantages) anyAdvantages = true;
    spread(node.advantages, 'advantages', advantages as (number | null)[], 0);
  }
  return {
    record: index,
    offset,
    part,
    ids,
    lossMask,
    samplerLogprobs,
    advantages: anyAdvantages ? advantages : undefined,
    messages: messages.length === path.length ? messages : undefined,
    nodeStarts,
    nodeSampled,
    lengthIssues,
  };
}

/** A verifiers message (tool calls `{id, name, arguments}`) in the HF chat-template shape. */
function toChatMessage(m: unknown): ChatMessage | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const o = m as Record<string, unknown>;
  if (typeof o.role !== 'string') return undefined;
  const text = (c: unknown): string | null =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c
            .filter((p) => p && (p as { type?: string }).type === 'text')
            .map((p) => (p as { text?: string }).text ?? '')
            .join('\n')
        : null;
  const out: ChatMessage = { role: o.role, content: text(o.content) ?? '' };
  if (typeof o.reasoning_content === 'string') out.reasoning_content = o.reasoning_content;
  if (Array.isArray(o.tool_calls))
    out.tool_calls = o.tool_calls.map((c) => {
      const call = c as Record<string, unknown>;
      return 'function' in call
        ? call
        : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
    });
  if (typeof o.tool_call_id === 'string') out.tool_call_id = o.tool_call_id;
  if (typeof o.name === 'string') out.name = o.name;
  return out;
}

// --- Episode Lab's own episodes.jsonl ---------------------------------------------------------

const EpisodeLab = v.object({
  v: v.literal(1),
  ids: numbers,
  owner: numbers,
  tokens: v.array(v.string()),
  actionMask: numbers,
  logps: numbers,
  curLogps: v.optional(numbers),
  advantages: v.optional(numbers),
  reward: v.optional(v.number()),
  step: v.optional(v.number()),
  group: v.optional(v.number()),
});

/** [T-1] values for ids[1..] -> [T] values for ids[0..] (`first` at position 0). */
function perToken<E>(xs: E[], T: number, first: E): E[] {
  const out: E[] = [first];
  for (let i = 0; i < T - 1; i++) out.push(i < xs.length ? xs[i] : first);
  return out;
}

function readEpisodeLab(record: unknown, index: number): Read<DumpSample[]> {
  const r = parse(EpisodeLab, record, index);
  if (!r.ok) return r;
  const x = r.value;
  const T = x.ids.length;
  const issues: LengthIssue[] = [
    ...lengthIssue('owner', x.owner.length, T),
    ...lengthIssue('tokens', x.tokens.length, T),
  ];
  for (const k of ['actionMask', 'logps', 'curLogps', 'advantages'] as const) {
    const a = x[k];
    if (a && a.length !== T - 1)
      issues.push({
        what: `"${k}" has ${a.length} values for ${T} ids (expected ${T - 1})`,
        position: a.length < T - 1 ? a.length + 1 : null,
      });
  }
  const lossMask = perToken(x.actionMask, T, 0);
  const lp = (xs: number[]) => perToken<number | null>(xs, T, null).map((p, i) => (lossMask[i] ? p : null));
  return ok([
    {
      record: index,
      offset: 0,
      ids: x.ids,
      lossMask,
      samplerLogprobs: lp(x.logps),
      trainerLogprobs: x.curLogps ? lp(x.curLogps) : undefined,
      advantages: x.advantages ? perToken(x.advantages, T, 0) : undefined,
      owner: x.owner.slice(0, T),
      tokens: x.tokens,
      reward: x.reward,
      step: x.step,
      group: x.group,
      lengthIssues: issues,
    },
  ]);
}

// --- the documented token-level JSONL ---------------------------------------------------------

const Message = v.looseObject({ role: v.string() });
const Jsonl = v.object({
  ids: numbers,
  loss_mask: numbers,
  logprobs: v.optional(numbersOrNull),
  trainer_logprobs: v.optional(numbersOrNull),
  ref_logprobs: v.optional(numbersOrNull),
  advantages: v.optional(numbers),
  reward: v.optional(v.number()),
  messages: v.optional(v.array(Message)),
  tools: v.optional(v.array(v.unknown())),
  step: v.optional(v.number()),
  group: v.optional(v.number()),
  episode: v.optional(v.union([v.string(), v.number()])),
});

function readJsonl(record: unknown, index: number): Read<DumpSample[]> {
  const r = parse(Jsonl, record, index);
  if (!r.ok) return r;
  const x = r.value;
  const T = x.ids.length;
  const issues: LengthIssue[] = [];
  for (const k of ['loss_mask', 'logprobs', 'trainer_logprobs', 'ref_logprobs', 'advantages'] as const) {
    const a = x[k];
    if (a) issues.push(...lengthIssue(k, a.length, T));
  }
  return ok([
    {
      record: index,
      offset: 0,
      ids: x.ids,
      lossMask: x.loss_mask.slice(0, T),
      samplerLogprobs: x.logprobs?.slice(0, T),
      trainerLogprobs: x.trainer_logprobs?.slice(0, T),
      advantages: x.advantages?.slice(0, T),
      reward: x.reward,
      step: x.step,
      group: x.group,
      messages: x.messages as ChatMessage[] | undefined,
      tools: x.tools,
      episode: x.episode,
      lengthIssues: issues,
    },
  ]);
}
