/**
 * skyrl-capture, SkyRL's token capture proxy (the `skyrl_capture` package, version 0.1.0, in
 * NovaSky-AI/SkyRL under `skyrl-capture/`, read at 5a91f21e6b4ae96b3ea37f4e18bfcc369eadab71,
 * ddc0bb790cc155060f8b8897780c7f2a06b8f0c1 and c35fed78d9b03c4fe568a1cd716850e3bc3bcc5a; each file
 * below names its commit). One JSON object per line, any of:
 * - a `token-samples` export row (`token_sample_records` + `_sample_envelope`, export/formats.py @
 *   5a91f21; `skyrl-capture export --format token-samples --output FILE.jsonl`, cli/main.py @
 *   5a91f21): one root-to-leaf path of a trajectory with `input_ids`, `loss_mask` (0/1),
 *   `rollout_logprobs` (0.0 where nothing was sampled), `node_ids` and `node_spans` (`[start, end)`
 *   of each node in the arrays), `path_id`, `trajectory_id`, `labels`, `annotations`, `stop_reason`,
 *   and `masked_reason` when the row trains nothing;
 * - a `graph` export line (`graph_records`, export/formats.py @ 5a91f21): a trajectory and its
 *   nodes, each with `tokens: {ids, sampled_start, sampled_mask, logprobs}`;
 * - a committed trajectory record (`record_document`, persistence/committed.py @ ddc0bb7): what
 *   `committed/<xx>/<id>.json.zst` holds, decompressed (one compact JSON object).
 * A graph or a record gives one sample per path, as its token-samples export would
 * (skyrl-capture-graph.ts). zstd-compressed files are the `skyrl-capture-zst` format.
 *
 * What a row gives a sample: the ids, the mask, the sampler log-probs (null where the mask is 0 and
 * the value is 0.0: the writer's placeholder on tokens it did not sample; a sampled token kept in a
 * row as context keeps its real value), the reward (`annotations.reward`, as SkyRL's Harbor
 * integration writes it: kouroshHakha/SkyRL @ 040d91b,
 * examples/train_integrations/harbor/icap/harbor_generator.py), the step (a `step-<N>` label, the
 * same integration's), the stop reason (`stop_reason`, else `annotations.stop_reason`), the row's
 * `path_id` as its id, its nodes (`node_spans`; a node with no trained token is context), and
 * `masked_reason`. Sample rows carry no run, task or step field and no group: the group of a
 * committed record is its `task_id`.
 */
import * as v from 'valibot';
import { fail, ok } from '../../../schema.js';
import type { DumpSample, LengthIssue, Read } from '../sample.js';
import { bools, lengthIssue, numbersOrNull, parse, tokenIds } from './fields.js';
import type { RecordReader } from './reader.js';
import {
  annotatedStop,
  committedGraph,
  exportedGraph,
  graphSamples,
  rewardOf,
} from './skyrl-capture-graph.js';

/** The export schema (`SCHEMA_VERSION`, version.py @ 5a91f21) this reader follows; rows of another are refused. */
export const CAPTURE_SCHEMA_VERSION = 4;

const SOURCE_COMMITS =
  'NovaSky-AI/SkyRL skyrl-capture/ @ 5a91f21e6b4ae96b3ea37f4e18bfcc369eadab71, ddc0bb790cc155060f8b8897780c7f2a06b8f0c1, c35fed78d9b03c4fe568a1cd716850e3bc3bcc5a';

const Row = v.object({
  schema_version: v.number(),
  path_id: v.string(),
  trajectory_id: v.string(),
  node_ids: v.optional(v.array(v.string())),
  labels: v.optional(v.array(v.string())),
  annotations: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  tools: v.optional(v.unknown()),
  input_ids: tokenIds,
  node_spans: v.optional(v.array(v.tuple([v.number(), v.number()]))),
  loss_mask: bools,
  rollout_logprobs: v.optional(v.nullable(numbersOrNull)),
  stop_reason: v.optional(v.nullable(v.string())),
  masked_reason: v.optional(v.string()),
});

/** The step in a `step-<N>` label (SkyRL's Harbor integration), if any. */
function labelStep(labels: readonly string[]): number | undefined {
  for (const l of labels) {
    const m = /^step-(\d{1,9})$/.exec(l);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** A token-samples row's node starts and which nodes train a token here, from `node_spans` (undefined when they do not tile the ids). */
function nodesOfRow(
  spans: readonly (readonly [number, number])[] | undefined,
  mask: readonly number[],
  T: number,
): { nodeStarts: number[]; nodeSampled: boolean[] } | undefined {
  if (!spans?.length) return undefined;
  let at = 0;
  for (const [a, b] of spans) {
    if (a !== at || b < a) return undefined;
    at = b;
  }
  if (at !== T) return undefined;
  return {
    nodeStarts: spans.map(([a]) => a),
    nodeSampled: spans.map(([a, b]) => mask.slice(a, b).includes(1)),
  };
}

/** One `token-samples` row (module comment) as its sample, or the Rejection naming the field. */
function readRow(record: unknown, index: number): Read<DumpSample[]> {
  const r = parse(Row, record, index);
  if (!r.ok) return r;
  const x = r.value;
  if (x.schema_version !== CAPTURE_SCHEMA_VERSION)
    return fail({
      record: index,
      field: 'schema_version',
      expected: `${CAPTURE_SCHEMA_VERSION} (the skyrl-capture export schema this reader follows)`,
      found: String(x.schema_version),
    });
  const T = x.input_ids.length;
  const issues: LengthIssue[] = [...lengthIssue('loss_mask', x.loss_mask.length, T, 'input_ids')];
  const mask = x.loss_mask.slice(0, T).map((m) => (m === true || m === 1 ? 1 : 0));
  const lp = x.rollout_logprobs ?? undefined;
  if (lp) issues.push(...lengthIssue('rollout_logprobs', lp.length, T, 'input_ids'));
  const nodes = nodesOfRow(x.node_spans, mask, T);
  if (x.node_spans && !nodes)
    issues.push({ what: `"node_spans" do not cover the ${T} input_ids end to end`, position: null });
  const annotations = x.annotations ?? {};
  const labels = x.labels ?? [];
  const s: DumpSample = {
    record: index,
    offset: 0,
    ids: x.input_ids,
    lossMask: mask,
    samplerLogprobs: lp?.slice(0, T).map((y, i) => (y === 0 && !mask[i] ? null : y)),
    fileId: { field: 'path_id', value: x.path_id.slice(0, 200) },
    lengthIssues: issues,
    ...nodes,
  };
  const reward = rewardOf(annotations);
  if (reward !== undefined) s.reward = reward;
  const step = labelStep(labels);
  if (step !== undefined) s.step = step;
  const stop = x.stop_reason || annotatedStop(annotations);
  if (stop) s.stop = stop.slice(0, 200);
  if (Array.isArray(x.tools) && x.tools.length) s.tools = x.tools;
  if (x.masked_reason && !mask.includes(1)) s.writerMasked = x.masked_reason.slice(0, 200);
  return ok([s]);
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** Which of skyrl-capture's documents a parsed line is, by its fields. */
export function captureKind(record: object): 'row' | 'record' | 'graph' | undefined {
  if ('path_id' in record && 'input_ids' in record && 'loss_mask' in record) return 'row';
  if ('record_version' in record && 'trajectory' in record && 'nodes' in record) return 'record';
  if ('trajectory_id' in record && 'derivation_version' in record && 'nodes' in record) return 'graph';
  return undefined;
}

/** The samples of one parsed line (a row, a graph line or a committed record), or the Rejection naming the field. */
function read(record: unknown, index: number): Read<DumpSample[]> {
  const kind = isObject(record) ? captureKind(record) : undefined;
  if (!isObject(record) || kind === undefined)
    return fail({
      record: index,
      field: '',
      expected: 'a skyrl-capture token-samples row, graph line or committed record',
      found: isObject(record) ? `fields ${Object.keys(record).slice(0, 12).join(', ')}` : typeof record,
    });
  if (kind === 'row') return readRow(record, index);
  const g = kind === 'record' ? committedGraph(record, index) : exportedGraph(record, index);
  return g.ok ? graphSamples(g.value, index) : g;
}

export const skyrlCapture = {
  id: 'skyrl-capture',
  kind: 'records',
  label: 'skyrl-capture (token-samples, graph, record)',
  source: `${SOURCE_COMMITS}: export/formats.py (token_sample_records, graph_records), persistence/committed.py (record_document), persistence/journal.py (node_document), tito/trace.py (TokenNode.payload)`,
  fields:
    'path_id, input_ids, loss_mask, rollout_logprobs (a token-samples row); or trajectory_id, derivation_version, nodes (a graph line); or record_version, trajectory, nodes (a committed record)',
  detect: (record) => captureKind(record) !== undefined,
  read,
  carries: ['ids', 'lossMask', 'samplerLogprobs', 'tools', 'reward', 'step', 'group', 'truncated', 'stop'],
} as const satisfies RecordReader;
