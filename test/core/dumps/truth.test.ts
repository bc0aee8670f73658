/**
 * A seeded few hundred of the truth report's conversations (scripts/truth.ts, conversations.ts),
 * made into token streams by real tokenizers and chat templates and linted: clean ones give no
 * finding in the cells the full report (docs/truth-report.md) shows at zero, and each injected
 * mask-bug class is found at exactly its positions where the report finds all of it. The expected
 * answers come from how the generator built each stream (owners from the conversation's own text),
 * not from the lint.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomConversation } from '../../../scripts/conversations.js';
import { family, toolDefRanges } from '../../../scripts/make-template-fixtures.js';
import { BUG_CLASSES, thinkingOffPrefill, truthReport } from '../../../scripts/truth.js';
import { Rng } from '../../../src/core/rng.js';

describe('the truth report on seeded conversations', () => {
  it('generates the features the report promises: parallel calls, every tool ending, reasoning, scripts', () => {
    const rng = new Rng(3);
    const seen = { parallel: 0, reasoning: 0, endings: new Set<string>(), scripts: new Set<string>() };
    for (let k = 0; k < 200; k++) {
      const c = randomConversation('qwen3', rng);
      seen.parallel = Math.max(seen.parallel, c.features.parallel);
      if (c.features.reasoning) seen.reasoning++;
      for (const e of c.features.endings) seen.endings.add(e);
      for (const s of c.features.scripts) seen.scripts.add(s);
    }
    assert.equal(seen.parallel, 4);
    assert.ok(seen.reasoning > 0);
    assert.deepEqual([...seen.endings].sort(), [
      'empty',
      'error',
      'json ]',
      'json }',
      'long',
      'newline',
      'nothing',
      'spaces',
    ]);
    assert.deepEqual([...seen.scripts].sort(), ['cjk', 'combining', 'emoji', 'fence']);
  });

  it('no finding on clean Qwen3 and GLM-4.5 conversations, turn by turn and per turn', async () => {
    // Parallel calls with JSON outputs ending in } or ], texts ending in a newline, empty outputs:
    // tokens that straddle a content and the template's joint (`}\n`, `.\n\n`, `\n[`).
    const { rows } = await truthReport({
      perCell: 60,
      perBug: 0,
      seed: 11,
      families: ['qwen3', 'glm4.5'],
      conventions: ['turn by turn', 'per-turn'],
    });
    assert.equal(rows.length, 4);
    for (const r of rows) {
      assert.equal(r.clean + r.unmade, 60, `${r.family} / ${r.convention}`);
      assert.ok(r.clean >= 55, `${r.family} / ${r.convention}: ${r.unmade} not made: ${r.unmadeWhy}`);
      assert.equal(r.cleanFindings, 0, `${r.family} / ${r.convention}:\n${r.extra.slice(0, 5).join('\n')}`);
    }
  });

  it('no finding on the streams that once raised false ones: DeepSeek V3 with messages, whole renders, a cut after <|start|>', async () => {
    // DeepSeek V3: openers once per conversation, later calls re-rendered without their header.
    // Qwen3 without thinking rendered whole: no empty <think></think> before earlier answers.
    // GPT-OSS cut inside `<|end|><|start|>assistant` (the model's continuation).
    const cells = [
      ['deepseek-v3', 'turn by turn'],
      ['deepseek-v3', 'whole'],
      ['qwen3-nothink', 'whole'],
      ['gpt-oss', 'turn by turn'],
    ] as const;
    for (const [family, convention] of cells) {
      const { rows } = await truthReport({
        perCell: 40,
        perBug: 0,
        seed: 23,
        families: [family],
        conventions: [convention],
      });
      const r = rows.find((x) => x.convention === convention)!;
      assert.equal(r.clean, 40, `${family} / ${convention}: ${r.unmade} not made: ${r.unmadeWhy}`);
      assert.equal(r.cleanFindings, 0, `${family} / ${convention}:\n${r.extra.slice(0, 5).join('\n')}`);
    }
  });

  it('a trained tool output, untrained end tokens and a shifted mask are found at their positions (Qwen3, GPT-OSS)', async () => {
    const { rows } = await truthReport({
      perCell: 0,
      perBug: 20,
      seed: 5,
      families: ['qwen3', 'gpt-oss'],
      conventions: ['turn by turn', 'per-turn'],
    });
    for (const r of rows)
      for (const b of ['mask-on-tool', 'eos-not-trained', 'mask-shift'] as const) {
        const x = r.bugs[b];
        assert.ok(x && x.lines > 0, `${r.family} / ${r.convention}: ${b} injected`);
        const missed = r.missed.filter((m) => m.includes(`(${b},`));
        assert.deepEqual(missed, [], `${r.family} / ${r.convention}: ${b}`);
        assert.equal(x.found, x.lines - x.undetectable, `${r.family} / ${r.convention}: ${b}`);
      }
  });

  it('every bug class is found at its positions on GPT-OSS with pre-filled headers and without messages', async () => {
    // A shifted mask where the mask settles a pre-filled header; a header partly trained; a system
    // prompt beside tool definitions a record does not carry; a separator after <|return|>.
    const { rows } = await truthReport({
      perCell: 0,
      perBug: 56,
      seed: 7,
      families: ['gpt-oss'],
      conventions: ['prefilled headers', 'turn by turn'],
    });
    for (const r of rows.filter((x) => !x.na))
      for (const b of BUG_CLASSES) {
        const x = r.bugs[b];
        assert.ok(x && x.lines > 0, `${r.convention}: ${b} injected`);
        assert.equal(
          x.found,
          x.lines - x.undetectable,
          `${r.convention}: ${b}\n${r.missed.filter((m) => m.includes(`(${b},`)).join('\n')}`,
        );
      }
  });
});

describe("the truth report's expectations", () => {
  it('a tool block read without the record’s tools leaves out the turn frames at its edges', () => {
    // GLM-4.5 and Qwen3 open a system turn for the tools when there is none: the comparison of
    // renders with and without tools takes in that turn's header (and Qwen3's closer and the next
    // header), which are the template's, not the tools' text.
    for (const name of ['glm4.5', 'qwen3'] as const) {
      const f = family(name);
      const tools = [
        {
          type: 'function',
          function: {
            name: 'run_tests',
            description: 'Run the tests.',
            parameters: { type: 'object', properties: {} },
          },
        },
      ];
      for (const msgs of [
        [{ role: 'user' as const, content: 'Fix it.' }],
        [
          { role: 'system' as const, content: 'Be brief.' },
          { role: 'user' as const, content: 'Fix it.' },
        ],
      ]) {
        const r = f.render(msgs, { addGenerationPrompt: true, tools });
        assert.ok(r.ok);
        const ranges = toolDefRanges(f, r.value, tools);
        assert.ok(ranges.length > 0, name);
        for (const [a, b] of ranges) {
          const text = r.value.slice(a, b);
          assert.match(text, /run_tests/);
          for (const marker of ['<|system|>', '<|user|>', '<|im_start|>', '<|im_end|>'])
            assert.ok(
              !text.includes(marker),
              `${name}: ${JSON.stringify(text.slice(0, 40))}…${JSON.stringify(text.slice(-40))} holds ${marker}`,
            );
          assert.ok(!text.startsWith('system\n'), `${name}: starts with the role name`);
        }
      }
    }
  });

  it('knows the empty think block a template pre-fills with thinking off', () => {
    assert.equal(thinkingOffPrefill('qwen3'), '<think>\n\n</think>\n\n');
    assert.equal(thinkingOffPrefill('glm4.5'), '\n<think></think>');
    assert.equal(thinkingOffPrefill('llama3.1'), '');
    assert.equal(thinkingOffPrefill('gpt-oss'), '');
  });
});
