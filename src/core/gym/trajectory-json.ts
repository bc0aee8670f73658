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
import * as v from 'valibot';
import {
  bool,
  finite,
  int,
  loose,
  numbers,
  oneOf,
  parse,
  type Result,
  show,
  strings,
  text,
} from '../schema.js';
import type { Trajectory } from './episode.js';
import { OPS } from './grammar.js';
import { STOP_REASONS } from './rewards.js';
import type { Tokenizer } from './tokenizer.js';

export const TRAJECTORY_JSON_VERSION = 1;

/** A trajectory as the schema reads it: what `toTrajectoryJSON` writes, other tools' files as they are. */
export type TrajectoryJSON = v.InferOutput<typeof TrajectoryJSONSchema>;

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
    info: { ...t.info },
  };
  if (extras.advantages) out.advantages = round(extras.advantages);
  if (extras.values) out.values = round(extras.values);
  if (extras.curLogps) out.curLogps = round(extras.curLogps);
  for (const k of ['step', 'index', 'group'] as const) if (extras[k] !== undefined) out[k] = extras[k];
  return out;
}

/** The longest episode a trajectory may describe (TinyAgent's is 256 tokens; imported ones run longer). */
export const MAX_TRAJECTORY_TOKENS = 1_000_000;

/** The trajectory JSON form: the shapes of the arrays are checked against each other. */
export const TrajectoryJSONSchema = v.pipe(
  loose({
    v: v.literal(
      TRAJECTORY_JSON_VERSION,
      (i) => `expected version ${TRAJECTORY_JSON_VERSION} (what this reader knows), got ${show(i.input)}`,
    ),
    task: loose({
      id: text(200),
      fname: v.optional(v.string()),
      issue: v.optional(v.string()),
      source: v.optional(v.string()),
      kind: v.optional(v.string()),
      template: v.optional(v.string()),
    }),
    tokens: strings(MAX_TRAJECTORY_TOKENS),
    ids: numbers(MAX_TRAJECTORY_TOKENS),
    owner: numbers(MAX_TRAJECTORY_TOKENS),
    turn: numbers(MAX_TRAJECTORY_TOKENS),
    actionMask: numbers(MAX_TRAJECTORY_TOKENS),
    logps: numbers(MAX_TRAJECTORY_TOKENS),
    reward: finite(),
    info: loose({
      submitted: bool(),
      hidden_pass: bool(),
      stop: text(40),
      n_invalid: finite(),
      n_turns: finite(),
      reads: finite(),
      tests: finite(),
      edits: finite(),
      edit_op: v.optional(v.nullable(v.string())),
      task_id: v.optional(v.string()),
      single_turn: v.optional(v.boolean()),
    }),
    advantages: v.optional(numbers(MAX_TRAJECTORY_TOKENS)),
    values: v.optional(numbers(MAX_TRAJECTORY_TOKENS)),
    curLogps: v.optional(numbers(MAX_TRAJECTORY_TOKENS)),
    step: v.optional(int(0, 1e9)),
    index: v.optional(int(0, 1e9)),
    group: v.optional(int(0, 1e9)),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const o = dataset.value as unknown as Record<string, unknown[]>;
    const T = o.ids.length;
    const need = (key: string, n: number) => {
      const a = o[key];
      if (a !== undefined && a.length !== n)
        addIssue({
          message: `expected ${n} entries (${key === 'tokens' || key === 'owner' || key === 'turn' ? 'one per token' : 'one per predicted position, T - 1'}), got ${a.length}`,
          path: [{ type: 'object', origin: 'value', input: o, key, value: a }],
        });
    };
    if (T < 1) addIssue({ message: 'expected at least one token in "ids"' });
    for (const k of ['tokens', 'owner', 'turn']) need(k, T);
    for (const k of ['actionMask', 'logps', 'advantages', 'values', 'curLogps']) need(k, Math.max(T - 1, 0));
    if ((o.owner as number[]).some((x) => !Number.isInteger(x) || x < 0 || x > 3))
      addIssue({ message: 'expected owner codes 0 (template), 1 (prompt), 2 (policy), 3 (tool)' });
    if ((o.ids as number[]).some((x) => !Number.isInteger(x) || x < 0))
      addIssue({ message: 'expected token ids to be non-negative integers' });
    if ((o.actionMask as number[]).some((x) => x !== 0 && x !== 1))
      addIssue({ message: 'expected "actionMask" to hold only 0 and 1' });
  }),
);

/** Check a parsed JSON value is a trajectory; the result names the wrong field. Never throws. */
export function parseTrajectoryJSON(x: unknown, where = 'trajectory'): Result<TrajectoryJSON> {
  return parse(TrajectoryJSONSchema, x, where);
}

/** Check a parsed JSON value is a trajectory; throws `not a trajectory: <which field is wrong>`. */
export function validateTrajectoryJSON(x: unknown): TrajectoryJSON {
  const r = parseTrajectoryJSON(x, '');
  if (!r.ok) throw new Error(`not a trajectory: ${r.error}`);
  return r.value;
}

/** What an episode of the BugFix gym carries beyond the trajectory form: the whole task and info. */
const GymEpisodeSchema = v.object({
  task: loose({
    id: text(200),
    fname: v.string(),
    issue: v.string(),
    source: v.string(),
    kind: oneOf(OPS),
    template: v.string(),
  }),
  info: loose({
    submitted: bool(),
    hidden_pass: bool(),
    stop: oneOf(STOP_REASONS),
    n_invalid: finite(),
    n_turns: finite(),
    reads: finite(),
    tests: finite(),
    edits: finite(),
    edit_op: v.nullable(v.string()),
    task_id: v.string(),
    single_turn: bool(),
  }),
});

/**
 * Back from JSON to a Trajectory of the BugFix gym (the extras stay in the JSON), or why it is not
 * one (a task or info field the gym writes is missing: another tool's episode).
 */
export function fromTrajectoryJSON(j: TrajectoryJSON): Result<Trajectory> {
  const gym = parse(GymEpisodeSchema, { task: j.task, info: j.info }, 'episode');
  if (!gym.ok) return gym;
  const { task, info } = gym.value;
  return {
    ok: true,
    value: {
      ids: j.ids,
      owner: j.owner,
      turn: j.turn,
      actionMask: j.actionMask,
      logps: j.logps,
      reward: j.reward,
      info,
      task,
    },
  };
}
