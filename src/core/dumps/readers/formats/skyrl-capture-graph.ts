/**
 * skyrl-capture's message graph as samples: a committed trajectory record
 * (`committed/<xx>/<id>.json.zst`, `record_document` in persistence/committed.py, nodes by
 * `node_document` in persistence/journal.py) or a line of its `graph` export (`graph_records`,
 * export/formats.py), both NovaSky-AI/SkyRL `skyrl-capture/` @ 5a91f21 / ddc0bb7 (module comment of
 * skyrl-capture.ts). Each node is one message with its own token delta; a node with several children
 * is a fork.
 *
 * One sample per root-to-leaf path, exactly the rows `token_sample_records` (export/formats.py @
 * 5a91f21) writes with its defaults, so that a record reads as its `token-samples` export does:
 * - paths: the leaves in node order (a node no other node names as parent), each walked to its root;
 *   `path_id` is `<trajectory_id>-p<leaf index, 4 digits>`; a path of no token is no sample;
 * - the mask: each node's `sampled_mask`, except a node whose tokens are already trained by an
 *   earlier path (a model node, train-once: `repeated_target`) or whose exchange's delivery is
 *   uncertain (`delivery_uncertain`), which is untrained here; a path that trains nothing says why
 *   (`masked_reason`, the first reason alphabetically);
 * - the log-probs: the node's `logprobs` on the tokens it sampled (from `sampled_start` on, a real
 *   value even when 0.0), null elsewhere (the writer's 0.0 there is a placeholder).
 * The model nodes a path trains are its `completions` (the scaffold before `sampled_start` is the
 * chat template's generation prompt), and every node's start and whether it is trained in this path
 * are `nodeStarts` / `nodeSampled` (an untrained node is context).
 */
import { fail, ok } from '../../../schema.js';
import { type DumpSample, describeValue, type LengthIssue, type Read } from '../sample.js';
import { groupNumber } from './fields.js';

/** The record format (`RECORD_FORMAT_VERSION`, version.py @ 5a91f21) this reader follows. */
export const CAPTURE_RECORD_VERSION = 5;

/** One node, whatever document it came from. */
interface Node {
  id: string;
  parent: string | null;
  author: string;
  tokens: number[];
  sampledStart: number | null;
  mask: boolean[];
  logprobs: number[];
  /** Where in the document it is (`nodes[3]`), for messages. */
  at: string;
}

/** A trajectory's facts and graph. */
export interface CaptureGraph {
  id: string;
  step?: number;
  task?: string;
  labels: string[];
  annotations: Record<string, unknown>;
  nodes: Node[];
  /** Model nodes whose exchange's delivery is uncertain. */
  uncertain: Set<string>;
  /** Per model node that is a call's output: the call's finish reason and tools, where known. */
  calls: Map<string, { finish?: string; tools?: unknown[] }>;
}

const obj = (x: unknown): Record<string, unknown> | undefined =>
  typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;
const own = (x: unknown, k: string): unknown => {
  const o = obj(x);
  return o && Object.hasOwn(o, k) ? o[k] : undefined;
};
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/** A Rejection of record `index` at `field`. */
const no = (index: number, field: string, expected: string, x: unknown): Read<never> =>
  fail({ record: index, field, expected, found: describeValue(x) });

/** An array whose every element passes `good`, else undefined. */
function arrayOf<T>(x: unknown, good: (y: unknown) => boolean): T[] | undefined {
  return Array.isArray(x) && x.every(good) ? (x as T[]) : undefined;
}
const isInt = (y: unknown) => Number.isInteger(y);
const isNum = (y: unknown) => typeof y === 'number' && Number.isFinite(y);
const isBool = (y: unknown) => typeof y === 'boolean';

/**
 * One node from its fields: `id`, `parent`, `author`, and `tok` the object holding the token arrays
 * (`ids` or `token_ids`, `sampled_mask`, `logprobs`, `sampled_start`); `start` the node's own
 * `sampled_start` when the document has one beside the tokens. A token-less node has no `tok`.
 */
function nodeOf(
  f: { id: unknown; parent: unknown; author: unknown; tok: unknown; start: unknown },
  at: string,
  index: number,
): Read<Node> {
  const id = str(f.id);
  if (!id) return no(index, `${at}.id`, 'a node id', f.id);
  if (f.parent !== null && typeof f.parent !== 'string')
    return no(index, `${at}.parent`, 'a node id or null', f.parent);
  const author = str(f.author) ?? '';
  const t = f.tok;
  const rawIds = t === undefined || t === null ? [] : (own(t, 'token_ids') ?? own(t, 'ids') ?? []);
  const tokens = arrayOf<number>(rawIds, isInt);
  if (!tokens) return no(index, `${at}.tokens`, 'an array of integer token ids', rawIds);
  const start = f.start !== undefined ? f.start : own(t, 'sampled_start');
  if (start !== null && start !== undefined && !(Number.isInteger(start) && (start as number) >= 0))
    return no(index, `${at}.sampled_start`, 'a token index or null', start);
  const mask = arrayOf<boolean>(own(t, 'sampled_mask') ?? [], isBool);
  if (!mask) return no(index, `${at}.sampled_mask`, 'an array of booleans', own(t, 'sampled_mask'));
  const logprobs = arrayOf<number>(own(t, 'logprobs') ?? [], isNum);
  if (!logprobs) return no(index, `${at}.logprobs`, 'an array of numbers', own(t, 'logprobs'));
  return ok({
    id,
    parent: f.parent as string | null,
    author,
    tokens,
    sampledStart: (start as number | null | undefined) ?? null,
    mask,
    logprobs,
    at,
  });
}

/** The trajectory's step: its `step`, else a `step-<N>` label (SkyRL's Harbor integration labels trials so). */
function stepOf(step: unknown, labels: readonly string[]): number | undefined {
  if (Number.isInteger(step) && (step as number) >= 0) return step as number;
  for (const l of labels) {
    const m = /^step-(\d{1,9})$/.exec(l);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** The facts every document carries about its trajectory (`TrajectoryDocument`, domain/records.py @ 5a91f21). */
function facts(doc: unknown, id: string): Omit<CaptureGraph, 'nodes' | 'uncertain' | 'calls'> {
  const labels = arrayOf<string>(own(doc, 'labels') ?? [], (y) => typeof y === 'string') ?? [];
  return {
    id,
    step: stepOf(own(doc, 'step'), labels),
    task: str(own(doc, 'task_id')) || undefined,
    labels,
    annotations: obj(own(doc, 'annotations')) ?? {},
  };
}

/**
 * A committed record (`record_document`): its trajectory and graph, or the Rejection naming the
 * field. A record of another `record_version` is refused; a text-mode one has no token ids.
 */
export function committedGraph(doc: Record<string, unknown>, index: number): Read<CaptureGraph> {
  const version = doc.record_version;
  if (version !== CAPTURE_RECORD_VERSION)
    return fail({
      record: index,
      field: 'record_version',
      expected: `${CAPTURE_RECORD_VERSION} (the skyrl-capture record format this reader follows; read a record of another version with the skyrl-capture that wrote it, e.g. its token-samples export)`,
      found: describeValue(version),
    });
  const t = doc.trajectory;
  const id = str(own(t, 'id'));
  if (!id) return no(index, 'trajectory.id', 'the trajectory id', own(t, 'id'));
  if (own(t, 'mode') === 'text')
    return fail({
      record: index,
      field: 'trajectory.mode',
      expected: '"tokens" (a text-mode capture records messages, not token ids: capture with --mode tokens)',
      found: '"text"',
    });
  const raw = doc.nodes;
  if (!Array.isArray(raw)) return no(index, 'nodes', 'an array of nodes', raw);
  const nodes: Node[] = [];
  for (let i = 0; i < raw.length; i++) {
    const n = raw[i];
    const r = nodeOf(
      {
        id: own(n, 'id'),
        parent: own(n, 'parent_id') ?? null,
        author: own(n, 'author'),
        tok: own(own(n, 'payload'), 'tokens'),
        start: own(n, 'sampled_start'),
      },
      `nodes[${i}]`,
      index,
    );
    if (!r.ok) return r;
    nodes.push(r.value);
  }
  const uncertain = new Set<string>();
  const calls = new Map<string, { finish?: string; tools?: unknown[] }>();
  const exchanges = Array.isArray(doc.exchanges) ? doc.exchanges : [];
  for (const x of exchanges) {
    const row = own(x, 'row');
    const out = str(own(row, 'output_node_id'));
    if (!out) continue;
    if (own(x, 'delivery_uncertain') === true) uncertain.add(out);
    const tools = own(row, 'tools');
    calls.set(out, {
      finish: str(own(row, 'completion_reason')),
      tools: Array.isArray(tools) && tools.length ? tools : undefined,
    });
  }
  return ok({ ...facts(t, id), nodes, uncertain, calls });
}

/** A line of the `graph` export (`graph_records`): its trajectory and graph, or the Rejection naming the field. */
export function exportedGraph(doc: Record<string, unknown>, index: number): Read<CaptureGraph> {
  const id = str(doc.trajectory_id);
  if (!id) return no(index, 'trajectory_id', 'the trajectory id', doc.trajectory_id);
  const raw = doc.nodes;
  if (!Array.isArray(raw)) return no(index, 'nodes', 'an array of nodes', raw);
  const nodes: Node[] = [];
  const uncertain = new Set<string>();
  const calls = new Map<string, { finish?: string; tools?: unknown[] }>();
  for (let i = 0; i < raw.length; i++) {
    const n = raw[i];
    const r = nodeOf(
      {
        id: own(n, 'node_id'),
        parent: own(n, 'parent') ?? null,
        author: own(n, 'author'),
        tok: own(n, 'tokens'),
        start: undefined,
      },
      `nodes[${i}]`,
      index,
    );
    if (!r.ok) return r;
    nodes.push(r.value);
    if (own(n, 'delivery_uncertain') === true) uncertain.add(r.value.id);
    const call = own(n, 'call');
    if (call !== undefined) calls.set(r.value.id, { finish: str(own(call, 'finish_reason')) });
  }
  return ok({ ...facts(doc, id), nodes, uncertain, calls });
}

/** A path's tokens and what its samples say of them. */
interface PathRow {
  pathId: string;
  ids: number[];
  lossMask: number[];
  logprobs: (number | null)[];
  nodeStarts: number[];
  nodeSampled: boolean[];
  completions: { start: number; sampled: number; end: number }[];
  masked?: string;
  lengthIssues: LengthIssue[];
  /** The path's nodes, root first. */
  path: Node[];
}

/** The root-to-leaf path of `leaf` (node objects), or the node whose parents loop or are missing. */
function pathTo(leaf: Node, byId: Map<string, Node>): Node[] | { loop: Node } {
  const path: Node[] = [];
  const seen = new Set<string>();
  for (let n: Node | undefined = leaf; n; n = n.parent === null ? undefined : byId.get(n.parent)) {
    if (seen.has(n.id)) return { loop: n };
    seen.add(n.id);
    path.push(n);
  }
  return path.reverse();
}

/** One node's part of a path row (module comment), appended to `row`; `suppressed` says why it is untrained, if it is. */
function addNode(row: PathRow, node: Node, suppressed: string | undefined): boolean {
  const start = row.ids.length;
  const n = node.tokens.length;
  row.nodeStarts.push(start);
  const ss = node.sampledStart;
  const mask = node.mask.length ? node.mask : new Array<boolean>(n).fill(false);
  if (node.mask.length && node.mask.length !== n)
    row.lengthIssues.push({
      what: `${node.at} (${node.id}): "sampled_mask" has ${node.mask.length} values for ${n} token_ids`,
      position: start + Math.min(node.mask.length, n),
    });
  if (node.logprobs.length && node.logprobs.length !== n)
    row.lengthIssues.push({
      what: `${node.at} (${node.id}): "logprobs" has ${node.logprobs.length} values for ${n} token_ids`,
      position: start + Math.min(node.logprobs.length, n),
    });
  let trained = false;
  for (let i = 0; i < n; i++) {
    row.ids.push(node.tokens[i]);
    const m = !suppressed && mask[i] === true;
    trained ||= m;
    row.lossMask.push(m ? 1 : 0);
    const sampled = ss !== null && i >= ss;
    row.logprobs.push(sampled && i < node.logprobs.length ? node.logprobs[i] : null);
  }
  row.nodeSampled.push(trained && node.author === 'model');
  if (trained && ss !== null && ss < n) row.completions.push({ start, sampled: start + ss, end: start + n });
  return trained;
}

/** The paths' rows of a graph (module comment), in leaf order; a rejection when a path's parents loop. */
export function pathRows(g: CaptureGraph, index: number): Read<PathRow[]> {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const parents = new Set(g.nodes.map((n) => n.parent).filter((p): p is string => p !== null));
  const claimed = new Set<string>();
  const rows: PathRow[] = [];
  const leaves = g.nodes.filter((n) => !parents.has(n.id));
  for (let k = 0; k < leaves.length; k++) {
    const leaf = leaves[k];
    const path = pathTo(leaf, byId);
    if (!Array.isArray(path))
      return fail({
        record: index,
        field: `${path.loop.at}.parent`,
        expected: 'parents that lead to a root',
        found: `a loop through node ${path.loop.id}`,
      });
    const row: PathRow = {
      pathId: `${g.id}-p${String(k).padStart(4, '0')}`,
      ids: [],
      lossMask: [],
      logprobs: [],
      nodeStarts: [],
      nodeSampled: [],
      completions: [],
      lengthIssues: [],
      path,
    };
    const reasons = new Set<string>();
    for (const node of path) {
      const repeated = node.sampledStart !== null && claimed.has(node.id);
      const undelivered = g.uncertain.has(node.id);
      if (repeated && node.tokens.length) reasons.add('repeated_target');
      if (undelivered && node.tokens.length) reasons.add('delivery_uncertain');
      const why = repeated ? 'repeated_target' : undelivered ? 'delivery_uncertain' : undefined;
      if (addNode(row, node, why)) claimed.add(node.id);
    }
    if (!row.ids.length) continue;
    if (!row.lossMask.includes(1) && reasons.size) row.masked = [...reasons].sort()[0];
    rows.push(row);
  }
  return ok(rows);
}

/** The number under `reward` in a trajectory's annotations (SkyRL's Harbor integration writes it so), if finite. */
export function rewardOf(annotations: Record<string, unknown>): number | undefined {
  const r = annotations.reward;
  return typeof r === 'number' && Number.isFinite(r) ? r : undefined;
}

/** The trajectory's own stop reason (`annotations.stop_reason`, SkyRL's Harbor integration), if text. */
export function annotatedStop(annotations: Record<string, unknown>): string | undefined {
  const s = annotations.stop_reason;
  return typeof s === 'string' && s !== '' ? s.slice(0, 200) : undefined;
}

/**
 * The samples of a graph, one per path (module comment), record `index`: each with the trajectory's
 * reward, step and task group, its path id, and its leaf call's finish reason (`truncated` when it
 * is `length`). Several paths in one record are told apart by `part` and `offset`.
 */
export function graphSamples(g: CaptureGraph, index: number): Read<DumpSample[]> {
  const rows = pathRows(g, index);
  if (!rows.ok) return rows;
  const reward = rewardOf(g.annotations);
  const group = groupNumber(g.task);
  const stop = annotatedStop(g.annotations);
  let offset = 0;
  const out: DumpSample[] = [];
  for (const r of rows.value) {
    const call = g.calls.get(r.path[r.path.length - 1].id);
    const tools = lastTools(g, r.path);
    const s: DumpSample = {
      record: index,
      offset,
      ids: r.ids,
      lossMask: r.lossMask,
      samplerLogprobs: r.logprobs,
      nodeStarts: r.nodeStarts,
      nodeSampled: r.nodeSampled,
      completions: r.completions,
      fileId: { field: 'path_id', value: r.pathId.slice(0, 200) },
      lengthIssues: r.lengthIssues,
    };
    if (rows.value.length > 1) s.part = `path ${r.pathId.slice(g.id.length + 1)}`;
    if (reward !== undefined) s.reward = reward;
    if (g.step !== undefined) s.step = g.step;
    if (group !== undefined) s.group = group;
    if (group !== undefined && g.task && String(group) !== g.task) s.groupLabel = g.task.slice(0, 200);
    const finish = call?.finish;
    if (stop ?? finish) s.stop = (stop ?? finish)?.slice(0, 200);
    if (finish) s.truncated = finish === 'length';
    if (tools) s.tools = tools;
    if (r.masked) s.writerMasked = r.masked;
    out.push(s);
    offset += r.ids.length;
  }
  return ok(out);
}

/** The tools of the last call on a path that names them (`_sample_conditions`: tools are uniform along a path). */
function lastTools(g: CaptureGraph, path: readonly Node[]): unknown[] | undefined {
  let tools: unknown[] | undefined;
  for (const n of path) tools = (n.author === 'model' ? g.calls.get(n.id)?.tools : undefined) ?? tools;
  return tools;
}
