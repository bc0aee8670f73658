/**
 * The interface every dump format implements: one module per format (nemo-rl.ts, prime-rl.ts, ...),
 * registered once in index.ts, from which detection, the format ids, the CLI's `--format` and the
 * docs' table of formats come.
 */
import type { DumpSample, Read } from '../sample.js';

/** The DumpSample fields a format can fill (the names are DumpSample's own). */
export const CARRIED_FIELDS = [
  'ids',
  'lossMask',
  'owner',
  'tokens',
  'messages',
  'tools',
  'samplerLogprobs',
  'trainerLogprobs',
  'advantages',
  'reward',
  'step',
  'group',
  'episode',
] as const satisfies readonly (keyof DumpSample)[];
export type CarriedField = (typeof CARRIED_FIELDS)[number];

export interface DumpReader<Id extends string = string> {
  /** The `--format` id (`nemo-rl`, `jsonl`, ...). */
  id: Id;
  /** The writer's name as users know it (`NeMo-RL`). */
  label: string;
  /** Where the layout was read from: the writer's repository, commit and files. */
  source: string;
  /** The fields a record is recognised by, as an error message lists them. */
  fields: string;
  /** Whether one parsed JSON object (a line of the file) is a record of this format. */
  detect(record: object): boolean;
  /** The samples of one parsed record (`index`: its 0-based line), or the Rejection naming the field. */
  read(record: unknown, index: number): Read<DumpSample[]>;
  /** The DumpSample fields the format has a place for (a given file may still leave them out). */
  carries: readonly CarriedField[];
}
