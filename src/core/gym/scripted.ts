/**
 * Scripted policies, for tests, demos and the supervised data of the RL base agent. Each one
 * looks at the episode so far (what a model would see) and writes the next call's text.
 */
import type { Rng } from '../rng.js';
import type { Env } from './env.js';
import { Episode, makeTrajectory, OWNER, type Trajectory } from './episode.js';
import type { ScriptedPolicyName } from './names.js';
import { inferOp, makeTasks, OPS, type Op, type Task } from './tasks.js';
import type { Tokenizer } from './tokenizer.js';

export interface ScriptedPolicy {
  readonly name: string;
  /** The next call's text, for example `<call> read </call>`. */
  next(ep: Episode, rng: Rng): string;
}

/** The text of the tool output that answered call k ('' if none). */
export function observationOf(ep: Episode, k: number): string {
  const ids = ep.ids.filter((_, i) => ep.owner[i] === OWNER.tool && ep.turn[i] === k);
  return ep.tok.decode(ids);
}

/** Tool names of the calls made so far (`?` for an invalid call). */
function toolsSoFar(ep: Episode): string[] {
  return ep.actions.map((a) => a.text.split(' ')[1] ?? '?');
}

const call = (...inner: string[]) => `<call> ${inner.join(' ')} </call>`;

/** Reads, edits with `inferOp` of what it read, submits: passes every task. */
export const oracle: ScriptedPolicy = {
  name: 'oracle',
  next(ep) {
    const tools = toolsSoFar(ep);
    const readAt = tools.indexOf('read');
    if (readAt < 0) return call('read');
    if (!tools.includes('edit')) {
      const op = inferOp(observationOf(ep, readAt));
      return call('edit', op ?? OPS[0]);
    }
    return call('submit');
  },
};

/** The most common operation among tasks (ties broken by the order of OPS). */
export function commonestOp(tasks: readonly Task[]): Op {
  const counts = new Map<Op, number>(OPS.map((o) => [o, 0]));
  for (const t of tasks) counts.set(t.kind, (counts.get(t.kind) ?? 0) + 1);
  return OPS.reduce((best, o) => ((counts.get(o) ?? 0) > (counts.get(best) ?? 0) ? o : best), OPS[0]);
}

/** Edits with one fixed operation without reading, then submits: the blind-guess ceiling. */
export function blindGuesser(op: Op): ScriptedPolicy {
  return {
    name: `blind(${op})`,
    next(ep) {
      return ep.nCalls === 0 ? call('edit', op) : call('submit');
    },
  };
}

/** Makes every kind of invalid call once, then a valid edit, a refused second edit, and submits. */
export const malformed: ScriptedPolicy = {
  name: 'malformed',
  next(ep) {
    const script = [
      call('edit'), // malformed: edit without its operation
      call('fix'), // unknown tool
      call('edit', 'ok'), // unknown operation
      call('read', 'read'), // malformed: read takes no argument
      '<call> read', // malformed: no call end
      call('edit', 'fix_init'),
      call('edit', 'fix_return'), // beyond the edit budget
    ];
    return script[ep.nCalls] ?? call('submit');
  },
};

type Tool = 'read' | 'test' | 'edit' | 'submit';

/**
 * The uninformed habits, as cumulative shares of the next valid call. A careful habit: it usually
 * runs the tests before it reads, so a read tends to come late (an episode that reads takes 4 turns
 * or more). Reading is neutral for the outcome: after a read it edits as often as without one, with
 * an operation drawn independently of it.
 */
const HABITS: Record<'first' | 'afterTest' | 'afterRead' | 'afterEdit', readonly [Tool, number][]> = {
  first: [
    ['test', 0.4],
    ['read', 0.52],
    ['edit', 0.92],
    ['submit', 1],
  ],
  afterTest: [
    ['read', 0.6],
    ['test', 0.64],
    ['edit', 0.94],
    ['submit', 1],
  ],
  afterRead: [
    ['test', 0.22],
    ['edit', 0.93],
    ['submit', 1],
  ],
  afterEdit: [
    ['test', 0.4],
    ['submit', 1],
  ],
};

/**
 * The supervised behaviour of the RL base agent: format-correct but uninformed. It reads
 * sometimes, tests sometimes, edits with an operation drawn independently of the source, submits
 * early, and makes a malformed or unknown call in about 2 % of turns.
 */
export const uninformed: ScriptedPolicy = {
  name: 'uninformed',
  next(ep, rng) {
    if (rng.float() < 0.02)
      return rng.choice([call('edit'), call('fix'), call('edit', 'ok'), call('read', 'read')]);
    const tools = toolsSoFar(ep);
    const shares = tools.includes('edit')
      ? HABITS.afterEdit
      : tools.includes('read')
        ? HABITS.afterRead
        : tools.includes('test')
          ? HABITS.afterTest
          : HABITS.first;
    const tool = pickTool(rng.float(), shares);
    return tool === 'edit' ? call('edit', rng.choice(OPS)) : call(tool);
  },
};

/** The first tool whose cumulative share exceeds u (shares ascending, the last one 1). */
function pickTool(u: number, shares: readonly [Tool, number][]): Tool {
  return (shares.find(([, upTo]) => u < upTo) ?? shares[shares.length - 1])[0];
}

export const SCRIPTED: Record<string, ScriptedPolicy> = { oracle, malformed, uninformed };

export { SCRIPTED_POLICIES, type ScriptedPolicyName } from './names.js';

export function scriptedPolicyByName(name: ScriptedPolicyName): ScriptedPolicy {
  return name === 'blind' ? blindGuesser(commonestOp(makeTasks('train'))) : SCRIPTED[name];
}

/**
 * A long-horizon scripted policy: reads until two turns remain, then edits with the operation
 * `inferOp` reads off the last observation it got (the first operation if none shows), then
 * submits. It makes the 256-token context overflow once the budget allows enough reads.
 */
export const longReader: ScriptedPolicy = {
  name: 'long reader',
  next(ep) {
    const left = ep.env.maxTurns - ep.nCalls;
    if (left > 2) return '<call> read </call>';
    if (left === 2) {
      const op = ep.nCalls > 0 ? inferOp(observationOf(ep, ep.nCalls - 1)) : null;
      return `<call> edit ${op ?? OPS[0]} </call>`;
    }
    return '<call> submit </call>';
  },
};

/** Run one scripted episode to its end. */
export function runScripted(
  policy: ScriptedPolicy,
  env: Env,
  task: Task,
  tok: Tokenizer,
  rng: Rng,
  maxLen?: number,
): Trajectory {
  const ep = new Episode(env, task, tok, maxLen);
  while (!ep.done) ep.act(tok.encode(policy.next(ep, rng)));
  return makeTrajectory(ep);
}
