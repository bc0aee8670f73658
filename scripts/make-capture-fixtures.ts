/**
 * Make the skyrl-capture fixtures in test/fixtures/dumps/skyrl-capture/ (`npm run fixtures:capture`):
 * what SkyRL's token capture proxy writes when a Qwen3 model serves an agent, rendered with the real
 * Qwen3 chat template and tokenizer (QWEN3_DIR). Followed, file by file (NovaSky-AI/SkyRL
 * `skyrl-capture/`, read at the commits named; PrimeIntellect-ai/renderers @ 0b0e61e for Qwen3):
 *
 * - the proxy's turn (tito/proxy.py @ ddc0bb7, `_execute_turn`): match the request's messages in
 *   message space, bridge from the previous call's exact prompt + completion when the matched prefix
 *   ends at one (`renderer.bridge`, its indices shifted by the matched count), else render in full;
 *   the completion is what the engine sampled, its end token `<|im_end|>` included, or cut at
 *   max_tokens without it (`completion_reason` `length`);
 * - the renderer (tito/renderer.py @ 5a91f21 `PrimeRenderer` over renderers' `Qwen3Renderer`,
 *   renderers/qwen3.py): a full render gives every token of a message's block (`<|im_start|>role\n`
 *   ... `<|im_end|>\n`) to that message and the generation prompt `<|im_start|>assistant\n` to none
 *   (-1); a bridge keeps the previous prompt + completion (`trim_to_turn_close`, which appends a
 *   `<|im_end|>` to a completion cut at max_tokens), then `\n` (-1), each new message's block
 *   (`_render_tool` for tool results: `<|im_start|>user` before the first of a run, `<|im_end|>\n`
 *   after the last) and the generation prompt (-1). The text is rendered with the real template and
 *   tokenised whole for the first turn; a bridge's pieces are tokenised one emit at a time, as the
 *   renderer does;
 * - the trace (tito/trace.py @ 5a91f21): `attribute_prompt_tokens` gives scaffold (-1) to the
 *   message after it, so a message's node starts with the `\n` (or the `<|im_end|>\n`) that closed the
 *   reply before it, and the trailing generation prompt is the assistant node's scaffold, before
 *   `sampled_start`; `TokenNode` gives `sampled_mask` False before `sampled_start` and True after,
 *   `logprobs` 0.0 where nothing was sampled; an identical child is reused (a resample of the same
 *   messages forks at the assistant); node ids are ULID-like (ids.py @ ddc0bb7) so they sort by time;
 * - the record folder (persistence/layout.py @ 5a91f21): `manifest.json` (indent 2),
 *   `committed/<blake2b(id, digest_size=1)>/<id>.json.zst` (`record_document`, committed.py @
 *   ddc0bb7, nodes by `node_document`, journal.py @ ddc0bb7, in `(depth, id)` order: compile.py) and
 *   `<id>.head.json` (headers.py @ ddc0bb7, indent 2); the shard is Python's
 *   `hashlib.blake2b(..., digest_size=1)` (python3 is called for it: Node's crypto has no BLAKE2b
 *   of another length);
 * - the exports (export/formats.py @ 5a91f21 `token_sample_records`, `graph_records`; service.py @
 *   ddc0bb7): `token-samples.jsonl` (what `skyrl-capture export --format token-samples --output`
 *   writes for the project), the same rows zstd-compressed as the artifact
 *   `exports/artifacts/<export_id>/golden-token_samples.jsonl.zst` with its job record, and one
 *   trajectory's `graph` artifact.
 * Compressed with the system `zstd` at level 6 (`zstandard.ZstdCompressor(level=6)`, compression.py
 * @ 5a91f21). The hashes (`message_hash`, `delta_hash`, `context_hash`: domain/hashing.py, not read)
 * are sha256 over compact JSON here; no reader uses them. Numbers are written as JSON.stringify writes
 * them (`1` where orjson writes `1.0`), which every JSON reader reads alike.
 *
 * `buggy/` is a record folder whose one trajectory has its tool result's `sampled_mask` set (a
 * writer that trains tool output), and `token-samples-buggy.jsonl` the same as an export row;
 * `expected.json` names the positions mask-on-tool must report in each.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ChatMessage, type DumpTokenizer, loadTokenizerDir } from '../src/core/dumps/index.js';
import { Rng } from '../src/core/rng.js';
import { QWEN3_DIR } from './make-dump-fixtures.js';

export const CAPTURE_DIR = path.join(__dirname, '..', 'test', 'fixtures', 'dumps', 'skyrl-capture');
const TOKENIZER = 'Qwen/Qwen3-8B';
const MODEL = 'qwen3-8b';
const T0 = Date.parse('2026-05-04T10:00:00Z');

type Msg = Record<string, unknown> & { role: string };
interface Rendered {
  ids: number[];
  indices: number[];
  reused: number;
}
interface TNode {
  id: string;
  parent: string | null;
  message: Msg;
  tokens: number[];
  sampledStart: number | null;
  logprobs: number[];
  depth: number;
  exchange: string;
  cumulative: number;
}
interface Exchange {
  id: string;
  sequence: number;
  output: string;
  inputLeaf: string | null;
  parentOutput: string | null;
  finish: string;
  prompt: number[];
  indices: number[];
  reused: number;
  completion: number[];
  logprobs: number[];
  tools: unknown[] | null;
  messages: Msg[];
  bridge: number | null;
  matched: number;
  created: string[];
  reusedNodes: string[];
  at: number;
}

/** Keys sorted at every level: the canonical form skyrl-capture stores messages in (its golden outputs show it). */
function canonical(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(canonical);
  if (x && typeof x === 'object')
    return Object.fromEntries(
      Object.keys(x)
        .sort()
        .map((k) => [k, canonical((x as Record<string, unknown>)[k])]),
    );
  return x;
}
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const hashOf = (m: unknown) => sha(JSON.stringify(canonical(m)));
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** An id as ids.py makes one: `<prefix>_` + 26 Crockford base32 characters (48-bit ms time, 80 random bits). */
function ulid(prefix: string, ms: number, rng: Rng): string {
  let t = '';
  let x = ms;
  for (let i = 0; i < 10; i++) {
    t = CROCKFORD[x % 32] + t;
    x = Math.floor(x / 32);
  }
  let r = '';
  for (let i = 0; i < 16; i++) r += CROCKFORD[rng.int(32)];
  return `${prefix}_${t}${r}`;
}

/** The Qwen3 renderer of renderers/qwen3.py over our tokenizer (module comment). */
class Qwen3Renderer {
  readonly imStart: number;
  readonly imEnd: number;
  constructor(readonly tok: DumpTokenizer) {
    const id = (t: string) => {
      const x = tok.id(t);
      if (x === undefined) throw new Error(`no ${t} in the tokenizer`);
      return x;
    };
    this.imStart = id('<|im_start|>');
    this.imEnd = id('<|im_end|>');
  }

  /** A full render with the generation prompt: every token of a message's block to it, the generation prompt to -1. */
  render(messages: Msg[], tools: unknown[] | null): Rendered {
    const r = this.tok.render(messages as unknown as ChatMessage[], {
      tools: tools ?? undefined,
      addGenerationPrompt: true,
    });
    if (!r.ok) throw new Error(r.error);
    const text = r.value;
    const starts: number[] = [];
    for (let at = text.indexOf('<|im_start|>'); at >= 0; at = text.indexOf('<|im_start|>', at + 1))
      starts.push(at);
    if (starts.length !== messages.length + 1 || messages.some((m) => m.role === 'tool'))
      throw new Error('a full render here is of system and user messages only, one block each');
    const ids = this.tok.encode(text);
    const indices: number[] = [];
    let c = 0;
    for (const id of ids) {
      const k = starts.filter((s) => s <= c).length - 1;
      indices.push(k >= messages.length ? -1 : k);
      c += this.tok.text(id).length;
    }
    if (c !== text.length) throw new Error('the token texts do not make up the rendering');
    return { ids, indices, reused: 0 };
  }

  /** `bridge_to_next_turn`: the previous prompt + completion kept (a close appended to a cut one), the new messages' blocks after. */
  bridge(prompt: number[], completion: number[], added: Msg[], shift: number): Rendered {
    const closed = completion.includes(this.imEnd);
    const previous = [...prompt, ...completion, ...(closed ? [] : [this.imEnd])];
    const ids = [...previous];
    const indices: number[] = new Array(previous.length - prompt.length - completion.length).fill(-1);
    const emit = (x: number | string, i: number) => {
      const piece = typeof x === 'number' ? [x] : this.tok.encode(x);
      ids.push(...piece);
      indices.push(...piece.map(() => (i < 0 ? -1 : i + shift)));
    };
    emit('\n', -1);
    added.forEach((m, i) => {
      const content = typeof m.content === 'string' ? m.content : '';
      if (m.role === 'tool') {
        if (added[i - 1]?.role !== 'tool') {
          emit(this.imStart, i);
          emit('user', i);
        }
        emit('\n', i);
        emit('<tool_response>', i);
        emit(`\n${content}\n`, i);
        emit('</tool_response>', i);
        if (added[i + 1]?.role !== 'tool') {
          emit(this.imEnd, i);
          emit('\n', i);
        }
      } else {
        emit(this.imStart, i);
        emit(`${m.role}\n${content}`, i);
        emit(this.imEnd, i);
        emit('\n', i);
      }
    });
    emit(this.imStart, -1);
    emit('assistant\n', -1);
    return { ids, indices, reused: prompt.length + completion.length };
  }
}

/** An assistant reply: its message (as the renderer parses it back) and the text the model samples. */
function reply(think: string, content: string, call?: { name: string; args: Record<string, unknown> }) {
  const callText = call
    ? `\n<tool_call>\n{"name": "${call.name}", "arguments": ${JSON.stringify(call.args)}}\n</tool_call>`
    : '';
  const text = `<think>\n${think}\n</think>\n\n${content}${callText}`;
  const message: Msg = { role: 'assistant', content, reasoning_content: think };
  if (call)
    message.tool_calls = [
      {
        id: `call_${sha(text).slice(0, 20)}_0`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      },
    ];
  return { message, text };
}

/** One trajectory's trace, as tito/trace.py keeps it, with its exchanges. */
class Trace {
  readonly nodes = new Map<string, TNode>();
  readonly exchanges: Exchange[] = [];
  private clock: number;
  constructor(
    readonly id: string,
    readonly r: Qwen3Renderer,
    readonly rng: Rng,
    start: number,
  ) {
    this.clock = start;
  }

  private children(parent: string | null): TNode[] {
    return [...this.nodes.values()].filter((n) => n.parent === parent);
  }

  /** `_longest_message_prefix`: the longest path from a root whose messages are the request's, the newest on a tie. */
  private matched(messages: Msg[]): TNode[] {
    let candidates: TNode[][] = [[]];
    let best: TNode[] = [];
    for (const m of messages) {
      const next: TNode[][] = [];
      for (const p of candidates)
        for (const n of this.children(p.length ? p[p.length - 1].id : null))
          if (hashOf(n.message) === hashOf(m)) next.push([...p, n]);
      if (!next.length) break;
      candidates = next;
      best = next.reduce((a, b) => (b[b.length - 1].id > a[a.length - 1].id ? b : a));
    }
    return best;
  }

  /** One call (tito/proxy.py `_execute_turn` + trace.py `commit`): the request's messages, the sampled reply, cut at `maxTokens` if given. */
  turn(messages: Msg[], tools: unknown[] | null, out: ReturnType<typeof reply>, maxTokens?: number): Msg {
    const matched = this.matched(messages);
    let bridgeAt = -1;
    for (let k = matched.length - 1; k >= 0 && bridgeAt < 0; k--)
      if (
        this.exchanges.some(
          (x) => x.output === matched[k].id && JSON.stringify(x.tools) === JSON.stringify(tools),
        )
      )
        bridgeAt = k;
    const bridge = bridgeAt >= 0 ? this.exchanges.findIndex((x) => x.output === matched[bridgeAt].id) : -1;
    let rendered: Rendered;
    let parent: TNode | undefined;
    let first: number;
    if (bridge >= 0 && messages.length > bridgeAt + 1) {
      const x = this.exchanges[bridge];
      rendered = this.r.bridge(x.prompt, x.completion, messages.slice(bridgeAt + 1), bridgeAt + 1);
      parent = matched[bridgeAt];
      first = bridgeAt + 1;
    } else {
      rendered = this.r.render(messages, tools);
      // `_longest_exact_prefix`: the matched nodes whose deltas prefix the rendered prompt
      let k = 0;
      let at = 0;
      while (k < matched.length && matched[k].tokens.every((t, i) => rendered.ids[at + i] === t)) {
        at += matched[k].tokens.length;
        k++;
      }
      parent = k ? matched[k - 1] : undefined;
      first = k;
      rendered = { ids: rendered.ids, indices: rendered.indices.slice(at), reused: at };
    }
    let completion = this.r.tok.encode(out.text);
    completion.push(this.r.imEnd);
    let finish = 'stop';
    if (maxTokens !== undefined && completion.length > maxTokens) {
      completion = completion.slice(0, maxTokens);
      finish = 'length';
    }
    const logprobs = completion.map(() => -Math.round(this.rng.float() * 15000) / 10000);
    return this.commit(
      messages,
      tools,
      rendered,
      parent,
      first,
      completion,
      logprobs,
      finish,
      out.message,
      bridge,
    );
  }

  /** `attribute_prompt_tokens` + the nodes (`TokenNode`), an identical child reused; the assistant message the client gets. */
  private commit(
    messages: Msg[],
    tools: unknown[] | null,
    rendered: Rendered,
    parent: TNode | undefined,
    first: number,
    completion: number[],
    logprobs: number[],
    finish: string,
    message: Msg,
    bridge: number,
  ): Msg {
    const tail = rendered.ids.slice(rendered.reused);
    const owners: (number | null)[] = new Array(tail.length).fill(null);
    let next: number | null = null;
    for (let p = tail.length - 1; p >= 0; p--) {
      const i = rendered.indices[p];
      if (i >= first) next = i;
      owners[p] = next;
    }
    const chunks: number[][] = messages.slice(first).map(() => []);
    const scaffold: number[] = [];
    tail.forEach((t, p) => {
      const o = owners[p];
      if (o === null) scaffold.push(t);
      else chunks[o - first].push(t);
    });
    this.clock += 1000 + this.rng.int(5000);
    const exchange = ulid('ex', this.clock, this.rng);
    const created: string[] = [];
    const reusedNodes: string[] = [];
    let at = parent;
    const add = (m: Msg, tokens: number[], sampledStart: number | null, lps: number[]): TNode => {
      const same = this.children(at?.id ?? null).find(
        (n) =>
          hashOf(n.message) === hashOf(m) &&
          n.sampledStart === sampledStart &&
          JSON.stringify(n.tokens) === JSON.stringify(tokens),
      );
      if (same) {
        reusedNodes.push(same.id);
        return same;
      }
      this.clock += 1;
      const n: TNode = {
        id: ulid('nd', this.clock, this.rng),
        parent: at?.id ?? null,
        message: canonical(m) as Msg,
        tokens,
        sampledStart,
        logprobs: lps,
        depth: at ? at.depth + 1 : 0,
        exchange,
        cumulative: (at?.cumulative ?? 0) + tokens.length,
      };
      this.nodes.set(n.id, n);
      created.push(n.id);
      return n;
    };
    chunks.forEach((c, k) => {
      at = add(
        messages[first + k],
        c,
        null,
        c.map(() => 0),
      );
    });
    const inputLeaf = at;
    const out = add(message, [...scaffold, ...completion], scaffold.length, [
      ...scaffold.map(() => 0),
      ...logprobs,
    ]);
    const parentOutput = parent && parent.sampledStart !== null ? parent.id : null;
    this.exchanges.push({
      id: exchange,
      sequence: this.exchanges.length,
      output: out.id,
      inputLeaf: inputLeaf?.id ?? null,
      parentOutput,
      finish,
      prompt: rendered.ids,
      indices: rendered.indices,
      reused: rendered.reused,
      completion,
      logprobs,
      tools,
      messages,
      bridge: bridge >= 0 ? bridge : null,
      matched: first,
      created,
      reusedNodes,
      at: this.clock,
    });
    return message;
  }
}

/** The tokenizer the fixtures are made with. */
export function qwen3(): DumpTokenizer {
  const t = loadTokenizerDir(QWEN3_DIR);
  if (!t.ok) throw new Error(t.error);
  return t.value;
}

/** Python's `hashlib.blake2b(id, digest_size=1).hexdigest()` for each id (layout.py's `shard`). */
export function shards(ids: string[]): Map<string, string> {
  const out = execFileSync('python3', [
    '-c',
    'import hashlib,sys;print(" ".join(hashlib.blake2b(i.encode("utf-8"),digest_size=1).hexdigest() for i in sys.argv[1:]))',
    ...ids,
  ])
    .toString()
    .trim()
    .split(' ');
  return new Map(ids.map((id, i) => [id, out[i]]));
}

/**
 * `bytes` zstd-compressed at level 6 by the system zstd (/usr/bin/zstd), from a file so that the
 * frame records its content size and without a checksum, as `ZstdCompressor(level=6).compress` writes it.
 */
export function zstd(bytes: Buffer | string): Buffer {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-zstd-'));
  try {
    const file = path.join(tmp, 'data');
    fs.writeFileSync(file, bytes);
    execFileSync('zstd', ['-6', '-q', '-f', '--no-check', file, '-o', `${file}.zst`]);
    return fs.readFileSync(`${file}.zst`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// --- documents --------------------------------------------------------------------------------

interface Meta {
  project: string;
  run: string | null;
  task: string | null;
  step: number | null;
  labels: string[];
  annotations: Record<string, unknown>;
}
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
const UPSTREAM = {
  type: 'tokens',
  url: 'http://127.0.0.1:8000/generate',
  model: MODEL,
  tokenizer: TOKENIZER,
};

/** `TokenNode.attach_text`: segments cut at the turn-start token and at `sampled_start`, offsets in UTF-16 units. */
function textSegments(tok: DumpTokenizer, ids: number[], ss: number | null, turnStart: number) {
  const cuts = new Set([0, ids.length]);
  ids.forEach((t, i) => {
    if (t === turnStart) cuts.add(i);
  });
  if (ss !== null) cuts.add(ss);
  const at = [...cuts].sort((a, b) => a - b);
  return at.slice(0, -1).map((a, k) => {
    const b = at[k + 1];
    const piece = ids.slice(a, b);
    const offsets = [0];
    for (const t of piece) offsets.push(offsets[offsets.length - 1] + tok.text(t).length);
    return { start: a, end: b, text: tok.decode(piece), offsets };
  });
}

/** `node_document` of a token node (graph.py's `GraphNode` fields, trace.py's `payload()`). */
function nodeDocument(t: Trace, n: TNode, contexts: Map<string, string>) {
  const ss = n.sampledStart;
  const delta = sha(`${hashOf(n.message)}|${JSON.stringify(n.tokens)}|${ss === null ? 'None' : ss}`);
  const context = sha(`${n.parent ? contexts.get(n.parent) : ''}${delta}`);
  contexts.set(n.id, context);
  const x = t.exchanges.find((e) => e.id === n.exchange);
  const content = n.message.content;
  const mask = n.tokens.map((_, i) => ss !== null && i >= ss);
  return {
    id: n.id,
    parent_id: n.parent,
    exchange_id: n.exchange,
    depth: n.depth,
    role: n.message.role,
    author: ss === null ? 'client' : 'model',
    message_hash: hashOf(n.message),
    delta_hash: delta,
    context_hash: context,
    content_block_count: content === null || content === undefined ? 0 : 1,
    char_count: typeof content === 'string' ? content.length : 0,
    token_count: n.tokens.length,
    sampled_start: ss,
    sampled_token_count: mask.filter((m) => m).length,
    has_logprobs: n.logprobs.some((v) => v !== 0),
    has_routed_experts: false,
    tokenizer: TOKENIZER,
    output_started_at: null,
    output_ended_at: ss === null || !x ? null : iso(x.at),
    inserted_at: x ? iso(x.at) : null,
    derivation: {
      renderer: `prime:${TOKENIZER}`,
      reused_prefix_length: x?.reused ?? 0,
      matched_message_count: x?.matched ?? 0,
      bridge_transition_id: x?.bridge ?? null,
      derivation_version: 2,
    },
    payload: {
      message: n.message,
      role: n.message.role,
      author: ss === null ? 'client' : 'model',
      message_hash: hashOf(n.message),
      tokens: {
        token_ids: n.tokens,
        sampled_mask: mask,
        logprobs: n.logprobs,
        sampled_start: ss,
        routed_experts: null,
        text_segments: textSegments(t.r.tok, n.tokens, ss, t.r.imStart),
        turn_start_token: t.r.imStart,
      },
    },
  };
}

/** The nodes in committed order, `(depth, id)` (compile.py, graph.py's `ordered`). */
const ordered = (t: Trace) =>
  [...t.nodes.values()].sort((a, b) => a.depth - b.depth || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** A committed record's exchange (committed.py `record_document`), its row with the columns the exporters read. */
function exchangeDocument(t: Trace, x: Exchange) {
  const request = { model: MODEL, messages: x.messages, ...(x.tools ? { tools: x.tools } : {}) };
  const out = t.nodes.get(x.output);
  const response = {
    id: `chatcmpl-${x.id}`,
    object: 'chat.completion',
    model: MODEL,
    choices: [{ index: 0, message: out?.message, finish_reason: x.finish }],
    usage: { prompt_tokens: x.prompt.length, completion_tokens: x.completion.length },
  };
  return {
    id: x.id,
    sequence: x.sequence,
    row: {
      id: x.id,
      trajectory_id: t.id,
      sequence: x.sequence,
      provider: 'tokens',
      model: MODEL,
      endpoint_kind: 'chat_completions',
      method: 'POST',
      path: '/v1/chat/completions',
      http_status: 200,
      streaming: false,
      completion_reason: x.finish,
      output_node_id: x.output,
      input_leaf_node_id: x.inputLeaf,
      parent_output_node_id: x.parentOutput,
      tools: x.tools,
      tools_hash: hashOf(x.tools ?? []),
      sampling: { logprobs: true },
      max_output_tokens: null,
      usage: { prompt_tokens: x.prompt.length, completion_tokens: x.completion.length },
      request_start_at: iso(x.at - 800),
      response_end_at: iso(x.at),
      duration_ms: 800,
      ttft_ms: 90,
      transport_error: null,
      provider_error: null,
    },
    delivery_confirmed: true,
    delivery_uncertain: false,
    request: { encoding: 'utf-8', data: JSON.stringify(request) },
    response: { encoding: 'utf-8', data: JSON.stringify(response) },
    chunks: null,
    tokens: {
      renderer: `prime:${TOKENIZER}`,
      tokenizer: TOKENIZER,
      model: MODEL,
      prompt_token_ids: x.prompt,
      prompt_message_indices: x.indices,
      reused_prefix_length: x.reused,
      prompt_token_count: x.prompt.length,
      completion_ids: x.completion,
      completion_logprobs: x.logprobs,
      stop_reason: x.finish,
      tools: x.tools,
      tools_hash: hashOf(x.tools ?? []),
      bridge_transition_id: x.bridge,
      has_routed_experts: false,
      assistant_node_id: x.output,
      input_leaf_node_id: x.inputLeaf,
      parent_output_node_id: x.parentOutput,
      created_node_ids: x.created,
      reused_node_ids: x.reusedNodes,
    },
  };
}

/** `TrajectoryDocument.document()` (records.py @ 5a91f21): the record's `trajectory` and the `.head.json`. */
function trajectoryDocument(t: Trace, m: Meta) {
  const first = t.exchanges[0]?.at ?? T0;
  const last = t.exchanges[t.exchanges.length - 1]?.at ?? T0;
  return {
    id: t.id,
    project: m.project,
    run_id: m.run,
    task_id: m.task,
    step: m.step,
    upstream: UPSTREAM,
    mode: 'tokens',
    status: 'finished',
    labels: [...m.labels].sort(),
    annotations: m.annotations,
    bodies: 'full',
    created_at: iso(first - 2000),
    first_event_at: iso(first - 800),
    finished_at: iso(last + 500),
    capture: {
      exchange_count: t.exchanges.length,
      node_count: t.nodes.size,
      calls_after_close: 0,
      complete: true,
      calls_missing: 0,
      recovery_uncertain: false,
      delivery_uncertain: [],
      errors: [],
    },
    command_result: null,
    source_metadata: {},
    schema_version: 4,
    revision: 1,
    finish_requested_at: iso(last + 400),
  };
}

/** `record_document` (committed.py @ ddc0bb7). */
function recordDocument(t: Trace, m: Meta) {
  const contexts = new Map<string, string>();
  const nodes = ordered(t).map((n) => nodeDocument(t, n, contexts));
  return {
    record_version: 5,
    schema_version: 4,
    derivation_version: 2,
    revision: 1,
    finish_request_hash: sha(`${t.id}|finish`),
    trajectory: trajectoryDocument(t, m),
    exchanges: t.exchanges.map((x) => exchangeDocument(t, x)),
    nodes,
    node_order: nodes.map((n) => n.id),
  };
}

/** The root-to-leaf paths, leaves in committed order (view.py `leaves`, `path_to`). */
function paths(t: Trace): TNode[][] {
  const order = ordered(t);
  const parents = new Set(order.map((n) => n.parent));
  return order
    .filter((n) => !parents.has(n.id))
    .map((leaf) => {
      const p: TNode[] = [];
      for (let n: TNode | undefined = leaf; n; n = n.parent ? t.nodes.get(n.parent) : undefined) p.unshift(n);
      return p;
    });
}

/** `token_sample_records` with its defaults (formats.py @ 5a91f21): one row per path, a sampled node trained once. */
function tokenSampleRows(t: Trace, m: Meta): Record<string, unknown>[] {
  const claimed = new Set<string>();
  const rows: Record<string, unknown>[] = [];
  const kids = (id: string | null) => [...t.nodes.values()].filter((n) => n.parent === id).length;
  paths(t).forEach((path, index) => {
    const ids: number[] = [];
    const spans: number[][] = [];
    const mask: number[] = [];
    const lps: number[] = [];
    const reasons = new Set<string>();
    for (const n of path) {
      spans.push([ids.length, ids.length + n.tokens.length]);
      ids.push(...n.tokens);
      const repeated = n.sampledStart !== null && claimed.has(n.id);
      if (repeated) reasons.add('repeated_target');
      const own = n.tokens.map((_, i) =>
        !repeated && n.sampledStart !== null && i >= n.sampledStart ? 1 : 0,
      );
      if (own.includes(1)) claimed.add(n.id);
      mask.push(...own);
      lps.push(...n.logprobs);
    }
    const leaf = path[path.length - 1];
    const outs = path
      .filter((n) => n.sampledStart !== null)
      .map((n) => t.exchanges.find((x) => x.output === n.id));
    const trainable = mask.reduce((a, b) => a + b, 0);
    rows.push({
      schema_version: 4,
      path_id: `${t.id}-p${String(index).padStart(4, '0')}`,
      trajectory_id: t.id,
      node_ids: path.map((n) => n.id),
      abandoned: leaf.sampledStart !== null && kids(leaf.parent) > 1,
      labels: [...m.labels].sort(),
      annotations: m.annotations,
      model: outs.length ? MODEL : null,
      tools: outs.length ? (outs[outs.length - 1]?.tools ?? null) : null,
      trainable_count: trainable,
      input_ids: ids,
      node_spans: spans,
      loss_mask: mask,
      rollout_logprobs: lps,
      rollout_expert_indices: null,
      stop_reason: null,
      tokenizer: TOKENIZER,
      ...(trainable === 0 && reasons.size ? { masked_reason: [...reasons].sort()[0] } : {}),
    });
  });
  return rows;
}

/** `graph_records` (formats.py @ 5a91f21): the trajectory's header and its nodes. */
function graphRecord(t: Trace, m: Meta) {
  const doc = trajectoryDocument(t, m);
  const contexts = new Map<string, string>();
  const nodes = ordered(t).map((n) => {
    const d = nodeDocument(t, n, contexts);
    const x = t.exchanges.find((e) => e.output === n.id);
    return {
      node_id: n.id,
      parent: n.parent,
      children: ordered(t)
        .filter((c) => c.parent === n.id)
        .map((c) => c.id),
      role: d.role,
      author: d.author,
      message: n.message,
      message_hash: d.message_hash,
      context_hash: d.context_hash,
      tokens: {
        ids: n.tokens,
        sampled_start: n.sampledStart,
        sampled_mask: d.payload.tokens.sampled_mask,
        logprobs: n.logprobs,
        routed_experts: null,
      },
      ...(x
        ? {
            call: {
              endpoint: '/v1/chat/completions',
              model: MODEL,
              status: 200,
              streaming: false,
              finish_reason: x.finish,
              tools_hash: hashOf(x.tools ?? []),
              sampling: { logprobs: true },
              usage: { prompt_tokens: x.prompt.length, completion_tokens: x.completion.length },
              timing: { started_at: iso(x.at - 800), ended_at: iso(x.at), duration_ms: 800, ttft_ms: 90 },
            },
          }
        : {}),
    };
  });
  return {
    schema_version: 4,
    trajectory_id: t.id,
    project: m.project,
    run_id: m.run,
    task_id: m.task,
    step: m.step,
    mode: 'tokens',
    status: 'finished',
    command_result: null,
    labels: doc.labels,
    annotations: m.annotations,
    upstream: UPSTREAM,
    integrity: { complete: true, calls_missing: 0, calls_after_close: 0 },
    bodies: 'full',
    created_at: doc.created_at,
    finished_at: doc.finished_at,
    derivation_version: 2,
    nodes,
  };
}

// --- the trajectories -------------------------------------------------------------------------

const SYSTEM: Msg = {
  role: 'system',
  content: 'You solve small Python tasks. Check your answer with the run_python tool.',
};
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'run_python',
      description: 'Run Python code and return what it prints',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
    },
  },
];
const ASK: Msg = { role: 'user', content: 'Write sum_list(xs) and show sum_list([1, 2, 3]).' };
const CODE = 'def sum_list(xs):\n    return sum(xs)\n\nprint(sum_list([1, 2, 3]))';
const toolResult = (m: Msg, content: string): Msg => ({
  role: 'tool',
  tool_call_id: ((m.tool_calls as { id: string }[] | undefined) ?? [])[0]?.id ?? 'call_0',
  content,
});

/** A trajectory of the fixtures: its trace and its document's facts. */
export interface Made {
  t: Trace;
  m: Meta;
}

/** The four trajectories of the record (module comment of the test, test/core/dumps/skyrl-capture.test.ts). */
export function trajectories(r: Qwen3Renderer): Made[] {
  const rng = new Rng(2261);
  const meta = (task: string, step: number | null, reward: number, labels: string[] = []): Meta => ({
    project: 'bugfix-agents',
    run: 'run-7',
    task,
    step,
    labels,
    annotations: { reward, stop_reason: 'complete' },
  });
  // a tool call, its result, the answer: linear
  const t1 = new Trace(ulid('tr', T0, rng), r, rng, T0);
  const call = reply('I write the function and run it.', '', { name: 'run_python', args: { code: CODE } });
  const a1 = t1.turn([SYSTEM, ASK], TOOLS, call);
  t1.turn([SYSTEM, ASK, a1, toolResult(a1, '6')], TOOLS, reply('It printed 6.', 'sum_list([1, 2, 3]) is 6.'));
  // the same request sampled twice (a fork at the reply), then a follow-up to the second sample
  const t2 = new Trace(ulid('tr', T0 + 60_000, rng), r, rng, T0 + 60_000);
  t2.turn([SYSTEM, ASK], null, reply('Add them up.', 'It is 5.'));
  const b = t2.turn([SYSTEM, ASK], null, reply('1 + 2 + 3 = 6.', 'It is 6.'));
  t2.turn([SYSTEM, ASK, b, { role: 'user', content: 'Are you sure?' }], null, reply('Yes.', 'Yes, 6.'));
  // a caller-supplied id; two tool results after one call: the call is trained in the first path only
  const t3 = new Trace('sum-list-3_1', r, rng, T0 + 120_000);
  const c3 = t3.turn([SYSTEM, ASK], TOOLS, call);
  t3.turn([SYSTEM, ASK, c3, toolResult(c3, '6')], TOOLS, reply('It printed 6.', 'The sum is 6.'));
  t3.turn(
    [SYSTEM, ASK, c3, toolResult(c3, "NameError: name 'sum_list' is not defined")],
    TOOLS,
    reply('The run lost the definition.', 'sum_list([1, 2, 3]) returns 6.'),
  );
  // a reply cut at max_tokens (no <|im_end|>): the next message's node starts with the <|im_end|> the bridge closes it with
  const t4 = new Trace(ulid('tr', T0 + 180_000, rng), r, rng, T0 + 180_000);
  const long = reply('Let me think step by step about summing the list one element at a time.', 'It is 6.');
  t4.turn([SYSTEM, ASK], null, long, 12);
  const shown = t4.exchanges[0];
  const partial: Msg = { role: 'assistant', content: r.tok.decode(shown.completion) };
  const cutNode = t4.nodes.get(shown.output);
  if (cutNode) cutNode.message = canonical(partial) as Msg;
  t4.turn(
    [SYSTEM, ASK, partial, { role: 'user', content: 'Please finish.' }],
    null,
    reply('Done thinking.', 'It is 6.'),
  );
  return [
    { t: t1, m: meta('sum-list', 3, 1) },
    { t: t2, m: meta('sum-list', 3, 0) },
    { t: t3, m: meta('sum-list', 4, 1) },
    { t: t4, m: { ...meta('sum-list', null, 0.5, ['step-4']) } },
  ];
}

/** The positions of a path row's tool-result content (between <tool_response> and </tool_response>, newlines left out). */
function toolContentPositions(r: Qwen3Renderer, ids: number[]): number[] {
  const open = r.tok.id('<tool_response>');
  const close = r.tok.id('</tool_response>');
  const out: number[] = [];
  let inside = false;
  ids.forEach((t, i) => {
    if (t === open) inside = true;
    else if (t === close) inside = false;
    else if (inside && r.tok.text(t).trim() !== '') out.push(i);
  });
  return out;
}

/** Write a record folder of trajectories under `dir`: manifest, committed records and headers. */
function writeRecord(
  dir: string,
  made: Made[],
  mutate?: (doc: ReturnType<typeof recordDocument>) => void,
): string[] {
  fs.rmSync(dir, { recursive: true, force: true });
  const manifest = {
    record_version: 5,
    journal_format_version: 1,
    schema_version: 4,
    derivation_version: 2,
    created_at: iso(T0 - 60_000),
    upstream: UPSTREAM,
  };
  fs.mkdirSync(path.join(dir, 'active'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const shard = shards(made.map((x) => x.t.id));
  return made.map(({ t, m }) => {
    const at = path.join(dir, 'committed', shard.get(t.id) as string);
    fs.mkdirSync(at, { recursive: true });
    const doc = recordDocument(t, m);
    mutate?.(doc);
    const file = path.join(at, `${t.id}.json.zst`);
    fs.writeFileSync(file, zstd(JSON.stringify(doc)));
    fs.writeFileSync(path.join(at, `${t.id}.head.json`), JSON.stringify(doc.trajectory, null, 2));
    return file;
  });
}

/** Write the export job, its artifact and the plain export, of `rows` (service.py `_materialize`, cli/main.py `export`). */
function writeExports(dir: string, made: Made[], rng: Rng): void {
  const rows = made.flatMap(({ t, m }) => tokenSampleRows(t, m));
  const body = `${rows.map((x) => JSON.stringify(x)).join('\n')}\n`;
  fs.writeFileSync(path.join(CAPTURE_DIR, 'token-samples.jsonl'), body);
  const jobs = path.join(dir, 'exports', 'jobs');
  fs.mkdirSync(jobs, { recursive: true });
  let n = 0;
  const write = (
    format: string,
    scope: string,
    text: string,
    selected: string[],
    trajectory: string | null,
  ) => {
    const id = ulid('exp', T0 + 3_600_000 + 1000 * n++, rng);
    const name = `${scope}-${format}.jsonl.zst`;
    const art = path.join(dir, 'exports', 'artifacts', id);
    fs.mkdirSync(art, { recursive: true });
    const z = zstd(text);
    fs.writeFileSync(path.join(art, name), z);
    const job = {
      id,
      format,
      project: trajectory ? null : 'bugfix-agents',
      run_id: null,
      trajectory_id: trajectory,
      selected_trajectory_ids: selected,
      options:
        format === 'token_samples'
          ? { allow_repeated_targets: false, mask_abandoned: false, overlong_filtering: false }
          : {},
      status: 'ready',
      created_at: iso(T0 + 3_600_000),
      updated_at: iso(T0 + 3_600_500),
      output_uri: `file://${path.join('/record', 'exports', 'artifacts', id, name)}`,
      byte_count: z.length,
      record_count: text.trim().split('\n').length,
      checksum: `sha256:${createHash('sha256').update(z).digest('hex')}`,
      error: null,
    };
    fs.writeFileSync(path.join(jobs, `${id}.json`), JSON.stringify(job, null, 2));
  };
  write(
    'token_samples',
    'bugfix-agents',
    body,
    made.map((x) => x.t.id),
    null,
  );
  const fork = made[2];
  write('graph', fork.t.id, `${JSON.stringify(graphRecord(fork.t, fork.m))}\n`, [fork.t.id], fork.t.id);
}

/** Write every skyrl-capture fixture under `out` (module comment). */
export function writeCaptureFixtures(out: string): void {
  const r = new Qwen3Renderer(qwen3());
  const made = trajectories(r);
  fs.mkdirSync(out, { recursive: true });
  const record = path.join(out, 'record');
  writeRecord(record, made);
  writeExports(record, made, new Rng(34));
  // the buggy writer: the first trajectory with its tool result's tokens marked sampled
  const [bug] = trajectories(r);
  const bugRow = tokenSampleRows(bug.t, bug.m)[0];
  const positions = toolContentPositions(r, bugRow.input_ids as number[]);
  const buggy = path.join(out, 'buggy');
  writeRecord(buggy, [bug], (doc) => {
    for (const n of doc.nodes) {
      if (n.role !== 'tool') continue;
      const within = toolContentPositions(r, n.payload.tokens.token_ids);
      n.payload.tokens.sampled_mask = n.payload.tokens.sampled_mask.map((x, i) => x || within.includes(i));
    }
  });
  const mask = (bugRow.loss_mask as number[]).map((x, i) => (positions.includes(i) ? 1 : x));
  fs.writeFileSync(
    path.join(out, 'token-samples-buggy.jsonl'),
    `${JSON.stringify({ ...bugRow, loss_mask: mask, trainable_count: mask.reduce((a, b) => a + b, 0) })}\n`,
  );
  const expected = {
    note: 'written by scripts/make-capture-fixtures.ts: the positions mask-on-tool reports in the buggy files (the tool result tokens the buggy writer trains)',
    buggy: { path_id: bugRow.path_id, rule: 'mask-on-tool', positions },
  };
  fs.writeFileSync(path.join(out, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
}

if (require.main?.filename === __filename) {
  writeCaptureFixtures(CAPTURE_DIR);
  console.log(`wrote ${CAPTURE_DIR}`);
}
