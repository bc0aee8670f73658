/**
 * The inspector webview's entry point. Render functions take data and return DOM.
 */
import { OWNER_NAMES } from '../src/core/gym/episode.js';
import type { TrajectoryJSON } from '../src/core/gym/trajectory-json.js';

/** One chip per token, classed by owner. */
export function renderTokenStrip(doc: Document, t: TrajectoryJSON): HTMLElement {
  const strip = doc.createElement('div');
  strip.className = 'strip';
  t.tokens.forEach((text, i) => {
    const chip = doc.createElement('span');
    chip.className = `chip owner-${OWNER_NAMES[t.owner[i]]}`;
    chip.textContent = text === '\n' ? '\u21b5' : text;
    strip.appendChild(chip);
  });
  return strip;
}
