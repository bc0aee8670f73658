/**
 * Checks of the sampler's log-probs against the trainer's, on trained tokens where both are real.
 */
import { type Hit, range, type SampleContext } from './context.js';

const real = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/** logprob-gap: trained tokens whose two log-probs are more than `opts.logprobGap` (2) nats apart. */
export function checkLogprobGap(c: SampleContext): Hit[] {
  const a = c.s.samplerLogprobs;
  const b = c.s.trainerLogprobs;
  if (!a || !b) return [];
  const limit = c.opts.logprobGap ?? 2;
  const gap = range(0, c.T).map((i) => {
    const x = a[i];
    const y = b[i];
    return c.mask[i] && real(x) && real(y) ? Math.abs(x - y) : Number.NaN;
  });
  const ps = range(0, c.T).filter((i) => gap[i] > limit);
  if (!ps.length) return [];
  const worst = ps.reduce((w, i) => (gap[i] > gap[w] ? i : w), ps[0]);
  return [
    {
      positions: ps,
      message:
        `${ps.length} trained tokens with sampler and trainer log-probs more than ${limit} nats apart ` +
        `(largest ${gap[worst].toFixed(2)} at ${worst + c.s.offset} "${c.text(worst)}")`,
    },
  ];
}
