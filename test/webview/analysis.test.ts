/**
 * Render functions of the analysis views with fixed data: the credit bars line up with
 * the calls, a keep_obs view greys exactly the dropped tool tokens, the dashboard draws one curve
 * per series and a mean ± sd band per group of seeds, the cross table is models x contexts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callSpans, OWNER } from '../../src/core/index.js';
import type { RunSeries } from '../../src/protocol/webview.js';
import {
  curveSeries,
  renderCurveChart,
  renderDashboard,
  renderRecipeTable,
  smooth,
} from '../../webview/dashboard/dashboard.js';
import { mostCalls, renderCrossTable } from '../../webview/inspector/context.js';
import { CREDIT_SERIES, fitLabel, renderCreditBars } from '../../webview/inspector/credit.js';
import { heatBucket, renderTokenStrip, tokenDetail } from '../../webview/inspector/strip.js';
import { renderInspector } from '../../webview/page.js';
import { episodeCalls, stripView, type ViewModel } from '../../webview/view-model.js';
import { credit, doc, ep, task } from './fixtures.js';

const K = callSpans(ep.actionMask).length;

/** An inspector view model of `ep` from a run with no critic, with `over` on top. */
function vmOf(over: Partial<ViewModel> = {}, retrainUnavailable: string | null = null): ViewModel {
  return {
    episode: ep,
    title: 't',
    bug: 'correct',
    mask: null,
    maskPending: false,
    maskError: null,
    backend: 'cpu',
    source: {
      run: 'r',
      dir: '/r',
      model: 'base',
      critic: false,
      contextPolicy: { kind: 'full' },
      retrainUnavailable,
    },
    ...over,
  };
}

describe('per-call credit bars', () => {
  test('one group per call, in call order, left to right, each with the six series', () => {
    assert.equal(K, 4);
    const svg = renderCreditBars(doc(), credit(true), null);
    const groups = [...svg.querySelectorAll('g.call-group')];
    assert.equal(groups.length, K);
    assert.deepEqual(
      groups.map((g) => g.getAttribute('data-call')),
      ['0', '1', '2', '3'],
    );
    const xs = groups.map((g) => Number(/translate\(([\d.]+)/.exec(g.getAttribute('transform')!)![1]));
    assert.ok(
      xs.every((x, i) => i === 0 || x > xs[i - 1]),
      'groups run left to right as the calls do',
    );
    for (const g of groups) assert.equal(g.querySelectorAll('rect.bar').length, CREDIT_SERIES.length);
    // Each group is labelled with its call's text, as the strip shows it.
    // Long labels are cut to the group's width (with an ellipsis); the whole call is the title.
    const labels = groups.map((g) => g.querySelector('.call-text')!.firstChild!.textContent ?? '');
    const titles = groups.map((g) => g.querySelector('.call-text title')!.textContent);
    const calls = episodeCalls(ep).map((c) => c.text);
    assert.deepEqual(titles, calls);
    labels.forEach((l, k) => {
      const full = calls[k].replace(/<\/?call>/g, '').trim();
      assert.ok(l === full || (l.endsWith('…') && full.startsWith(l.slice(0, -1))), `${l} is ${full}, cut`);
    });
    assert.equal(fitLabel('edit fix_off_by_one', 96), 'edit fix_off_b…');
    assert.equal(fitLabel('read', 96), 'read');
    // The reward bar of the last call (verdict 1 - 0.05) is positive; the others negative.
    const rewardBars = groups.map((g) => g.querySelector('rect.bar-reward')!);
    assert.equal(rewardBars.at(-1)!.classList.contains('neg'), false);
    assert.ok(rewardBars.slice(0, -1).every((b) => b.classList.contains('neg')));
  });

  test('without a critic: reward and outcome advantage only', () => {
    const svg = renderCreditBars(doc(), credit(false), 2);
    for (const g of svg.querySelectorAll('g.call-group')) {
      const bars = [...g.querySelectorAll('rect.bar')].map((b) => b.getAttribute('class')!.split(' ')[1]);
      assert.deepEqual(bars, ['bar-reward', 'bar-advOutcome']);
    }
    assert.equal(svg.querySelector('g.call-group.selected')!.getAttribute('data-call'), '2');
  });

  test('the inspector shows the no-critic note and the heat band on policy tokens only', () => {
    const vm = vmOf({ credit: credit(false), heat: true }, 'not yet');
    const root = renderInspector(doc(), vm, { onBug() {} });
    assert.match(root.querySelector('.credit-note')!.textContent!, /Outcome advantage only/);
    assert.equal(
      root.querySelectorAll('.strip-box .chip .heat').length,
      ep.actionMask.filter(Boolean).length,
    );
    assert.equal(root.querySelector('vscode-button#retrain')!.hasAttribute('disabled'), true);
    assert.equal(root.querySelector('vscode-button#retrain')!.getAttribute('title'), 'not yet');
  });

  test('retrain: the step count is a field, a running retrain has a cancel, a cancelled one is not offered', () => {
    const base = vmOf({ retrainSteps: 12 });
    const asked: number[] = [];
    const cancels: string[] = [];
    const d = doc();
    const idle = renderInspector(d, base, {
      onBug() {},
      onRetrainSteps: (n) => asked.push(n),
      onCancel: (op) => cancels.push(op),
    });
    const field = idle.querySelector('input#retrain-steps') as HTMLInputElement;
    assert.equal(field.value, '12');
    field.value = '25';
    field.dispatchEvent(new d.defaultView!.Event('change'));
    field.value = '0';
    field.dispatchEvent(new d.defaultView!.Event('change'));
    assert.deepEqual(asked, [25], 'an out-of-range count is refused');
    assert.equal(idle.querySelector('#cancel-retrain'), null, 'no cancel while nothing runs');
    assert.equal(idle.querySelector('vscode-button#evaluate-retrained'), null);

    const running = renderInspector(
      doc(),
      { ...base, retrainJob: { pending: true, progress: 'step 3/12', error: null } },
      { onBug() {}, onCancel: (op) => cancels.push(op) },
    );
    assert.equal((running.querySelector('input#retrain-steps') as HTMLInputElement).disabled, true);
    (running.querySelector('#cancel-retrain') as HTMLElement).click();
    assert.deepEqual(cancels, ['retrain']);

    const stopped = renderInspector(
      doc(),
      { ...base, retrainCancelled: 'Retraining cancelled after 2 steps', retrained: null },
      { onBug() {} },
    );
    assert.match(stopped.querySelector('.retrain-cancelled')!.textContent!, /cancelled after 2 steps/);
    assert.equal(stopped.querySelector('vscode-button#evaluate-retrained'), null);
  });

  test('"open beside" is offered when the host can open a second inspector, and asks for it', () => {
    const vm = vmOf();
    assert.equal(renderInspector(doc(), vm, { onBug() {} }).querySelector('#open-beside'), null);
    let asked = 0;
    const root = renderInspector(doc(), vm, { onBug() {}, onOpenBeside: () => asked++ });
    (root.querySelector('header #open-beside') as HTMLElement).click();
    assert.equal(asked, 1);
  });

  test('heat buckets are signed and saturate at 3', () => {
    assert.equal(heatBucket(0, 1), 0);
    assert.equal(heatBucket(1, 1), 3);
    assert.equal(heatBucket(-0.6, 1), -2);
    assert.equal(heatBucket(0.01, 1), 1);
  });
});

describe('context view on the strip', () => {
  test('keep_obs = 1: call 3 sees the last observation only; older tool tokens are greyed', () => {
    const view = stripView(ep, 3, { kind: 'keepObs', k: 1 });
    const strip = renderTokenStrip(doc(), ep, null, { view });
    const dropped = [...strip.querySelectorAll('.chip.dropped')].map((c) => Number(c.getAttribute('data-i')));
    const expected = ep.owner.flatMap((o, i) => (o === OWNER.tool && ep.turn[i] < 2 ? [i] : []));
    assert.deepEqual(dropped, expected);
    assert.ok(dropped.every((i) => ep.owner[i] === OWNER.tool));
    // Turns 0 and 1 had an observation: two placeholders, each after its <obs>.
    const ph = [...strip.querySelectorAll('.ph')];
    assert.equal(ph.length, 2);
    assert.equal(ph[0].previousElementSibling!.classList.contains('placeholder-at'), true);
    assert.match(ph[0].textContent!, /dropped/);
    // The call's own tokens and what follows are "future".
    const future = strip.querySelectorAll('.chip.future').length;
    assert.equal(future, ep.ids.length - view.prefixLength);
    assert.match(tokenDetail(ep, dropped[0], null, { view }).at(-1)![1], /dropped/);
  });

  test('full history drops nothing; keep_obs = 0 drops every earlier observation', () => {
    const full = renderTokenStrip(doc(), ep, null, { view: stripView(ep, 3, { kind: 'full' }) });
    assert.equal(full.querySelectorAll('.chip.dropped').length, 0);
    const none = renderTokenStrip(doc(), ep, null, { view: stripView(ep, 3, { kind: 'keepObs', k: 0 }) });
    const tools = ep.owner.filter((o, i) => o === OWNER.tool && ep.turn[i] < 3).length;
    assert.equal(none.querySelectorAll('.chip.dropped').length, tools);
  });

  test('summarise replaces a read by the operation it shows', () => {
    const strip = renderTokenStrip(doc(), ep, null, { view: stripView(ep, 3, { kind: 'summarize' }) });
    const ph = strip.querySelector('.ph.ph-summary');
    assert.ok(ph);
    assert.match(ph.textContent!, new RegExp(task.kind));
  });

  test('the rerun shown first is the one with the most calls', () => {
    const short = { ...ep, info: { ...ep.info, n_turns: 1 } };
    assert.equal(mostCalls([short, ep, short]), 1);
  });
});

describe('cross table', () => {
  test('models x contexts (2 x 3), the best cell of a row marked', () => {
    const s = (p: number) => ({ pass_rate: p, turns: 3, reads: 1, tests: 0, edits: 1, reward: p });
    const cells = [
      ['trained: full', 'full', 0.6],
      ['trained: full', 'keep_obs=1', 0.4],
      ['trained: full', 'keep_obs=0', 0.1],
      ['trained: keep_obs=1', 'full', 0.3],
      ['trained: keep_obs=1', 'keep_obs=1', 0.5],
      ['trained: keep_obs=1', 'keep_obs=0', 0.1],
    ].map(([model, context, p]) => ({
      model: model as string,
      context: context as string,
      stats: s(p as number),
      episodes: 80,
    }));
    const t = renderCrossTable(doc(), cells);
    assert.equal(t.querySelectorAll('tbody tr').length, 2);
    assert.equal(t.querySelectorAll('thead th').length, 4);
    assert.equal(
      t.querySelector('thead th')?.textContent,
      'model \\ evaluated under',
      'one backslash, not two',
    );
    assert.deepEqual(
      [...t.querySelectorAll('td.best')].map((c) => c.textContent),
      ['0.600, n=80 (3.00)', '0.500, n=80 (3.00)'],
    );
  });
});

/** A run's curves: a ramp plus an offset. */
function run(name: string, group: string, offset: number, steps = 10): RunSeries {
  const s = Array.from({ length: steps }, (_, i) => i);
  const metrics: Record<string, (number | null)[]> = {};
  for (const m of ['pass_rate', 'reads', 'tests', 'edits', 'turns', 'reward'])
    metrics[m] = s.map((i) => Math.min(1, 0.1 + 0.05 * i + offset));
  return { id: `/runs/${name}`, name, group, live: false, steps: s, metrics };
}

describe('training dashboard', () => {
  test('a curve per series; seeds of one group become a mean with a ± sd band', () => {
    const runs = [
      run('seed-0/default', 'default', 0),
      run('seed-1/default', 'default', 0.1),
      run('other', 'other', 0.2),
    ];
    const series = curveSeries(runs, 'pass_rate');
    assert.equal(series.length, 2);
    assert.equal(series[0].runs, 2);
    assert.ok(Math.abs(series[0].points[0].value - 0.15) < 1e-12);
    assert.ok(Math.abs(series[0].points[0].sd - Math.sqrt(0.005)) < 1e-12, 'sample sd of 0.1 and 0.2');
    const svg = renderCurveChart(doc(), 'pass_rate', series);
    assert.equal(svg.querySelectorAll('path.curve').length, 2);
    assert.equal(svg.querySelectorAll('path.band').length, 1);
    assert.equal(svg.querySelectorAll('path.member').length, 2);
    assert.ok(svg.querySelector('path.band')!.getAttribute('d')!.length > 20);
  });

  test('six charts (figure 12.2), one curve per run when ungrouped, and the recipe tables', () => {
    const runs = Array.from({ length: 4 }, (_, i) => run(`r${i}`, `r${i}`, i / 10));
    const root = renderDashboard(
      doc(),
      {
        runs,
        tables: [
          {
            title: 'T',
            columns: ['arm', 'pass'],
            rows: [['a', 0.5]],
            digits: [0, 2],
            spread: [[null, 0.1]],
            source: 'x',
          },
        ],
        notes: ['n'],
      },
      { onExport() {} },
    );
    const charts = root.querySelectorAll('svg.curve-chart');
    assert.equal(charts.length, 6);
    for (const c of charts) assert.equal(c.querySelectorAll('path.curve').length, 4);
    assert.equal(root.querySelectorAll('button.export').length, 6);
    assert.equal(root.querySelector('.recipe-table td.num')!.textContent, '0.50 ±0.10');
  });

  test("each run's state beside its name: running, stopped, finished; a group counts its runs' states", () => {
    const running = { ...run('r', 'r', 0), live: true, state: 'running' as const };
    const stopped = { ...run('s', 's', 0), state: 'stopped' as const };
    const done = { ...run('f', 'f', 0), state: 'finished' as const };
    const unknown = run('u', 'u', 0);
    const seeds = [
      { ...run('seed-0/g', 'g', 0), state: 'finished' as const },
      { ...run('seed-1/g', 'g', 0), state: 'stopped' as const },
      { ...run('seed-2/g', 'g', 0), state: 'finished' as const },
    ];
    const root = renderDashboard(
      doc(),
      { runs: [running, stopped, done, unknown, ...seeds], tables: [], notes: [] },
      { onExport() {} },
    );
    const items = [...root.querySelectorAll('.curve-legend .legend-item')].map((i) => [
      i.firstElementChild?.nextElementSibling?.textContent,
      i.querySelector('.run-state')?.className ?? null,
      i.querySelector('.run-state')?.textContent ?? null,
    ]);
    assert.deepEqual(items, [
      ['r', 'run-state state-running', 'running'],
      ['s', 'run-state state-stopped', 'stopped'],
      ['f', 'run-state state-finished', 'finished'],
      ['u', null, null],
      ['g (mean ± sd of 3)', 'run-state state-mixed', '1 stopped, 2 finished'],
    ]);
    assert.match(root.querySelector('.info')!.textContent!, /· 2 stopped \(Resume Run continues them\)$/);
    // The running run's legend entry is marked live (its swatch dashed as its curve), no other.
    const live = [...root.querySelectorAll('.curve-legend .legend-item.live')].map(
      (i) => i.firstElementChild?.nextElementSibling?.textContent,
    );
    assert.deepEqual(live, ['r']);
    assert.ok(root.querySelector('.series.live'), 'its curve is live too');
  });

  test('diagnostics a run has get their own charts; hover points give raw values; held-out is a marker', () => {
    const a = run('a', 'a', 0);
    a.metrics.approx_kl = a.steps.map((i) => (i === 3 ? null : 0.01 * i));
    a.heldout = { pass_rate: 0.42 };
    const b = run('b', 'b', 0.1);
    const root = renderDashboard(doc(), { runs: [a, b], tables: [], notes: [] }, { onExport() {} });
    const metrics = [...root.querySelectorAll('svg.curve-chart')].map((c) => c.getAttribute('data-metric'));
    assert.deepEqual(metrics, ['pass_rate', 'reads', 'tests', 'edits', 'turns', 'reward', 'approx_kl']);
    assert.deepEqual(
      [...root.querySelectorAll('h2')].map((h) => h.textContent),
      ['Behaviour (figure 12.2)', 'Optimisation diagnostics'],
    );
    const kl = root.querySelector('svg[data-metric="approx_kl"]')!;
    assert.equal(
      kl.querySelectorAll('.series[data-name="a"] circle.pt').length,
      9,
      'the missing step has none',
    );
    assert.equal(kl.querySelector('.y-label')!.textContent, 'approx KL (old ‖ new)');
    assert.equal(kl.querySelector('.x-label')!.textContent, 'training step');
    const pass = root.querySelector('svg[data-metric="pass_rate"]')!;
    const titles = [...pass.querySelectorAll('.series[data-name="a"] circle.pt title')].map(
      (t) => t.textContent,
    );
    // This run's steps do not say how many episodes they had: a rate then says its n is unknown.
    assert.equal(titles[2], 'a · step 2: 0.2000 (n not recorded)');
    assert.equal(pass.querySelectorAll('path.heldout').length, 1, 'only the evaluated run has a marker');
    assert.equal(
      pass.querySelector('path.heldout title')!.textContent,
      'a · held-out pass rate: 0.4200 (n not recorded)',
    );
    assert.equal(root.querySelectorAll('svg[data-metric="reads"] path.heldout').length, 0);
  });

  test('smoothing: an exponential moving average over a faint raw curve, chosen from the page', () => {
    assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
    const sm = smooth([0, 10, 10, 10], 0.5);
    assert.equal(sm[0], 0, 'debiased: the first point is the first value');
    assert.ok(Math.abs(sm[1] - 5 / 0.75) < 1e-12);
    assert.ok(sm[3] > sm[2] && sm[3] < 10);
    const chosen: number[] = [];
    const runs = [run('a', 'a', 0)];
    const off = renderDashboard(
      doc(),
      { runs, tables: [], notes: [] },
      { onExport() {}, onSmoothing: (w) => chosen.push(w) },
    );
    assert.equal(off.querySelectorAll('path.raw').length, 0);
    assert.equal(off.querySelector('.smoothing button[aria-pressed="true"]')!.textContent, 'off');
    (off.querySelector('.smoothing button[data-smoothing="0.9"]') as HTMLElement).click();
    assert.deepEqual(chosen, [0.9]);
    const on = renderDashboard(doc(), { runs, tables: [], notes: [] }, { onExport() {} }, { smoothing: 0.9 });
    assert.equal(on.querySelectorAll('path.raw').length, 6);
    assert.equal(on.querySelectorAll('path.curve.smoothed').length, 6);
    assert.notEqual(
      on.querySelector('path.smoothed')!.getAttribute('d'),
      on.querySelector('path.raw')!.getAttribute('d'),
    );
  });

  test('recipe tables print numbers with their digits', () => {
    const t = renderRecipeTable(doc(), {
      title: 'T',
      columns: ['a', 'b'],
      rows: [
        ['x', 0.12345],
        ['y', '-'],
      ],
      digits: [0, 2],
      source: 's',
    });
    assert.deepEqual(
      [...t.querySelectorAll('td.num')].map((td) => td.textContent),
      ['0.12', '-'], // a missing number is aligned with the numbers
    );
  });
});
