/**
 * A small run folder for the run view's tests (unit and e2e): `step_{N}.jsonl` files in the token
 * JSONL format (docs/formats.md), made from the committed fixtures jsonl-clean.jsonl (4 samples)
 * and jsonl-buggy.jsonl (8 samples, with injected mask bugs), so each step has 12 samples in 3
 * groups of 4 (`group` = index ÷ 4). Rewards are seeded per step; a group whose (group + step) is
 * a multiple of 3 has all rewards equal (no GRPO signal). Advantages are reward − group mean on
 * every token; the trainer's log-probs are moved away from the sampler's by (1 + step) times the
 * fixture's own difference, so the mismatch grows with the step.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rng } from '../src/core/rng.js';

const DUMPS = path.join(__dirname, 'fixtures', 'dumps');
const read = (name: string) =>
  fs
    .readFileSync(path.join(DUMPS, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

export const SAMPLES_PER_STEP = 12;
export const GROUP_SIZE = 4;

/** The records of step `step` (as written to its file). */
export function stepRecords(step: number): Record<string, unknown>[] {
  const base = [...read('jsonl-clean.jsonl'), ...read('jsonl-buggy.jsonl')].slice(0, SAMPLES_PER_STEP);
  const rng = new Rng(1000 + step);
  const rewards = base.map((_, i) => {
    const g = Math.floor(i / GROUP_SIZE);
    return (g + step) % 3 === 0 ? 1 : Math.round(rng.float() * 4) / 4;
  });
  return base.map((r, i) => {
    const g = Math.floor(i / GROUP_SIZE);
    const mates = rewards.slice(g * GROUP_SIZE, g * GROUP_SIZE + GROUP_SIZE);
    const mean = mates.reduce((a, b) => a + b, 0) / mates.length;
    const lp = r.logprobs as (number | null)[];
    const tlp = r.trainer_logprobs as (number | null)[];
    return {
      ...r,
      step,
      group: g,
      reward: rewards[i],
      advantages: (r.ids as number[]).map(() => rewards[i] - mean),
      trainer_logprobs: tlp.map((t, k) =>
        t === null || lp[k] === null ? t : lp[k]! + (t - lp[k]!) * (1 + step),
      ),
    };
  });
}

/** Write step `step`'s file into `dir` (whole, at once); returns its path. */
export function writeRunStep(dir: string, step: number): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `step_${step}.jsonl`);
  fs.writeFileSync(
    file,
    stepRecords(step)
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(''),
  );
  return file;
}
