/**
 * Owners against a capture's record of who wrote each token. A capturing proxy (skyrl-capture)
 * rendered each prompt itself and stored, per completion, where the model's sampled tokens start
 * (`DumpSample.completions`): the tokens before are the generation scaffold its chat template wrote,
 * the tokens from there on are the model's. That is known, not inferred, so:
 * - each completion is compared with the owners the chat template gives (`CAPTURE_AGREE` or
 *   `CAPTURE_DISAGREE`, one note per completion, said once per file by `captureNote`);
 * - the owners the rules use inside each completion are the capture's (scaffold template, sampled
 *   policy), so a template the reader reads otherwise never makes a finding there.
 */
import { type DumpSample, OWNER } from '../../readers/sample.js';
import type { Owners } from '../../templates/owners.js';

/** Said per completion whose sampled tokens the template's owners give to the policy and its scaffold to no one else. */
export const CAPTURE_AGREE =
  "capture check: the chat template's owners agree with the capture's sampled_start";
/** Said per completion where the template's owners and the capture's sampled_start differ. */
export const CAPTURE_DISAGREE =
  "capture check: the chat template's owners differ from the capture's sampled_start";

/**
 * The owners of sample `s` with its capture's completions applied (module comment): a new Owners
 * when `s.completions` is set and the owners come from the template, else `owners` itself. Pushes
 * one of CAPTURE_AGREE / CAPTURE_DISAGREE to `notes` per completion compared. `endIds`: the
 * template's end-of-turn ids, for a completion whose last sampled token ends it.
 */
export function captureOwners(
  s: DumpSample,
  owners: Owners,
  endIds: ReadonlySet<number> | undefined,
  notes?: string[],
): Owners {
  const cs = s.completions;
  if (!cs?.length || owners.source !== 'template') return owners;
  const T = s.ids.length;
  const owner = [...owners.owner];
  const ends = new Set(owners.ends);
  for (const c of cs) {
    const start = Math.max(0, Math.min(c.start, T));
    const sampled = Math.max(start, Math.min(c.sampled, T));
    const end = Math.max(sampled, Math.min(c.end, T));
    let agree = true;
    for (let p = start; p < sampled; p++) {
      if (owner[p] === OWNER.policy) {
        agree = false;
        owner[p] = OWNER.template;
      }
      ends.delete(p);
    }
    for (let p = sampled; p < end; p++)
      if (owner[p] !== OWNER.policy) {
        agree = false;
        owner[p] = OWNER.policy;
      }
    const last = end - 1;
    if (last >= sampled && endIds?.has(s.ids[last])) ends.add(last);
    notes?.push(agree ? CAPTURE_AGREE : CAPTURE_DISAGREE);
  }
  return { ...owners, owner, ends: [...ends].sort((a, b) => a - b) };
}

/**
 * The file's one line about its completions, from how many agreed (`agree`) and differed
 * (`differ`): how many of the capture's completions the template's owners agree with, and, when
 * some differ, that the capture's owners were used there and what to check.
 */
export function captureNote(agree: number, differ: number): string {
  const n = agree + differ;
  const head = `owners from the chat template agree with the capture's sampled_start on ${agree} of ${n} completions`;
  if (!differ)
    return `${head}: the scaffold before it is the template's generation prompt, the tokens from it the policy's`;
  return `${head}; on the other ${differ} the template's owners put the scaffold or the sampled tokens elsewhere, so the lint used the capture's there (the capture rendered those prompts itself: check that the tokenizer and chat template given are the ones it used)`;
}
