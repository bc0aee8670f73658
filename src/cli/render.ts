/**
 * Text rendering of episodes for the terminal: tokens coloured by owner (ANSI) when the output is
 * a terminal, and a plain layout (one line per prompt, call and observation) otherwise.
 */
import { OWNER, OWNER_NAMES, type OwnerName, type Trajectory } from '../core/gym/episode.js';
import type { Tokenizer } from '../core/gym/tokenizer.js';

const ANSI: Record<OwnerName, string> = {
  template: '\x1b[90m', // grey
  prompt: '\x1b[33m', // yellow
  policy: '\x1b[1;32m', // bold green
  tool: '\x1b[36m', // cyan
};
const RESET = '\x1b[0m';

export interface RenderOptions {
  color: boolean;
}

function paint(text: string, owner: number, color: boolean): string {
  return color ? `${ANSI[OWNER_NAMES[owner]]}${text}${RESET}` : text;
}

export function legend(color: boolean): string {
  return `owners: ${OWNER_NAMES.map((n) => paint(n, OWNER[n], color)).join('  ')}`;
}

/** One line per segment (prompt, each call, each observation), tokens coloured by owner. */
export function renderEpisode(t: Trajectory, tok: Tokenizer, opts: RenderOptions): string {
  const lines: string[] = [];
  const segments: { label: string; from: number; to: number }[] = [];
  let i = 0;
  while (i < t.ids.length) {
    let j = i;
    const isObs = t.owner[i] === OWNER.template || t.owner[i] === OWNER.tool;
    const sameSegment = (k: number) =>
      isObs
        ? (t.owner[k] === OWNER.template || t.owner[k] === OWNER.tool) && t.turn[k] === t.turn[i]
        : t.owner[k] === t.owner[i] && t.turn[k] === t.turn[i];
    while (j < t.ids.length && sameSegment(j)) j++;
    const owner = t.owner[i];
    const label = owner === OWNER.prompt ? 'prompt' : owner === OWNER.policy ? `call ${t.turn[i]}` : '  obs';
    segments.push({ label, from: i, to: j });
    i = j;
  }
  for (const s of segments) {
    const toks: string[] = [];
    for (let k = s.from; k < s.to; k++) {
      const text = tok.token(t.ids[k]);
      toks.push(paint(text === '\n' ? '\\n' : text, t.owner[k], opts.color));
    }
    lines.push(`${s.label.padEnd(7)} ${toks.join(' ')}`);
  }
  return lines.join('\n');
}

/** The info line and the token counts per owner. */
export function renderSummary(t: Trajectory): string {
  const i = t.info;
  const yn = (b: boolean) => (b ? 'yes' : 'no');
  const counts = OWNER_NAMES.map((n) => `${n} ${t.owner.filter((o) => o === OWNER[n]).length}`).join(', ');
  return [
    `info    submitted ${yn(i.submitted)} | hidden pass ${yn(i.hidden_pass)} | stop ${i.stop} | turns ${i.n_turns}` +
      ` | invalid ${i.n_invalid} | reads ${i.reads} tests ${i.tests} edits ${i.edits} | reward ${t.reward.toFixed(2)}`,
    `tokens  ${t.ids.length} (${counts})`,
  ].join('\n');
}
