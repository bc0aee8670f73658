/**
 * The lint's truth report: seeded conversations (conversations.ts) made into token streams by each
 * sampler convention, written in the formats trainers dump, linted with each family's real
 * tokenizer and chat template, and compared with what each line must give.
 *
 * - Clean lines must give no finding at all.
 * - A bug line has one mask-bug class injected at random positions (BUG_CLASSES) and must give its
 *   rule at exactly those positions; any other finding on it is counted as extra. A bug the ids
 *   cannot show (the same ids and mask as a clean stream of another convention) is counted as
 *   undetectable, with its reason, and not linted as a miss.
 *
 * `truthReport({ perCell, perBug, seed })` promises one row per family x convention (with `perCell`
 * clean conversations and `perBug` lines of each bug class spread over the cells of a family) and
 * the markdown table; `npm run bench:truth` prints it (docs/truth-report.md quotes it). Options:
 * `--per-cell N --per-bug N --seed S --families a,b --conventions c,d --keep DIR` (the files linted).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lintFile } from '../src/core/dumps/index.js';
import type { RuleId } from '../src/core/dumps/lint/rules.js';
import { OWNER } from '../src/core/dumps/readers/sample.js';
import { chatTemplateRenderer } from '../src/core/dumps/templates/template-probe.js';
import { Rng } from '../src/core/rng.js';
import {
  CONVENTIONS,
  type Convention,
  conventionApplies,
  prefilledStream,
  randomConversation,
  wholeStream,
} from './conversations.js';
import { FAMILY_NAMES, type FamilyName, family, type Stream, streamOf } from './make-template-fixtures.js';
import { nemoRlLine, runs } from './measure-owners.js';

/** The families measured: every real tokenizer and template pair here, and GLM-4.5's written template (not `unseen`, a probe test). */
export const TRUTH_FAMILIES = FAMILY_NAMES.filter((f): f is Exclude<FamilyName, 'unseen'> => f !== 'unseen');

export const BUG_CLASSES = [
  'mask-on-tool',
  'mask-on-prompt',
  'mask-on-template',
  'eos-not-trained',
  'policy-not-trained',
  'mask-shift',
  'render-drift',
] as const;
export type BugClass = (typeof BUG_CLASSES)[number];

/** The line formats a convention's streams are written in, in turn. */
const FORMATS: Record<Convention, readonly TruthFormat[]> = {
  'turn by turn': ['jsonl + messages', 'jsonl', 'nemo-rl'],
  whole: ['jsonl + messages', 'jsonl', 'nemo-rl'],
  'prefilled headers': ['jsonl + messages', 'jsonl', 'nemo-rl'],
  'per-turn': ['verifiers turns'],
};
export type TruthFormat = 'jsonl + messages' | 'jsonl' | 'nemo-rl' | 'verifiers turns';

/** A finding a line must give. */
interface Expected {
  rule: RuleId;
  positions: number[];
  /**
   * The same finding at other positions, equally right: an extra separator beside a newline the
   * template writes reads as starting at either (the text cannot say which newline is extra).
   */
  or?: number[];
}

/** One line of a cell's file: its stream (ids and mask, maybe bugged), its format and what it must give. */
interface TruthLine {
  stream: Stream;
  mask: number[];
  ids: number[];
  format: TruthFormat;
  bug?: BugClass;
  expect: Expected[];
  /** Other sets of findings that are equally right (a joint the ids cannot settle). */
  alternatives?: Expected[][];
}

/** A bug that could not be injected as detectable, and why. */
interface Undetectable {
  bug: BugClass;
  why: string;
}

/** The stream of a conversation by a convention, with the last completion cut at a random token or not. */
export function makeStream(name: FamilyName, c: Convention, rng: Rng): Stream {
  const conv = randomConversation(name, rng);
  const whole = c === 'whole' ? wholeStream(name, conv, null) : undefined;
  const full =
    whole ?? (c === 'prefilled headers' ? prefilledStream(name, conv, null) : streamOf(name, conv, null));
  if (rng.float() < 0.5) return full;
  const last = full.pieces.filter((p) => p.kind === 'completion').at(-1);
  if (!last) return full;
  const end = full.ends.at(-1) ?? full.ids.length - 1;
  const len = end - last.start + 1;
  if (len < 2) return full;
  return cutAt(full, last.start + 1 + rng.int(len - 1));
}

/** The stream cut before token `keep` (the sampler stopped inside the last completion). */
function cutAt(s: Stream, keep: number): Stream {
  return {
    ...s,
    ids: s.ids.slice(0, keep),
    owner: s.owner.slice(0, keep),
    mask: s.mask.slice(0, keep),
    undecidable: s.undecidable.filter((u) => u < keep),
    ends: s.ends.filter((e) => e < keep - 1),
    pieces: s.pieces.filter((p) => p.start < keep),
  };
}

/** A random non-empty stretch of a run. */
function stretch(rng: Rng, run: number[]): number[] {
  const a = rng.int(run.length);
  const b = a + rng.int(run.length - a);
  return run.slice(a, b + 1);
}

const range = (a: number, b: number) => Array.from({ length: b - a }, (_, k) => a + k);

const prefills = new Map<FamilyName, string>();

/**
 * The text a family's template adds to its generation prompt with `enable_thinking` false only
 * (Qwen3's and GLM-4.5's empty think block), '' when none: the generation prompts of the two
 * renders compared.
 */
export function thinkingOffPrefill(name: FamilyName): string {
  const known = prefills.get(name);
  if (known !== undefined) return known;
  const f = family(name);
  const prompt = (on: boolean) => {
    const r = chatTemplateRenderer(f.template, f.specials, { ...f.kwargs, enable_thinking: on });
    if (!r.ok) return null;
    const out = r.value([{ role: 'user', content: 'Uqzxone' }], { addGenerationPrompt: true });
    return out.ok ? out.value : null;
  };
  const on = prompt(true);
  const off = prompt(false);
  const text =
    on !== null && off !== null && off.length > on.length && off.startsWith(on) ? off.slice(on.length) : '';
  prefills.set(name, text);
  return text;
}

/**
 * Inject `bug` into the stream at random positions: the ids and mask a buggy trainer would write and
 * the findings they must give, or why the ids cannot show it (undetectable), or null when the
 * stream has no place for it (no tool turn, say).
 */
export function inject(
  s: Stream,
  bug: BugClass,
  format: TruthFormat,
  convention: Convention,
  rng: Rng,
): { ids: number[]; mask: number[]; expect: Expected[]; alternatives?: Expected[][] } | Undetectable | null {
  const f = family(s.family);
  const tok = f.tok;
  const owned = (o: number) =>
    s.ids.map((_, i) => i).filter((i) => s.owner[i] === o && !s.undecidable.includes(i));
  const setMask = (ps: number[], value: 0 | 1) => {
    const mask = s.mask.slice();
    for (const p of ps) mask[p] = value;
    return mask;
  };
  const completions = s.pieces.filter((p) => p.kind === 'completion');
  const completionEnd = (p: { start: number }) => {
    const next = s.pieces[s.pieces.indexOf(p as (typeof s.pieces)[number]) + 1];
    return next ? next.start : s.ids.length;
  };
  const header = (start: number) => {
    // A channel header at a completion's start: <|channel|>NAME<|message|>.
    if (tok.text(s.ids[start]) !== '<|channel|>') return null;
    for (let i = start; i < s.ids.length && i < start + 8; i++)
      if (tok.text(s.ids[i]) === '<|message|>') return i;
    return null;
  };
  /** How many tokens from `at` spell the family's thinking-off pre-fill (0: none there). */
  const prefillAt = (at: number): number => {
    const text = thinkingOffPrefill(s.family);
    if (!text) return 0;
    let spelled = '';
    for (let i = at; i < s.ids.length && spelled.length < text.length; i++) {
      spelled += tok.text(s.ids[i]);
      if (spelled === text) return i - at + 1;
    }
    return 0;
  };
  /** The untrained channel header the sampler pre-filled right before position `at` (prefilled convention), else []. */
  const prefilledHeaderBefore = (at: number): number[] => {
    if (convention !== 'prefilled headers' || !completions.some((p) => p.start === at)) return [];
    if (tok.text(s.ids[at - 1]) !== '<|message|>') return [];
    let h = at - 1;
    while (h > 0 && at - h < 8 && tok.text(s.ids[h]) !== '<|channel|>') h--;
    return tok.text(s.ids[h]) === '<|channel|>' ? range(h, at) : [];
  };
  switch (bug) {
    case 'mask-on-tool':
    case 'mask-on-prompt': {
      const all = runs(owned(bug === 'mask-on-tool' ? OWNER.tool : OWNER.prompt));
      if (!all.length) return null;
      const ps = stretch(rng, rng.choice(all));
      return { ids: s.ids, mask: setMask(ps, 1), expect: [{ rule: bug, positions: ps }] };
    }
    case 'mask-on-template': {
      const all = runs(owned(OWNER.template));
      if (!all.length) return null;
      const run = rng.choice(all);
      if (convention === 'prefilled headers' && completions.some((p) => p.start === run.at(-1)! + 1)) {
        const h = run.filter((i) => i >= run.at(-1)! + 1 - 8 && tok.text(s.ids[i]) === '<|channel|>').at(-1);
        if (h !== undefined && rng.float() < 0.5)
          return {
            bug,
            why: 'a pre-filled channel header trained is the ids and mask of a completion whose model wrote that header',
          };
      }
      const ps = stretch(rng, run);
      // Without the record's tools (formats that do not carry them), the tool definitions the
      // template writes read as the text of the turn they sit in (a system or user turn): prompt.
      // GPT-OSS writes them in a developer message that has no header of its own without a system
      // prompt (`# Instructions`): template there, as it is.
      const sitsInTurn = s.family !== 'gpt-oss' || s.messages[0]?.role === 'system';
      const readsDefs = format !== 'jsonl + messages' && sitsInTurn && Boolean(s.toolDefs?.length);
      const defs = readsDefs ? ps.filter((p) => s.toolDefs?.includes(p)) : [];
      const touches = readsDefs && ps.some((p) => s.toolDefs?.includes(p - 1) || s.toolDefs?.includes(p + 1));
      if (defs.length || touches) {
        const rest = ps.filter((p) => !defs.includes(p));
        const split = (asPrompt: number[], asTemplate: number[]): Expected[] => [
          ...(asTemplate.length ? [{ rule: bug, positions: asTemplate }] : []),
          ...(asPrompt.length ? [{ rule: 'mask-on-prompt' as RuleId, positions: asPrompt }] : []),
        ];
        // A token at the joint of the definitions and the template's text around them may be read
        // with either (which of the two a straddling token belongs to is not the same question
        // for text the record does not carry): each reading of the joint counts.
        const inDefs = (p: number) => s.toolDefs?.includes(p) ?? false;
        const joints = ps.filter((p) => inDefs(p) !== inDefs(p - 1) || inDefs(p) !== inDefs(p + 1));
        const edges = joints.length > 4 ? [...joints.slice(0, 2), ...joints.slice(-2)] : joints;
        const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
        // Every way of reading the joint tokens (the first two and the last two).
        const alternatives: Expected[][] = [];
        for (let m = 1; m < 1 << Math.min(edges.length, 4); m++) {
          const flip = edges.filter((_, k) => m & (1 << k));
          const prompt = ps.filter((p) => inDefs(p) !== flip.includes(p));
          alternatives.push(
            split(
              sorted(prompt),
              ps.filter((p) => !prompt.includes(p)),
            ),
          );
        }
        return {
          ids: s.ids,
          mask: setMask(ps, 1),
          expect: split(defs, rest),
          alternatives,
        };
      }
      // A pre-filled header partly trained is read as the model's (the mask settles it, as the
      // lint's rules say): its untrained tokens are then policy-not-trained, its trained ones fine.
      const hdr = prefilledHeaderBefore(run.at(-1)! + 1);
      if (hdr.length && ps.some((p) => hdr.includes(p))) {
        const rest = ps.filter((p) => !hdr.includes(p));
        const untrained = hdr.filter((p) => !ps.includes(p));
        return {
          ids: s.ids,
          mask: setMask(ps, 1),
          expect: [
            ...(rest.length ? [{ rule: bug, positions: rest }] : []),
            ...(untrained.length ? [{ rule: 'policy-not-trained' as RuleId, positions: untrained }] : []),
          ],
        };
      }
      return { ids: s.ids, mask: setMask(ps, 1), expect: [{ rule: bug, positions: ps }] };
    }
    case 'eos-not-trained': {
      if (!s.ends.length) return null;
      const picked = s.ends.filter(() => rng.float() < 0.5);
      if (!picked.length) picked.push(rng.choice(s.ends));
      const pad = tok.padId === undefined ? [] : picked.filter((e) => s.ids[e] === tok.padId);
      const other = picked.filter((e) => !pad.includes(e));
      return {
        ids: s.ids,
        mask: setMask(picked, 0),
        expect: [
          ...(other.length ? [{ rule: 'eos-not-trained' as RuleId, positions: other }] : []),
          ...(pad.length ? [{ rule: 'pad-is-eos' as RuleId, positions: pad }] : []),
        ],
      };
    }
    case 'policy-not-trained': {
      if (!completions.length) return null;
      const p = rng.choice(completions);
      const body = range(p.start, completionEnd(p)).filter((i) => !s.ends.includes(i) && s.mask[i] === 1);
      if (!body.length) return null;
      const ps = stretch(rng, body);
      // An empty think block at a completion's start, untrained, is the one the template pre-fills
      // when thinking is off (the mask settles it, as the rules say); untrained with the token after
      // it, it is that pre-fill under a mask shifted right by one (when the completion ends its
      // sample, the lint may read it so).
      const k = prefillAt(p.start);
      if (k > 0 && ps[0] === p.start && ps.length === k)
        return {
          bug,
          why: 'an untrained empty think block at a completion’s start is the ids and mask of the one a template pre-fills with thinking off',
        };
      const h = header(p.start);
      // The same for a channel header the renderer may have pre-filled (GPT-OSS).
      const pre = k || (h !== null ? h - p.start + 1 : 0);
      const shifted: Expected[][] =
        pre > 0 && ps[0] === p.start && ps.length === pre + 1
          ? [[{ rule: 'mask-shift', positions: [ps[pre]] }]]
          : [];
      if (h !== null && ps[0] === p.start && ps.at(-1) === h)
        return {
          bug,
          why: 'an untrained channel header at a completion’s start is the ids and mask of a header the renderer pre-filled',
        };
      // The token after a pre-filled header left untrained: the mask no longer says the header was
      // pre-filled, and it is read as the model's (untrained too).
      const hdr = prefilledHeaderBefore(p.start);
      const all = hdr.length && ps[0] === p.start ? [...hdr, ...ps] : ps;
      return {
        ids: s.ids,
        mask: setMask(ps, 0),
        expect: [{ rule: bug, positions: all }],
        ...(shifted.length ? { alternatives: shifted } : {}),
      };
    }
    case 'mask-shift': {
      const mask = [0, ...s.mask.slice(0, -1)];
      const moved = mask.map((m, i) => (m !== s.mask[i] ? i : -1)).filter((i) => i >= 0);
      return { ids: s.ids, mask, expect: [{ rule: bug, positions: moved }] };
    }
    case 'render-drift': {
      // An extra "\n" (a space after a newline) before the first marker the template writes after a
      // completion's end.
      const ends = s.ends.filter((e) => e < s.ids.length - 1);
      if (!ends.length) return null;
      const e = rng.choice(ends);
      let q = e + 1;
      // The next marker: a special token, or an added token written like one (DeepSeek V3's `<｜…｜>`).
      const marker = (id: number) => tok.specialIds.has(id) || /^<[|｜]\S*[|｜]>$/.test(tok.text(id));
      while (q < s.ids.length && !marker(s.ids[q])) q++;
      if (q >= s.ids.length || s.owner.slice(e + 1, q + 1).some((o) => o === OWNER.policy)) return null;
      if (f.stop && format !== 'jsonl + messages')
        return {
          bug,
          why: 'the model stops by writing the next role’s marker: a separator after it reads as that role’s text without the messages to re-render',
        };
      const nl = tok.encode('\n');
      // Beside a `\n` already there (Qwen3 ends a turn with one, DeepSeek V3 opens later tool
      // outputs with one), the extra one is either of the two.
      const beside = q - 1 > e && tok.text(s.ids[q - 1]).endsWith('\n');
      return {
        ids: [...s.ids.slice(0, q), ...nl, ...s.ids.slice(q)],
        mask: [...s.mask.slice(0, q), ...nl.map(() => 0), ...s.mask.slice(q)],
        expect: [{ rule: bug, positions: [q], ...(beside ? { or: [q - 1] } : {}) }],
      };
    }
  }
}

/** One line of a format (the documented token JSONL, NeMo-RL's train_data, a verifiers trajectory). */
export function formatLine(line: TruthLine, idx: number): string {
  const s = line.stream;
  const f = family(s.family);
  const kwargs = Object.keys(f.kwargs).length ? { chat_template_kwargs: f.kwargs } : {};
  const messages = s.messages.map(({ toolResult: _, ...m }) => m);
  switch (line.format) {
    case 'jsonl + messages':
      return JSON.stringify({
        ids: line.ids,
        loss_mask: line.mask,
        messages,
        ...(s.tools ? { tools: s.tools } : {}),
        ...kwargs,
      });
    case 'jsonl':
      return JSON.stringify({ ids: line.ids, loss_mask: line.mask, ...kwargs });
    case 'nemo-rl':
      return nemoRlLine(s.family, line.ids, line.mask, messages, idx);
    case 'verifiers turns': {
      // Each call: the ids before its completion as the prompt, the completion as sampled.
      const starts = s.pieces.filter((p) => p.kind === 'completion').map((p) => p.start);
      const trajectory = starts.map((start, k) => {
        const end =
          starts[k + 1] !== undefined
            ? (s.pieces.find((p) => p.start > start)?.start ?? line.ids.length)
            : line.ids.length;
        return {
          tokens: {
            prompt_ids: line.ids.slice(0, start),
            prompt_mask: line.mask.slice(0, start),
            completion_ids: line.ids.slice(start, end),
            completion_mask: line.mask.slice(start, end),
            completion_logprobs: line.ids.slice(start, end).map((_, i) => -((i % 7) + 1) / 10),
          },
        };
      });
      return JSON.stringify({ example_id: idx, trajectory });
    }
  }
}

/** One row of the report: a family in a convention. */
export interface TruthRow {
  family: FamilyName;
  convention: Convention;
  /** Why the convention does not apply to the family (then no line was made). */
  na?: string;
  clean: number;
  cleanFindings: number;
  /** Conversations the generator could not make into a stream, and the first reason. */
  unmade: number;
  unmadeWhy?: string;
  /** Per bug class: lines made, found exactly, undetectable (with the reason). */
  bugs: Partial<Record<BugClass, { lines: number; found: number; undetectable: number; why?: string }>>;
  /** Findings that should not be there, and expected ones missed: `line rule [positions]` (the first few). */
  extra: string[];
  missed: string[];
  /** Lines by format. */
  formats: Partial<Record<TruthFormat, number>>;
}

/** A finding as `line rule [positions]`, a long run of positions written `a..b`. */
const key = (line: number, f: { rule: string; positions?: number[] }) =>
  `${line} ${f.rule} [${runs(f.positions ?? [])
    .map((r) => (r.length > 2 ? `${r[0]}..${r.at(-1)}` : r.join(',')))
    .join(',')}]`;

/** Lint one cell's lines (a file per format) and fill its row. */
async function lintCell(dir: string, row: TruthRow, all: TruthLine[]): Promise<void> {
  const f = family(row.family);
  for (const format of new Set(all.map((l) => l.format))) {
    const lines = all.filter((l) => l.format === format);
    const file = path.join(dir, `${row.family}.${row.convention}.${format}.jsonl`.replace(/[^\w.-]+/g, '-'));
    fs.writeFileSync(file, `${lines.map((l, i) => formatLine(l, i)).join('\n')}\n`);
    const r = await lintFile(file, { tok: f.tok, templateKwargs: f.kwargs, maxFindings: 1e9 });
    if (!r.ok) throw new Error(r.error);
    if (r.value.rejections.length) throw new Error(`${file}: ${JSON.stringify(r.value.rejections[0])}`);
    const got = new Map<number, string[]>();
    for (const x of r.value.findings) {
      const k = x.sample ?? -1;
      got.set(k, [...(got.get(k) ?? []), key(k, x)]);
    }
    // A finding about the whole file is false on any file of generated lines (each fits its tokenizer).
    for (const x of r.value.fileFindings) {
      row.cleanFindings++;
      row.extra.push(`${key(-1, x)} (${format})`);
    }
    lines.forEach((l, i) => {
      const have = got.get(i) ?? [];
      // Each expected finding as it was meant, or as its equally right alternative when that is what the lint says.
      const keysOf = (xs: readonly Expected[]) =>
        xs.map((e) => {
          const alt = e.or && key(i, { ...e, positions: e.or });
          return alt && have.includes(alt) ? alt : key(i, e);
        });
      const sets = [l.expect, ...(l.alternatives ?? [])].map(keysOf);
      const want = sets.find((ks) => ks.every((w) => have.includes(w))) ?? sets[0];
      const tag = (k: string) => `${k} (${l.bug ?? 'clean'}, ${l.format})`;
      if (!l.bug) {
        row.cleanFindings += have.length;
        row.extra.push(...have.map(tag));
        return;
      }
      const b = row.bugs[l.bug] ?? { lines: 0, found: 0, undetectable: 0 };
      row.bugs[l.bug] = b;
      if (want.every((w) => have.includes(w))) b.found++;
      else row.missed.push(...want.filter((w) => !have.includes(w)).map(tag));
      row.extra.push(...have.filter((h) => !want.includes(h)).map(tag));
    });
  }
}

/** The report over every family and convention (see the module's contract). */
export async function truthReport(opts: {
  perCell: number;
  perBug: number;
  seed: number;
  families?: readonly FamilyName[];
  conventions?: readonly Convention[];
  /** A folder to write the cells' files to and keep (default: a temporary folder, removed). */
  keep?: string;
  onRow?: (row: TruthRow) => void;
}): Promise<{ rows: TruthRow[]; markdown: string }> {
  if (opts.keep) fs.mkdirSync(opts.keep, { recursive: true });
  const dir = opts.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'truth-'));
  const rows: TruthRow[] = [];
  const families = opts.families ?? TRUTH_FAMILIES;
  const conventions = opts.conventions ?? CONVENTIONS;
  try {
    for (const name of families) {
      const cells = conventions.filter((c) => conventionApplies(name, c) === true);
      for (const c of conventions) {
        const row: TruthRow = {
          family: name,
          convention: c,
          clean: 0,
          cleanFindings: 0,
          unmade: 0,
          bugs: {},
          extra: [],
          missed: [],
          formats: {},
        };
        rows.push(row);
        const na = conventionApplies(name, c);
        if (na !== true) {
          row.na = na;
          opts.onRow?.(row);
          continue;
        }
        const rng = new Rng(opts.seed ^ hash(`${name} ${c}`));
        const lines: TruthLine[] = [];
        const formats = FORMATS[c];
        const add = (stream: Stream, rest: Partial<TruthLine>) => {
          const format = formats[lines.length % formats.length];
          row.formats[format] = (row.formats[format] ?? 0) + 1;
          lines.push({ stream, ids: stream.ids, mask: stream.mask, format, expect: [], ...rest });
        };
        const made = () => {
          try {
            return makeStream(name, c, rng);
          } catch (e) {
            row.unmade++;
            row.unmadeWhy ||= (e as Error).message;
            return null;
          }
        };
        for (let k = 0; k < opts.perCell; k++) {
          const s = made();
          if (!s) continue;
          add(s, {});
          row.clean++;
        }
        // Each bug class's lines are spread over the family's applicable conventions.
        const share = Math.ceil(opts.perBug / cells.length);
        for (const bug of BUG_CLASSES)
          for (let k = 0, tries = 0; k < share && tries < share * 20; tries++) {
            const s = made();
            if (!s) continue;
            const format = formats[lines.length % formats.length];
            const b = inject(s, bug, format, c, rng);
            if (b === null) continue;
            k++;
            const entry = row.bugs[bug] ?? { lines: 0, found: 0, undetectable: 0 };
            row.bugs[bug] = entry;
            entry.lines++;
            if ('why' in b) {
              entry.undetectable++;
              entry.why = b.why;
              continue;
            }
            // A mask left with no trained token is reported as that, whatever made it so; one that
            // is the clean mask shifted by one (a short cut completion) as that shift.
            const moved = b.mask.map((m, i) => (m !== s.mask[i] ? i : -1)).filter((i) => i >= 0);
            const shifted =
              bug !== 'mask-shift' &&
              b.ids === s.ids &&
              ([0, ...s.mask.slice(0, -1)].every((m, i) => m === b.mask[i]) ||
                [...s.mask.slice(1), 0].every((m, i) => m === b.mask[i]));
            const expect = !b.mask.some((m) => m === 1)
              ? [{ rule: 'mask-degenerate' as RuleId, positions: [] }]
              : shifted
                ? [{ rule: 'mask-shift' as RuleId, positions: moved }]
                : b.expect;
            add(s, {
              ids: b.ids,
              mask: b.mask,
              bug,
              expect,
              alternatives: expect === b.expect ? b.alternatives : undefined,
            });
          }
        await lintCell(dir, row, lines);
        opts.onRow?.(row);
      }
    }
  } finally {
    if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
  return { rows, markdown: truthMarkdown(rows) };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** The report's table (markdown): a row per family and convention, a column per bug class. */
export function truthMarkdown(rows: readonly TruthRow[]): string {
  const head = `| family | convention | clean linted | findings on them | ${BUG_CLASSES.join(' | ')} |`;
  const sep = `|${' --- |'.repeat(4 + BUG_CLASSES.length)}`;
  const cell = (r: TruthRow, b: BugClass) => {
    const x = r.bugs[b];
    if (!x) return '-';
    const linted = x.lines - x.undetectable;
    const pct = linted ? `${((100 * x.found) / linted).toFixed(1)} % of ${linted}` : 'none linted';
    return x.undetectable ? `${pct} (+${x.undetectable} undetectable)` : pct;
  };
  const body = rows.map((r) =>
    r.na
      ? `| ${r.family} | ${r.convention} | n/a: ${r.na} |${' |'.repeat(1 + BUG_CLASSES.length)}`
      : `| ${r.family} | ${r.convention} | ${r.clean} | ${r.cleanFindings} | ${BUG_CLASSES.map((b) => cell(r, b)).join(' | ')} |`,
  );
  const total = rows.reduce((n, r) => n + r.clean, 0);
  const totalFindings = rows.reduce((n, r) => n + r.cleanFindings, 0);
  const per = BUG_CLASSES.map((b) => {
    let lines = 0;
    let found = 0;
    let und = 0;
    for (const r of rows) {
      const x = r.bugs[b];
      if (!x) continue;
      lines += x.lines - x.undetectable;
      found += x.found;
      und += x.undetectable;
    }
    return `${lines ? ((100 * found) / lines).toFixed(1) : '-'} % of ${lines}${und ? ` (+${und} undetectable)` : ''}`;
  });
  const whys = new Map<string, string>();
  for (const r of rows)
    for (const b of BUG_CLASSES) if (r.bugs[b]?.why) whys.set(`${b}: ${r.bugs[b]?.why}`, b);
  return [
    head,
    sep,
    ...body,
    `| **all** | | **${total}** | **${totalFindings}** | ${per.join(' | ')} |`,
    '',
    ...[...whys.keys()].map((w) => `- undetectable, ${w}`),
  ].join('\n');
}

if (require.main?.filename === __filename) {
  const arg = (name: string, d: number) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? Number(process.argv[i + 1]) : d;
  };
  /** A comma-separated list argument (`--families qwen3,gpt-oss`), each name checked. */
  const list = (name: string): string[] | undefined => {
    const i = process.argv.indexOf(name);
    if (i < 0) return undefined;
    const known: readonly string[] = name === '--families' ? TRUTH_FAMILIES : CONVENTIONS;
    const out = (process.argv[i + 1] ?? '').split(',').filter(Boolean);
    const bad = out.filter((x) => !known.includes(x));
    if (bad.length || !out.length) {
      process.stderr.write(`bench:truth: ${name} takes a comma-separated list of ${known.join(', ')}\n`);
      process.exit(2);
    }
    return out;
  };
  const t0 = Date.now();
  truthReport({
    perCell: arg('--per-cell', 500),
    perBug: arg('--per-bug', 1000),
    seed: arg('--seed', 1),
    families: list('--families') as FamilyName[] | undefined,
    conventions: list('--conventions') as Convention[] | undefined,
    keep: process.argv.includes('--keep') ? process.argv[process.argv.indexOf('--keep') + 1] : undefined,
    onRow: (r) =>
      process.stderr.write(
        `${r.family} / ${r.convention}: ${r.na ? 'n/a' : `${r.clean} clean, ${r.cleanFindings} findings; ${r.extra.length} extra, ${r.missed.length} missed${r.unmade ? `; ${r.unmade} not made: ${r.unmadeWhy}` : ''}`} (${((Date.now() - t0) / 1000).toFixed(0)} s)\n${[...r.extra.slice(0, 5), ...r.missed.slice(0, 5)].map((x) => `    ${x}\n`).join('')}`,
      ),
  }).then(({ markdown }) => process.stdout.write(`${markdown}\n`));
}
