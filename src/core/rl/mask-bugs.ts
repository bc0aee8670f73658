/**
 * The mask bugs the mask debugger can inject (see mask-check.ts for what each one does), as a list
 * and labels with no TensorFlow.js behind them: the webview and the protocols import these.
 */

export const MASK_BUGS = ['correct', 'tool', 'template', 'shift', 'zero', 'truncated'] as const;
export type MaskBug = (typeof MASK_BUGS)[number];

/** What the selector shows for each choice. */
export const MASK_BUG_LABELS: Record<MaskBug, string> = {
  correct: 'Correct mask (policy tokens only)',
  tool: 'Bug: train on tool tokens',
  template: 'Bug: train on observation template tokens',
  shift: 'Bug: off-by-one shift of the mask',
  zero: 'Bug: all-zero mask',
  truncated: 'Bug: truncated episode, mask not updated',
};

export function isMaskBug(x: unknown): x is MaskBug {
  return typeof x === 'string' && (MASK_BUGS as readonly string[]).includes(x);
}
