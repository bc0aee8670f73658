/**
 * A batch's behaviour in one line of text: the extension's progress notifications and logs, and
 * the CLI's per-step and summary lines, all write it with `statsLine`.
 */
import type { BehaviorStats } from '../rl/grpo.js';
import { stepLabel } from './run-files.js';

/** The statistics a line shows. */
export type LineStats = Pick<BehaviorStats, 'pass_rate' | 'reads' | 'tests' | 'edits' | 'turns' | 'reward'>;

/** How a line reads: its separator, the pass rate's decimals, whether edits show, whether a reward >= 0 gets a `+`. */
export interface LineForm {
  sep: string;
  passDigits: number;
  edits: boolean;
  signed: boolean;
}

/** The extension's: `pass 0.12, reads 1.00, tests 0.50, turns 3.00, reward 0.123`. */
export const PROGRESS_FORM: LineForm = { sep: ', ', passDigits: 2, edits: false, signed: false };
/** The CLI's summary of a batch: `pass 0.123 | reads 1.00 | tests 0.50 | edits 1.00 | turns 3.00 | reward +0.123`. */
export const CLI_FORM: LineForm = { sep: ' | ', passDigits: 3, edits: true, signed: true };
/** The CLI's line per training step: the summary's form, the pass rate to 2 decimals. */
export const CLI_STEP_FORM: LineForm = { ...CLI_FORM, passDigits: 2 };

/** The statistics in one line, in `form` (reads, tests, edits, turns to 2 decimals, the reward to 3). */
export function statsLine(s: LineStats, form: LineForm): string {
  const fields = [
    `pass ${s.pass_rate.toFixed(form.passDigits)}`,
    `reads ${s.reads.toFixed(2)}`,
    `tests ${s.tests.toFixed(2)}`,
  ];
  if (form.edits) fields.push(`edits ${s.edits.toFixed(2)}`);
  fields.push(
    `turns ${s.turns.toFixed(2)}`,
    `reward ${form.signed && s.reward >= 0 ? '+' : ''}${s.reward.toFixed(3)}`,
  );
  return fields.join(form.sep);
}

/** A training step as the extension reports it: `step 3 (4/40): pass 0.12, reads 1.00, ...`. */
export function stepProgress(step: number, total: number, s: LineStats): string {
  return `${stepLabel(step, total)}: ${statsLine(s, PROGRESS_FORM)}`;
}
