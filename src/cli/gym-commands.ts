/** `episode-lab gym` and `episode-lab tasks`: the gym without any model. */
import {
  buildTokenizer,
  compactSource,
  inferOp,
  makeEnv,
  makeReward,
  makeTasks,
  randomizeNames,
  runScripted,
  SCRIPTED_POLICIES,
  type ScriptedPolicyName,
  type Split,
  scriptedPolicyByName,
  TASK_SPLITS,
  type Task,
  toTrajectoryJSON,
} from '../core/index.js';
import { Rng } from '../core/rng.js';
import { type Command, UsageError } from './args.js';
import { legend, renderEpisode, renderSummary } from './render.js';

/** Resolve `--task` (an index into the split or a task id) to a task. */
export function pickTask(split: Split | 'all', which: string): Task {
  const tasks = makeTasks(split);
  if (/^\d+$/.test(which)) {
    const i = Number(which);
    if (i >= tasks.length)
      throw new UsageError(
        `--task ${i} is out of range: the ${split} split has tasks 0 to ${tasks.length - 1}`,
      );
    return tasks[i];
  }
  const t = makeTasks('all').find((x) => x.id === which);
  if (!t)
    throw new UsageError(`--task '${which}' is neither an index nor a task id (see: episode-lab tasks)`);
  return t;
}

export const gymCommand: Command = {
  name: 'gym',
  summary: 'Run one episode of the BugFix gym with a scripted policy and print it, tokens coloured by owner.',
  options: {
    split: { type: 'string', choices: TASK_SPLITS, default: 'train', help: 'task split' },
    task: { type: 'string', default: '0', metavar: 'N|ID', help: 'task index in the split, or a task id' },
    policy: {
      type: 'string',
      choices: SCRIPTED_POLICIES,
      default: 'oracle',
      help: 'scripted policy',
    },
    seed: { type: 'int', default: 1, min: 0, help: 'seed for renaming and the policy' },
    maxTurns: { type: 'int', default: 6, min: 1, help: 'turn budget' },
    maxEdits: { type: 'int', default: 1, min: 0, help: 'edit budget' },
    stepPenalty: { type: 'number', default: 0, help: 'reward: cost per call' },
    wrongSubmit: { type: 'number', default: 0, help: 'reward: verdict of a failing submission' },
    invalidPenalty: { type: 'number', default: 0, help: 'reward: cost per invalid call' },
    unsubmitted: { type: 'number', default: 0, help: 'reward: verdict of an episode that ends unsubmitted' },
    rename: { type: 'boolean', default: true, help: 'rename identifiers (--no-rename keeps the originals)' },
    json: { type: 'boolean', default: false, help: 'print the trajectory JSON instead' },
    color: { type: 'boolean', help: 'force colours on or off (default: on for a terminal)' },
  },
  run(o) {
    const all = makeTasks('all');
    const tok = buildTokenizer(all);
    const rng = new Rng(o.seed as number);
    const base = pickTask(o.split as Split | 'all', o.task as string);
    const task = o.rename ? randomizeNames(base, rng.fork()) : base;
    const env = makeEnv({
      maxTurns: o.maxTurns as number,
      maxEdits: o.maxEdits as number,
      reward: makeReward('hidden', {
        stepPenalty: o.stepPenalty as number,
        wrongSubmit: o.wrongSubmit as number,
        invalidPenalty: o.invalidPenalty as number,
        unsubmitted: o.unsubmitted as number,
      }),
    });
    const traj = runScripted(scriptedPolicyByName(o.policy as ScriptedPolicyName), env, task, tok, rng);
    if (o.json) {
      process.stdout.write(`${JSON.stringify(toTrajectoryJSON(traj, tok))}\n`);
      return 0;
    }
    const color = (o.color as boolean | undefined) ?? Boolean(process.stdout.isTTY && !process.env.NO_COLOR);
    const out = [
      `task    ${base.id} (${base.template}, bug ${base.kind})${o.rename ? `, renamed ${base.fname} -> ${task.fname}` : ''}, policy ${o.policy}, seed ${o.seed}`,
      renderEpisode(traj, tok, { color }),
      renderSummary(traj),
    ];
    if (color) out.push(legend(color));
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  },
};

export const tasksCommand: Command = {
  name: 'tasks',
  summary: 'List the tasks of the BugFix gym: id, template, bug kind (and what inferOp reads), issue.',
  options: {
    split: { type: 'string', choices: TASK_SPLITS, default: 'all', help: 'task split' },
    source: { type: 'boolean', default: false, help: 'also print each buggy source' },
    json: { type: 'boolean', default: false, help: 'print JSON lines' },
  },
  run(o) {
    const tasks = makeTasks(o.split as Split | 'all');
    if (o.json) {
      for (const t of tasks) process.stdout.write(`${JSON.stringify(t)}\n`);
      return 0;
    }
    const tok = buildTokenizer(makeTasks('all'));
    const rows = tasks.map((t, i) => [
      String(i),
      t.id,
      t.template,
      t.kind,
      String(compactSource(t.source).split(' ').length),
      t.issue,
    ]);
    const head = ['#', 'id', 'template', 'bug (fix op)', 'read tokens', 'issue'];
    const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
    const fmt = (r: string[]) =>
      r
        .map((x, c) => x.padEnd(widths[c]))
        .join('  ')
        .trimEnd();
    const lines = [fmt(head), ...rows.map(fmt)];
    if (o.source)
      for (const t of tasks) {
        lines.push('', `${t.id}  (inferOp: ${inferOp(t.source)})`, t.source);
      }
    lines.push(
      '',
      `${tasks.length} tasks; vocabulary ${tok.size} tokens; held-out templates never occur in training.`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
