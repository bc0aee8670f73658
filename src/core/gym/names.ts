/**
 * The gym's lists of names, with no code behind them, for the protocols and the front ends to
 * validate against: task splits and scripted policies (gym/tasks.ts and gym/scripted.ts implement
 * them).
 */

/** What `makeTasks` takes: a split, or both. */
export const TASK_SPLITS = ['train', 'heldout', 'all'] as const;
export type TaskSplit = (typeof TASK_SPLITS)[number];

/** The scripted policies by name: SCRIPTED plus the blind guesser (the commonest training op). */
export const SCRIPTED_POLICIES = ['oracle', 'uninformed', 'malformed', 'blind'] as const;
export type ScriptedPolicyName = (typeof SCRIPTED_POLICIES)[number];
