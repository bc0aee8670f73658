/**
 * The context editor: the call picker, the policy form (full, keep_obs = k, truncate oldest,
 * summarise) with rerun / re-evaluate / retrain, and the comparison of the result with the original
 * (the cross table of figure 12.3 once several models and contexts are evaluated).
 */
import { type ContextPolicy, describeContextPolicy, MAX_VIEW_TOKENS } from '../src/core/context/policy.js';
import { MAX_RETRAIN_STEPS } from '../src/protocol/trainer.js';
import { policyLabel, type TrajectoryJSON } from '../src/protocol/webview.js';
import { episodeCompareLines, renderComparisonTable } from './compare.js';
import { renderTokenStrip } from './strip.js';
import { makeButton, makeDropdown, makeNumberField } from './toolkit.js';
import {
  type EvalCell,
  episodeCalls,
  type Handlers,
  type StripView,
  stripView,
  type ViewModel,
} from './view-model.js';

const KIND_LABELS: Record<ContextPolicy['kind'], string> = {
  full: 'full history',
  keepObs: 'keep_obs = k (observation masking)',
  truncateOldest: 'truncate oldest turns',
  summarize: 'summarise reads',
};

/** The policy of a kind with a sensible parameter (keeping the current one when it applies). */
export function policyOfKind(kind: ContextPolicy['kind'], current: ContextPolicy): ContextPolicy {
  switch (kind) {
    case 'full':
      return { kind: 'full' };
    case 'keepObs':
      return { kind: 'keepObs', k: current.kind === 'keepObs' ? current.k : 1 };
    case 'truncateOldest':
      return {
        kind: 'truncateOldest',
        maxTokens: current.kind === 'truncateOldest' ? current.maxTokens : 64,
      };
    case 'summarize':
      return { kind: 'summarize' };
  }
}

const samePolicy = (a: ContextPolicy, b: ContextPolicy) => JSON.stringify(a) === JSON.stringify(b);

function status(doc: Document, cls: string, text: string): HTMLElement {
  const p = doc.createElement('p');
  p.className = `status ${cls}`;
  p.textContent = text;
  return p;
}

/** The context-policy editor: call picker, policy form, and the rerun / evaluate / retrain buttons. */
export function renderContextEditor(doc: Document, vm: ViewModel, h: Handlers): HTMLElement {
  const box = doc.createElement('section');
  box.className = 'context-editor';
  const title = doc.createElement('h2');
  title.textContent = 'Context policy: what each call saw, edit, rerun';
  box.appendChild(title);
  const ep = vm.episode;
  if (!ep) return box;
  const runPolicy = vm.source?.contextPolicy ?? { kind: 'full' };
  const policy = vm.policy ?? runPolicy;

  const row1 = doc.createElement('div');
  row1.className = 'controls';
  const callLabel = doc.createElement('label');
  callLabel.textContent = 'Strip shows:';
  callLabel.htmlFor = 'call';
  const calls = episodeCalls(ep);
  row1.append(
    callLabel,
    makeDropdown(
      doc,
      'call',
      [
        { value: 'all', label: 'the whole episode' },
        ...calls.map((c) => ({ value: String(c.k), label: `what call ${c.k} saw: ${c.text}` })),
      ],
      vm.call == null ? 'all' : String(vm.call),
      (v) => h.onCall?.(v === 'all' ? null : Number(v)),
    ),
  );

  const row2 = doc.createElement('div');
  row2.className = 'controls';
  const kindLabel = doc.createElement('label');
  kindLabel.textContent = 'Policy:';
  kindLabel.htmlFor = 'policy-kind';
  row2.append(
    kindLabel,
    makeDropdown(
      doc,
      'policy-kind',
      (Object.keys(KIND_LABELS) as ContextPolicy['kind'][]).map((k) => ({ value: k, label: KIND_LABELS[k] })),
      policy.kind,
      (v) => h.onPolicy?.(policyOfKind(v as ContextPolicy['kind'], policy)),
    ),
  );
  if (policy.kind === 'keepObs' || policy.kind === 'truncateOldest') {
    const l = doc.createElement('label');
    l.htmlFor = 'policy-param';
    l.textContent = policy.kind === 'keepObs' ? 'k =' : 'max tokens =';
    const field =
      policy.kind === 'keepObs'
        ? makeNumberField(doc, 'policy-param', policy.k, 0, 64, (k) => h.onPolicy?.({ kind: 'keepObs', k }))
        : makeNumberField(doc, 'policy-param', policy.maxTokens, 1, MAX_VIEW_TOKENS, (maxTokens) =>
            h.onPolicy?.({ kind: 'truncateOldest', maxTokens }),
          );
    row2.append(l, field);
  }
  const desc = doc.createElement('p');
  desc.className = 'policy-desc';
  desc.textContent = `${describeContextPolicy(policy)}. ${
    samePolicy(policy, runPolicy)
      ? 'This is the run’s own policy.'
      : `The run was sampled under: ${policyLabel(runPolicy)}.`
  }`;

  const row3 = doc.createElement('div');
  row3.className = 'controls actions';
  const noModel =
    vm.source && vm.source.model === null ? 'a scripted episode has no model to sample from' : null;
  const busy = (j: { pending: boolean } | undefined) => (j?.pending ? 'running…' : null);
  row3.append(
    makeButton(doc, 'rerun', `Rerun this task under ${policyLabel(policy)}`, () => h.onRerun?.(), {
      disabled: noModel ?? busy(vm.rerunJob),
    }),
    makeButton(
      doc,
      'evaluate',
      samePolicy(policy, runPolicy)
        ? `Evaluate held-out under ${policyLabel(policy)}`
        : `Evaluate held-out: ${policyLabel(runPolicy)} vs ${policyLabel(policy)}`,
      () => h.onEvaluate?.('run'),
      { disabled: noModel ?? busy(vm.evalJob), secondary: true },
    ),
  );
  // Retraining: its step count, its button, and a cancel while it runs.
  const row4 = doc.createElement('div');
  row4.className = 'controls actions';
  const stepsLabel = doc.createElement('label');
  stepsLabel.htmlFor = 'retrain-steps';
  stepsLabel.textContent = 'Retrain for';
  const stepsField = makeNumberField(doc, 'retrain-steps', vm.retrainSteps ?? 40, 1, MAX_RETRAIN_STEPS, (n) =>
    h.onRetrainSteps?.(n),
  );
  stepsField.disabled = Boolean(vm.retrainJob?.pending);
  const stepsUnit = doc.createElement('span');
  stepsUnit.textContent = 'steps';
  row4.append(
    stepsLabel,
    stepsField,
    stepsUnit,
    makeButton(doc, 'retrain', `Retrain under ${policyLabel(policy)}`, () => h.onRetrain?.(), {
      disabled: vm.source?.retrainUnavailable ?? busy(vm.retrainJob),
      secondary: true,
    }),
  );
  if (vm.retrained)
    row4.appendChild(
      makeButton(doc, 'evaluate-retrained', `Evaluate ${vm.retrained}`, () => h.onEvaluate?.('retrained'), {
        disabled: busy(vm.evalJob),
        secondary: true,
      }),
    );
  box.append(row1, row2, desc, row3, row4);
  if (vm.retrainCancelled) box.appendChild(status(doc, 'muted retrain-cancelled', vm.retrainCancelled));
  // A disabled button says why in its tooltip; say it on the page too, where it can be read.
  if (noModel) box.appendChild(status(doc, 'muted no-model-reason', `Rerun and evaluation: ${noModel}.`));
  if (vm.source?.retrainUnavailable)
    box.appendChild(status(doc, 'muted retrain-reason', `Retrain: ${vm.source.retrainUnavailable}.`));
  for (const [name, job] of [
    ['rerun', vm.rerunJob],
    ['evaluation', vm.evalJob],
    ['retraining', vm.retrainJob],
  ] as const) {
    if (job?.error) box.appendChild(status(doc, 'error', `The ${name} failed: ${job.error}`));
    else if (job?.pending) {
      const line = status(doc, 'pending', `${name}: ${job.progress ?? 'running in the trainer process…'}`);
      // An evaluation or a retraining can run for minutes: it can be stopped here, at its next step.
      const op = name === 'evaluation' ? 'evaluate' : name === 'retraining' ? 'retrain' : null;
      if (op) {
        const cancel = doc.createElement('button');
        cancel.className = 'link-button';
        cancel.id = `cancel-${op}`;
        cancel.textContent = 'cancel';
        cancel.addEventListener('click', () => h.onCancel?.(op));
        line.append(' ', cancel);
      }
      box.appendChild(line);
    }
  }
  return box;
}

function summaryLine(ep: TrajectoryJSON): string {
  const i = ep.info;
  return `${i.hidden_pass ? 'pass' : 'fail'} · reward ${ep.reward.toFixed(2)} · ${i.n_turns} turns (reads ${i.reads}, tests ${i.tests}, edits ${i.edits}) · stop ${i.stop} · ${ep.ids.length} tokens`;
}

/** The rerun episode to show first: the one with the most calls (where a view drops the most). */
export function mostCalls(eps: readonly TrajectoryJSON[]): number {
  let best = 0;
  eps.forEach((e, i) => {
    if (e.info.n_turns > eps[best].info.n_turns) best = i;
  });
  return best;
}

/** The cross table (figure 12.3): rows are models, columns contexts, cells held-out pass rate. */
export function renderCrossTable(doc: Document, cells: readonly EvalCell[]): HTMLElement {
  const models = [...new Set(cells.map((c) => c.model))];
  const contexts = [...new Set(cells.map((c) => c.context))];
  const table = doc.createElement('table');
  table.className = 'cross-table';
  const cap = doc.createElement('caption');
  cap.textContent = `Held-out pass rate (turns) by training context (rows) and evaluation context (columns): ${models.length} x ${contexts.length}`;
  const thead = doc.createElement('thead');
  const hr = doc.createElement('tr');
  for (const t of ['model \\ evaluated under', ...contexts]) {
    const th = doc.createElement('th');
    th.textContent = t;
    hr.appendChild(th);
  }
  thead.appendChild(hr);
  const tbody = doc.createElement('tbody');
  for (const m of models) {
    const tr = doc.createElement('tr');
    const th = doc.createElement('th');
    th.textContent = m;
    tr.appendChild(th);
    const row = contexts.map((c) => cells.filter((x) => x.model === m && x.context === c).at(-1));
    const best = Math.max(...row.map((c) => c?.stats.pass_rate ?? -1));
    for (const c of row) {
      const td = doc.createElement('td');
      if (c) {
        td.textContent = `${c.stats.pass_rate.toFixed(3)} (${c.stats.turns.toFixed(2)})`;
        td.title = `${c.episodes} held-out episodes: reads ${c.stats.reads}, tests ${c.stats.tests}, edits ${c.stats.edits}, reward ${c.stats.reward}`;
        if (c.stats.pass_rate === best && row.filter(Boolean).length > 1) td.className = 'best';
      } else td.textContent = '—';
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  table.append(cap, thead, tbody);
  return table;
}

/** The original episode beside its rerun under the edited policy, and the cross table. */
export function renderCompare(doc: Document, vm: ViewModel, h: Handlers): HTMLElement {
  const box = doc.createElement('section');
  box.className = 'compare';
  const title = doc.createElement('h2');
  title.textContent = 'Comparison with the original';
  box.appendChild(title);
  const ep = vm.episode!;
  const runPolicy = vm.source?.contextPolicy ?? { kind: 'full' };
  const r = vm.rerun;
  if (r || vm.rerunJob?.pending) {
    const cols = doc.createElement('div');
    cols.className = 'compare-cols';
    const col = (cls: string, heading: string, lines: string[]) => {
      const c = doc.createElement('div');
      c.className = `compare-col ${cls}`;
      const h3 = doc.createElement('h3');
      h3.textContent = heading;
      c.appendChild(h3);
      for (const l of lines) c.appendChild(status(doc, 'muted', l));
      cols.appendChild(c);
      return c;
    };
    col('original', `Original · ${policyLabel(runPolicy)}`, [summaryLine(ep)]);
    if (r) {
      const shown = Math.min(vm.rerunShown ?? 0, r.episodes.length - 1);
      const e = r.episodes[shown];
      const passed = r.episodes.filter((x) => x.info.hidden_pass).length;
      const c = col('rerun', `Rerun · ${policyLabel(r.policy)}`, [
        `${passed} of ${r.episodes.length} reruns of this task pass · mean turns ${r.stats.turns.toFixed(2)}`,
        `episode ${shown}: ${summaryLine(e)}`,
      ]);
      const pick = doc.createElement('div');
      pick.className = 'controls';
      pick.appendChild(
        makeDropdown(
          doc,
          'rerun-episode',
          r.episodes.map((x, i) => ({
            value: String(i),
            label: `rerun episode ${i}: ${x.info.hidden_pass ? 'pass' : 'fail'}, ${x.info.n_turns} turns`,
          })),
          String(shown),
          (v) => h.onRerunShown?.(Number(v)),
        ),
      );
      c.appendChild(pick);
      const calls = episodeCalls(e);
      const last = calls.length ? calls[calls.length - 1].k : 0;
      let view: StripView | null = null;
      try {
        view = calls.length ? stripView(e, last, r.policy) : null;
      } catch {
        view = null;
      }
      const note = status(
        doc,
        'muted',
        view
          ? `As its last call (call ${last}) saw it under ${policyLabel(r.policy)}: ${view.visible} of ${view.prefixLength} tokens${view.placeholders.length ? `, ${view.placeholders.length} observation${view.placeholders.length === 1 ? '' : 's'} replaced` : ''}.`
          : 'The whole episode.',
      );
      c.append(note, renderTokenStrip(doc, e, null, { view }));
      box.appendChild(cols);
      // The original and the rerun episode shown, call by call, differences marked.
      box.appendChild(
        renderComparisonTable(
          doc,
          `The original against rerun episode ${shown}, call by call`,
          [`original · ${policyLabel(runPolicy)}`, `rerun ${shown} · ${policyLabel(r.policy)}`],
          episodeCompareLines(ep, e),
          null,
          'compare-rerun',
        ),
      );
    } else {
      col('rerun pending', 'Rerun', ['sampling in the trainer process…']);
      box.appendChild(cols);
    }
  }
  if (vm.evals?.length) box.appendChild(renderCrossTable(doc, vm.evals));
  return box;
}
