/**
 * Checks of the loss mask: the arrays' lengths, the mask alone, and the mask against who wrote each
 * token (SampleContext's owners). The owner checks run only when owners are known and the mask is
 * not degenerate; a mask that is the owners' shifted by one is reported as that shift, instead of
 * the trained and untrained tokens it explains.
 */
import { OWNER } from '../../readers/sample.js';
import { type Hit, positionsWhere, type SampleContext } from './context.js';

/** length-mismatch: the arrays the reader found of another length than `ids`. */
export function checkLengths(c: SampleContext): Hit[] {
  return c.s.lengthIssues.map((issue) => ({
    positions: issue.position === null ? [] : [issue.position],
    message: issue.what,
  }));
}

/** mask-degenerate: no token trained, or every token. */
export function checkDegenerate(c: SampleContext): Hit[] {
  if (!c.degenerate) return [];
  if (c.trained === 0 && c.s.writerMasked) {
    c.notes.push(
      `samples the writer trains nothing of, saying why (${c.s.writerMasked}): its decision, not reported as mask-degenerate`,
    );
    return [];
  }
  return [
    {
      positions: [],
      message:
        c.trained === 0
          ? `no token of ${c.T} is trained`
          : `every one of ${c.T} tokens is trained, the prompt included`,
    },
  ];
}

/** mask-shift: the mask is the owners' mask shifted by one position. */
export function checkShift(c: SampleContext): Hit[] {
  if (!c.ownerChecks || c.shift === 0) return [];
  return [
    {
      positions: c.differs,
      message: `the mask is the correct one shifted ${c.shift > 0 ? 'right' : 'left'} by one: ${c.differs.length} tokens wrong, ${c.quote(c.differs)}`,
    },
  ];
}

/** mask-on-tool / mask-on-prompt / mask-on-template: trained tokens of owner `code` (`who` names it). */
export function checkTrainedOwner(code: number, who: string): (c: SampleContext) => Hit[] {
  return (c) => {
    if (!c.ownerChecks || c.shift !== 0) return [];
    const { mask, owners } = c;
    const ps = positionsWhere(0, c.T, (i) => mask[i] === 1 && owners.owner[i] === code);
    return ps.length
      ? [{ positions: ps, message: `${ps.length} ${who} tokens trained: ${c.quote(ps)}` }]
      : [];
  };
}

/** pad-is-eos: the pad id is the EOS, and generated EOS are masked out with the padding. */
export function checkPadIsEos(c: SampleContext): Hit[] {
  const padId = c.tok?.padId;
  if (c.ownerChecks) {
    const ps = c.untrainedEnds.pad;
    if (c.shift !== 0 || !ps.length) return [];
    return [
      {
        positions: ps,
        message: `pad id ${padId} is the EOS, and ${ps.length} generated EOS masked as padding: ${c.quote(ps)}`,
      },
    ];
  }
  if (c.templated || !c.padIsEos || padId === undefined) return [];
  // Owners unknown: an EOS right after a trained token, itself untrained, is a generated EOS masked as padding.
  const { mask, s } = c;
  const ps = positionsWhere(1, c.T, (i) => s.ids[i] === padId && !mask[i] && mask[i - 1] === 1);
  return ps.length
    ? [
        {
          positions: ps,
          message: `pad id ${padId} is the EOS, and ${ps.length} EOS after generated tokens masked: ${c.quote(ps)}`,
        },
      ]
    : [];
}

/** eos-not-trained: generated end-of-turn tokens (other than pad-is-eos's) left untrained. */
export function checkEosNotTrained(c: SampleContext): Hit[] {
  const ps = c.untrainedEnds.other;
  if (!c.ownerChecks || c.shift !== 0 || !ps.length) return [];
  return [{ positions: ps, message: `${ps.length} generated end-of-turn tokens untrained: ${c.quote(ps)}` }];
}

/** policy-not-trained: generated tokens, not an end of turn, left untrained. */
export function checkPolicyNotTrained(c: SampleContext): Hit[] {
  if (!c.ownerChecks || c.shift !== 0) return [];
  const ends = new Set(c.owners.ends);
  const { mask, owners } = c;
  const ps = positionsWhere(0, c.T, (i) => !mask[i] && owners.owner[i] === OWNER.policy && !ends.has(i));
  return ps.length
    ? [{ positions: ps, message: `${ps.length} generated tokens untrained: ${c.quote(ps)}` }]
    : [];
}
