/**
 * The JSON form of a trajectory: what run files (`episodes.jsonl`), the CLI and the webview
 * exchange. It is self-describing (token texts included) so that a reader needs no tokenizer.
 *
 * {
 *   "v": 1,
 *   "task": {"id", "fname", "issue", "source", "kind", "template"},
 *   "tokens":  [string] [T]   token texts,
 *   "ids":     [int]    [T]   token ids,
 *   "owner":   [int]    [T]   0 template, 1 prompt, 2 policy, 3 tool (OWNER),
 *   "turn":    [int]    [T]   call index the token belongs to (the prompt is turn 0),
 *   "actionMask": [0|1] [T-1] 1 where ids[i+1] was sampled by the policy,
 *   "logps":   [num]    [T-1] sampling log-prob of ids[i+1] (0 off the mask),
 *   "reward":  num,
 *   "info":    {submitted, hidden_pass, stop, n_invalid, n_turns, reads, tests, edits, edit_op, task_id, single_turn},
 *   optional, [T-1] aligned like actionMask: "advantages", "values", "curLogps";
 *   optional: "step" (training step), "index" (episode index in the step), "group" (group index)
 * }
 */
import type { Trajectory } from './episode.js';
import type { EpisodeInfo } from './rewards.js';
import type { Tokenizer } from './tokenizer.js';

export const TRAJECTORY_JSON_VERSION = 1;

export interface TrajectoryJSON {
  v: number;
  task: Trajectory['task'];
  tokens: string[];
  ids: number[];
  owner: number[];
  turn: number[];
  actionMask: number[];
  logps: number[];
  reward: number;
  info: EpisodeInfo;
  advantages?: number[];
  values?: number[];
  curLogps?: number[];
  step?: number;
  index?: number;
  group?: number;
}

export type TrajectoryExtras = Pick<
  TrajectoryJSON,
  'advantages' | 'values' | 'curLogps' | 'step' | 'index' | 'group'
>;

export function toTrajectoryJSON(
  t: Trajectory,
  tok: Tokenizer,
  extras: TrajectoryExtras = {},
): TrajectoryJSON {
  const round = (xs: number[]) => xs.map((x) => Math.round(x * 1e6) / 1e6);
  const out: TrajectoryJSON = {
    v: TRAJECTORY_JSON_VERSION,
    task: t.task,
    tokens: t.ids.map((i) => tok.token(i)),
    ids: t.ids,
    owner: t.owner,
    turn: t.turn,
    actionMask: t.actionMask,
    logps: round(t.logps),
    reward: t.reward,
    info: t.info,
  };
  if (extras.advantages) out.advantages = round(extras.advantages);
  if (extras.values) out.values = round(extras.values);
  if (extras.curLogps) out.curLogps = round(extras.curLogps);
  for (const k of ['step', 'index', 'group'] as const) if (extras[k] !== undefined) out[k] = extras[k];
  return out;
}

/** Check a parsed JSON value is a trajectory; the error says which field is wrong. */
export function validateTrajectoryJSON(x: unknown): TrajectoryJSON {
  const fail = (msg: string): never => {
    throw new Error(`not a trajectory: ${msg}`);
  };
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return fail('expected an object');
  const o = x as Record<string, unknown>;
  if (o.v !== TRAJECTORY_JSON_VERSION)
    fail(`version ${JSON.stringify(o.v)}, this reader knows ${TRAJECTORY_JSON_VERSION}`);
  const nums = (k: string, n: number) => {
    const a = o[k];
    if (!Array.isArray(a) || a.length !== n || !a.every((v) => typeof v === 'number' && Number.isFinite(v)))
      fail(`"${k}" must be ${n} numbers`);
  };
  if (!Array.isArray(o.ids) || o.ids.length < 1) return fail('"ids" must be a non-empty array');
  const T = o.ids.length;
  nums('ids', T);
  nums('owner', T);
  nums('turn', T);
  nums('actionMask', T - 1);
  nums('logps', T - 1);
  for (const k of ['advantages', 'values', 'curLogps']) if (o[k] !== undefined) nums(k, T - 1);
  if (!Array.isArray(o.tokens) || o.tokens.length !== T || !o.tokens.every((t) => typeof t === 'string'))
    fail(`"tokens" must be ${T} strings`);
  if ((o.owner as number[]).some((v) => v < 0 || v > 3 || !Number.isInteger(v)))
    fail('"owner" codes are 0..3');
  if (typeof o.reward !== 'number') fail('"reward" must be a number');
  const info = o.info as Record<string, unknown> | undefined;
  if (typeof info !== 'object' || info === null) return fail('"info" must be an object');
  for (const k of ['submitted', 'hidden_pass'])
    if (typeof info[k] !== 'boolean') fail(`"info.${k}" must be a boolean`);
  for (const k of ['n_invalid', 'n_turns', 'reads', 'tests', 'edits'])
    if (typeof info[k] !== 'number') fail(`"info.${k}" must be a number`);
  if (typeof info.stop !== 'string') fail('"info.stop" must be a string');
  const task = o.task as Record<string, unknown> | undefined;
  if (typeof task !== 'object' || task === null || typeof task.id !== 'string')
    fail('"task.id" must be a string');
  return x as TrajectoryJSON;
}

/** Back from JSON to a Trajectory (the extras stay in the JSON). */
export function fromTrajectoryJSON(j: TrajectoryJSON): Trajectory {
  return {
    ids: j.ids,
    owner: j.owner,
    turn: j.turn,
    actionMask: j.actionMask,
    logps: j.logps,
    reward: j.reward,
    info: j.info,
    task: j.task,
  };
}
