/**
 * Make the fixtures of prime-rl's trainer token export and of the per-turn captures, from the same
 * conversations and Qwen3 renderings as make-dump-fixtures.ts (which calls makeExportFixtures and
 * writes the expected findings returned here into expected.jsonl):
 * - `prime-rl-export/token_exports/step_{N}/rank_{R}.jsonl`, as TokenExporter writes them
 *   (PrimeIntellect-ai/prime-rl @ 559b447, src/prime_rl/trainer/rl/token_export.py): one compact
 *   record per sample, float32 values, trainer log-probs shifted so index i scores token i (its first
 *   token the pad value log(1/V)), the ratio columns and `is_masked*` computed as
 *   `_compute_export_tensors` does with the default loss's dppo_mask_low/high = 0.2, an empty STABLE
 *   in step_0 (both ranks flushed) and none in step_1 (still being written);
 * - `turns-nemo-gym.jsonl`, `turns-atif.jsonl`, `turns-verifiers.jsonl`: one rollout per line in each
 *   source's field names, each turn's prompt the whole conversation so far, as a token-in-token-out
 *   agent sends it, and its completion the tokens the assistant generated (its <|im_end|> included).
 * Clean lines come first in each file; then lines with an injected bug, whose exact positions are
 * computed here from the rendering's own owners, not by the linter.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ChatMessage, type DumpTokenizer, OWNER } from '../src/core/dumps/index.js';
import { Rng } from '../src/core/rng.js';
import {
  type Built,
  build,
  conversations,
  type Expect,
  positionsOf,
  twoTurnChat,
  type Variant,
  variant,
} from './make-dump-fixtures.js';

/** Qwen3's vocabulary size (its config's vocab_size): the trainer's pad log-prob is log(1/V). */
const VOCAB = 151936;
/** prime-rl's DefaultLossConfig dppo_mask_low and dppo_mask_high. */
const DPPO_MASK = 0.2;
const f32 = (x: number) => Math.fround(x);

/** One turn: the prompt ids sent, the completion ids sampled and their log-probs. */
export interface TurnSpec {
  /** Index of the assistant message this turn generated. */
  message: number;
  prompt: number[];
  completion: number[];
  logprobs: number[];
}

/** A variant cut to its first T tokens. */
function cutTo(x: Variant, T: number): Variant {
  return {
    ...x,
    ids: x.ids.slice(0, T),
    mask: x.mask.slice(0, T),
    sampler: x.sampler.slice(0, T),
    trainer: x.trainer.slice(0, T),
    advantages: x.advantages.slice(0, T),
  };
}

/** The variant ended at its last end marker, as generation stops there (no final "\n"). */
function endAtEos(x: Variant, imEnd: number): Variant {
  return cutTo(x, x.ids.lastIndexOf(imEnd) + 1);
}

/**
 * The turns of a variant: for each assistant message, the prompt is every token before its first
 * generated token, the completion its generated tokens (contiguous, as the rendering's owners say).
 */
export function turnsOf(x: Variant): TurnSpec[] {
  const { b } = x;
  const T = x.ids.length;
  const turns: TurnSpec[] = [];
  b.messages.forEach((m, k) => {
    if (m.role !== 'assistant') return;
    const to = Math.min(b.msgStart[k + 1] ?? T, T);
    const ps: number[] = [];
    for (let i = b.msgStart[k]; i < to; i++) if (b.owner[i] === OWNER.policy) ps.push(i);
    if (!ps.length) return;
    const [from, last] = [ps[0], ps[ps.length - 1]];
    if (last - from + 1 !== ps.length) throw new Error(`message ${k}'s generated tokens are not contiguous`);
    turns.push({
      message: k,
      prompt: x.ids.slice(0, from),
      completion: x.ids.slice(from, last + 1),
      logprobs: x.sampler.slice(from, last + 1).map((p) => p ?? 0),
    });
  });
  const end = turns[turns.length - 1];
  if (end.prompt.length + end.completion.length !== T) throw new Error('the turns do not cover the sample');
  return turns;
}

// --- writers, one per source ------------------------------------------------------------------

/** The messages before the first assistant one (the task's prompt). */
const opening = (b: Built) =>
  b.messages.slice(
    0,
    b.messages.findIndex((m) => m.role === 'assistant'),
  );
/** The tool messages right after message k. */
function toolsAfter(b: Built, k: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let j = k + 1; j < b.messages.length && b.messages[j].role === 'tool'; j++) out.push(b.messages[j]);
  return out;
}
const fn = (c: unknown) => (c as { id: string; function: { name: string; arguments: string } }).function;
const callId = (c: unknown) => (c as { id: string }).id;

/**
 * A NeMo Gym rollout line (`ng_collect_rollouts`): `responses_create_params`, `response.output`
 * items in the Responses API shape, the token fields (TokenIDLogProbMixin, nemo_gym/openai_utils.py)
 * on the last item of each model call, `reward` and `_ng_task_index`.
 */
export function nemoGymLine(x: Variant, turns: TurnSpec[], task: number): string {
  const { b } = x;
  const output: Record<string, unknown>[] = [];
  for (const t of turns) {
    const m = b.messages[t.message];
    const items: Record<string, unknown>[] = [
      {
        id: `msg_${t.message}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: m.content ?? '', annotations: [] }],
      },
      ...(m.tool_calls ?? []).map((c) => ({
        type: 'function_call',
        call_id: callId(c),
        name: fn(c).name,
        arguments: fn(c).arguments,
        status: 'completed',
      })),
    ];
    Object.assign(items[items.length - 1], {
      prompt_token_ids: t.prompt,
      generation_token_ids: t.completion,
      generation_log_probs: t.logprobs,
    });
    output.push(...items);
    for (const r of toolsAfter(b, t.message))
      output.push({ type: 'function_call_output', call_id: r.tool_call_id, output: r.content });
  }
  return JSON.stringify({
    responses_create_params: {
      input: opening(b).map((m) => ({ role: m.role, content: m.content, type: 'message' })),
      tools: (b.tools ?? []).map((tool) => ({
        type: 'function',
        ...(tool as { function: object }).function,
      })),
    },
    response: { id: `resp_${task}`, object: 'response', model: 'qwen3-fixture', output },
    reward: x.reward,
    _ng_task_index: task,
    _ng_rollout_index: 0,
  });
}

/**
 * An ATIF v1.4 trajectory on one line: system and user steps, then one agent step per turn with its
 * tool calls, the tool results as its observation, and `metrics.{prompt_token_ids,
 * completion_token_ids, logprobs}`.
 */
export function atifLine(x: Variant, turns: TurnSpec[], session: string): string {
  const { b } = x;
  const steps: Record<string, unknown>[] = [];
  const byMessage = new Map(turns.map((t) => [t.message, t]));
  b.messages.forEach((m, k) => {
    const t = byMessage.get(k);
    if (m.role === 'system' || m.role === 'user')
      steps.push({ step_id: steps.length + 1, source: m.role, message: m.content ?? '' });
    if (m.role !== 'assistant' || !t) return;
    const results = toolsAfter(b, k).map((r) => ({ source_call_id: r.tool_call_id, content: r.content }));
    steps.push({
      step_id: steps.length + 1,
      source: 'agent',
      model_name: 'Qwen3',
      message: m.content ?? '',
      ...(m.tool_calls
        ? {
            tool_calls: m.tool_calls.map((c) => ({
              tool_call_id: callId(c),
              function_name: fn(c).name,
              arguments: JSON.parse(fn(c).arguments),
            })),
          }
        : {}),
      ...(results.length ? { observation: { results } } : {}),
      metrics: {
        prompt_tokens: t.prompt.length,
        completion_tokens: t.completion.length,
        prompt_token_ids: t.prompt,
        completion_token_ids: t.completion,
        logprobs: t.logprobs,
      },
    });
  });
  return JSON.stringify({
    schema_version: 'ATIF-v1.4',
    session_id: session,
    agent: { name: 'episode-lab-fixture', version: '1.0.0', model_name: 'Qwen3' },
    steps,
  });
}

/** Masks a verifiers line writes over a turn's prompt and completion ids (default: 0s and 1s). */
export interface VfMasks {
  prompt?: number[];
  completion?: number[];
}

/**
 * A verifiers (legacy) rollout output line: `example_id`, `prompt`, `completion`, `reward`, and
 * `trajectory[]` of TrajectoryStep whose `tokens` is a TrajectoryStepTokens (verifiers/legacy/types.py).
 */
export function verifiersLine(x: Variant, turns: TurnSpec[], example: number, masks: VfMasks[] = []): string {
  const { b } = x;
  const first = opening(b).length;
  const trajectory = turns.map((t, k) => ({
    prompt: b.messages.slice(0, t.message),
    completion: [b.messages[t.message]],
    response: {
      id: `chatcmpl-${example}-${k}`,
      created: 0,
      model: 'qwen3-fixture',
      message: b.messages[t.message],
    },
    tokens: {
      prompt_ids: t.prompt,
      prompt_mask: masks[k]?.prompt ?? t.prompt.map(() => 0),
      completion_ids: t.completion,
      completion_mask: masks[k]?.completion ?? t.completion.map(() => 1),
      completion_logprobs: t.logprobs,
      overlong_prompt: false,
      is_truncated: false,
      routed_experts: null,
    },
    reward: null,
    advantage: x.reward - 0.5,
    is_truncated: false,
    trajectory_id: `traj-${example}`,
    extras: {},
  }));
  return JSON.stringify({
    example_id: example,
    prompt: b.messages.slice(0, first),
    completion: b.messages.slice(first),
    reward: x.reward,
    trajectory,
  });
}

/** What the trainer computed for a sample, token-aligned [T], before export. */
export interface TrainerSide {
  /** Log-prob of token i under the trainer, index 0 the pad value log(1/V). */
  trainer: number[];
  entropy: number[];
}

/** The trainer's side of a variant: its log-probs on trained tokens, values drawn for the others. */
export function trainerSide(x: Variant, rng: Rng): TrainerSide {
  const trainer = x.ids.map((_, i) =>
    i === 0 ? Math.log(1 / VOCAB) : (x.trainer[i] ?? Math.round(-rng.float() * 1.5 * 1e4) / 1e4),
  );
  const entropy = x.ids.map((_, i) => (i === 0 ? Math.log(VOCAB) : Math.round(rng.float() * 3 * 1e4) / 1e4));
  return { trainer, entropy };
}

/** A prime-rl token export record, as TokenExporter.export writes it (keys in its order). */
export function exportRecord(
  x: Variant,
  side: TrainerSide,
  at: { step: number; rank: number; microStep: number; seq: number; exportSeq: number; env: string },
): string {
  const T = x.ids.length;
  const inference = x.sampler.map((p) => p ?? 0);
  const loss = x.mask.map((m) => m === 1);
  const col = (f: (i: number) => number) => Array.from({ length: T }, (_, i) => finite(f32(f(i))));
  const logRatio = (i: number) => side.trainer[i] - inference[i];
  const delta = (i: number) => Math.exp(side.trainer[i]) - Math.exp(inference[i]);
  const high = (i: number) => delta(i) > DPPO_MASK;
  const low = (i: number) => delta(i) < -DPPO_MASK;
  const nulls = new Array(T).fill(null);
  return JSON.stringify({
    schema_version: 1,
    step: at.step,
    rank: at.rank,
    micro_step: at.microStep,
    micro_sequence_idx: at.seq,
    export_sequence_idx: at.exportSeq,
    env_name: at.env,
    token_ids: x.ids,
    position_ids: x.ids.map((_, i) => i),
    loss_mask: loss,
    advantages: col((i) => x.advantages[i]),
    inference_logprobs: col((i) => inference[i]),
    trainer_logprobs: col((i) => side.trainer[i]),
    entropy: col((i) => side.entropy[i]),
    mismatch_kl: col((i) => Math.exp(logRatio(i)) - logRatio(i) - 1),
    log_importance_ratio: col(logRatio),
    importance_ratio: col((i) => Math.exp(logRatio(i))),
    prob_delta: col(delta),
    is_masked: loss.map((m, i) => m && (x.advantages[i] > 0 ? high(i) : low(i))),
    is_masked_high: loss.map((m, i) => m && x.advantages[i] > 0 && high(i)),
    is_masked_low: loss.map((m, i) => m && x.advantages[i] < 0 && low(i)),
    rl_weights: nulls,
    ce_weights: nulls,
    ref_kl_weights: nulls,
  });
}

/** `_json_float`: a non-finite float is written as null. */
const finite = (x: number) => (Number.isFinite(x) ? x : null);

// --- the fixtures -----------------------------------------------------------------------------

/** Write the export folder and the per-turn files under `out`; the expected findings, by file. */
export function makeExportFixtures(out: string, q: DumpTokenizer): Record<string, Expect[]> {
  const rng = new Rng(25);
  const imEnd = q.id('<|im_end|>');
  const imStart = q.id('<|im_start|>');
  if (imEnd === undefined || imStart === undefined) throw new Error('Qwen3 has <|im_start|> and <|im_end|>');
  const [think, tools, parallel] = conversations().map((c) => build(q, c.messages, c.tools));
  const expected: Record<string, Expect[]> = {};
  const write = (name: string, lines: string[]) => {
    fs.mkdirSync(path.dirname(path.join(out, name)), { recursive: true });
    fs.writeFileSync(path.join(out, name), lines.length ? `${lines.join('\n')}\n` : '');
  };
  const ended = (b: Built, reward = 1) => endAtEos(variant(b, rng, reward), imEnd);
  // the last answer cut before its end (no EOS), as in make-dump-fixtures' truncated sample
  const truncated = (b: Built) => cutTo(variant(b, rng, 0), b.ids.length - 6);
  const clean = () => [ended(think), ended(tools), ended(parallel), truncated(tools)];

  // --- prime-rl token export ---
  const dir = 'prime-rl-export/token_exports';
  const envOf = (x: Variant) => (x.b === think ? 'math' : 'swe');
  const records = (xs: { x: Variant; side?: TrainerSide }[], step: number, rank: number) =>
    xs.map(({ x, side }, k) =>
      exportRecord(x, side ?? trainerSide(x, rng), {
        step,
        rank,
        microStep: k >> 1,
        seq: k & 1,
        exportSeq: k,
        env: envOf(x),
      }),
    );
  // the trainer's own masking: three trained tokens whose probability rose by 0.3 (> dppo_mask_high)
  const dropped = ended(parallel);
  const droppedSide = trainerSide(dropped, rng);
  const candidates = dropped.mask
    .map((m, i) => (m && (dropped.sampler[i] ?? 0) < -0.8 ? i : -1))
    .filter((i) => i >= 0);
  const trainerMasked = [candidates[0], candidates[3], candidates[6]];
  for (const i of trainerMasked) droppedSide.trainer[i] = Math.log(Math.exp(dropped.sampler[i] ?? 0) + 0.3);
  write(
    `${dir}/step_0/rank_0.jsonl`,
    records([{ x: ended(think) }, { x: ended(tools) }, { x: dropped, side: droppedSide }], 0, 0),
  );
  {
    const ex: Expect[] = [];
    // mask-on-tool (TRL PR #4975): the first tool response trained
    const onTool = ended(tools);
    const tool = positionsOf(tools, OWNER.tool, 2);
    for (const p of tool) onTool.mask[p] = 1;
    // logprob-misaligned: trainer log-probs exported without shift_tensor_right (index i scores token
    // i + 1; the last scores the label the left shift padded in, here the value log(1/V))
    const unshifted = ended(tools);
    const side = trainerSide(unshifted, rng);
    const raw = { ...side, trainer: [...side.trainer.slice(1), Math.log(1 / VOCAB)] };
    const both = unshifted.mask
      .map((m, i) => (m && tools.owner[i] === OWNER.policy ? i : -1))
      .filter((i) => i >= 0);
    ex.push({ sample: 1, rule: 'mask-on-tool', positions: tool });
    ex.push({ sample: 2, rule: 'logprob-misaligned', positions: both });
    // logprob-gap: that last value is far from the sampler's (by the rule's definition, over 2 nats)
    const gap = both.filter((i) => Math.abs(raw.trainer[i] - (unshifted.sampler[i] ?? 0)) > 2);
    ex.push({ sample: 2, rule: 'logprob-gap', positions: gap });
    write(
      `${dir}/step_0/rank_1.jsonl`,
      records([{ x: truncated(tools) }, { x: onTool }, { x: unshifted, side: raw }], 0, 1),
    );
    expected[`${dir}/step_0/rank_1.jsonl`] = ex;
  }
  write(`${dir}/step_0/STABLE`, []);
  write(`${dir}/step_1/rank_0.jsonl`, records([{ x: ended(think) }, { x: ended(parallel) }], 1, 0));

  // --- NeMo Gym: clean, then the generation prompt counted as completion, then an EOS left out ---
  {
    const xs = clean();
    const lines = xs.map((x, k) => nemoGymLine(x, turnsOf(x), k));
    const ex: Expect[] = [];
    // mask-on-template (SkyRL PR #710): turn 1's completion starts with "<|im_start|>assistant\n"
    let x = ended(tools);
    let ts = turnsOf(x);
    const header = [ts[1].prompt.length - 3, ts[1].prompt.length - 2, ts[1].prompt.length - 1];
    if (x.ids[header[0]] !== imStart) throw new Error('the generation prompt is three tokens');
    ts[1] = {
      ...ts[1],
      prompt: ts[1].prompt.slice(0, header[0]),
      completion: [...ts[1].prompt.slice(header[0]), ...ts[1].completion],
      logprobs: [-0.0012, -0.0003, -0.0001, ...ts[1].logprobs],
    };
    ex.push({ sample: lines.length, rule: 'mask-on-template', positions: header });
    lines.push(nemoGymLine(x, ts, 1));
    // eos-not-trained (TRL #4974): turn 0's <|im_end|> stripped from its generation, the next prompt has it
    x = ended(tools);
    ts = turnsOf(x);
    const eos = ts[0].prompt.length + ts[0].completion.length - 1;
    ts[0] = { ...ts[0], completion: ts[0].completion.slice(0, -1), logprobs: ts[0].logprobs.slice(0, -1) };
    ex.push({ sample: lines.length, rule: 'eos-not-trained', positions: [eos] });
    lines.push(nemoGymLine(x, ts, 1));
    write('turns-nemo-gym.jsonl', lines);
    expected['turns-nemo-gym.jsonl'] = ex;
  }

  // --- ATIF: clean, then a second turn whose prompt was re-rendered (the first <think> gone) ---
  {
    const xs = clean();
    const lines = xs.map((x, k) => atifLine(x, turnsOf(x), `fixture-${k}`));
    // prefix-broken (prime-rl PR #1383): the template drops the first answer's <think> from turn 2's prompt
    const [turn1, turn2] = twoTurnChat(q);
    const [a] = turnsOf(ended(turn1));
    const x2 = ended(turn2);
    const b = turnsOf(x2)[1];
    const seen = [...a.prompt, ...a.completion];
    let p = 0;
    while (p < seen.length && seen[p] === b.prompt[p]) p++;
    if (p === seen.length) throw new Error("turn 2's prompt extends turn 1: nothing is broken");
    // the second sample starts after the first's tokens in the record's whole sequence
    const ex: Expect[] = [{ sample: lines.length, rule: 'prefix-broken', positions: [seen.length + p] }];
    lines.push(atifLine(x2, [a, b], 'fixture-broken'));
    write('turns-atif.jsonl', lines);
    expected['turns-atif.jsonl'] = ex;
  }

  // --- verifiers: clean, then the user's question trained, then a turn's completion untrained ---
  {
    const xs = clean();
    const lines = xs.map((x, k) => verifiersLine(x, turnsOf(x), k));
    const ex: Expect[] = [];
    // mask-on-prompt (SkyRL #213): turn 0's prompt_mask 1 on the user's question
    let x = ended(tools);
    let ts = turnsOf(x);
    const user = positionsOf(tools, OWNER.prompt, 0);
    ex.push({ sample: lines.length, rule: 'mask-on-prompt', positions: user });
    lines.push(verifiersLine(x, ts, 1, [{ prompt: ts[0].prompt.map((_, i) => (user.includes(i) ? 1 : 0)) }]));
    // policy-not-trained (verl #3562): turn 1's completion_mask 0 on everything but its <|im_end|>
    x = ended(tools);
    ts = turnsOf(x);
    const body = ts[1].completion.map((_, j) => ts[1].prompt.length + j).filter((i) => x.ids[i] !== imEnd);
    ex.push({ sample: lines.length, rule: 'policy-not-trained', positions: body });
    const masks: VfMasks[] = [{}, { completion: ts[1].completion.map((id) => (id === imEnd ? 1 : 0)) }];
    lines.push(verifiersLine(x, ts, 1, masks));
    write('turns-verifiers.jsonl', lines);
    expected['turns-verifiers.jsonl'] = ex;
  }
  return expected;
}
