/** The episode table of a run: one row per episode of episodes.jsonl (src/core/browse/table.ts). */
import { type EpisodeTable, emptyTable, pushRow } from '../browse/table.js';
import { callTexts } from '../gym/episode.js';
import type { TrajectoryJSON } from '../gym/trajectory-json.js';

/** The outcome advantage of an episode: its advantage on the first trained position (null: none stored). */
function episodeAdvantage(e: TrajectoryJSON): number | null {
  if (!e.advantages) return null;
  const p = e.actionMask.indexOf(1);
  return p >= 0 ? e.advantages[p] : null;
}

/** Rows of a run's episodes, keyed `step:index`; the text searched is the calls, `|`-separated. */
export function runTable(
  episodes: readonly TrajectoryJSON[],
  tok: { decode(ids: readonly number[]): string },
): EpisodeTable {
  const t = emptyTable();
  for (const e of episodes)
    pushRow(t, {
      key: `${e.step ?? 0}:${e.index ?? 0}`,
      text: callTexts(e, tok)
        .map((c) => c.call)
        .join(' | '),
      step: e.step ?? null,
      index: e.index ?? null,
      task: e.task.id ?? null,
      kind: typeof e.task.kind === 'string' ? e.task.kind : null,
      group: e.group ?? null,
      pass: e.info.submitted && e.info.hidden_pass ? 1 : 0,
      reward: e.reward,
      advantage: episodeAdvantage(e),
      turns: e.info.n_turns,
      stop: e.info.stop,
      invalid: e.info.n_invalid,
      tokens: e.ids.length,
      flags: null,
    });
  return t;
}
