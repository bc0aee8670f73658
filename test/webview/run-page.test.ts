/**
 * The run view page driven as the host drives it (test/webview/harness.ts): a run's state in (rows
 * summarised by the trainer's runSteps from test/run-fixture.ts's folder), the charts, reference
 * lines, advisories and follow bar it draws, and what a point, the follow button and the group
 * view's buttons post.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { scaleLinear } from 'd3';
import { runAdvisories } from '../../src/extension/run-folders/run-follow.js';
import { runGroup, runSteps } from '../../src/job-host/run-jobs.js';
import { yTickFormat } from '../../webview/axes.js';
import { type FigureSpec, renderStepChart } from '../../webview/run/run-charts.js';
import { pathText } from '../../webview/run/run-group.js';
import { startRunView } from '../../webview/run/run-main.js';
import { writeRunStep } from '../run-fixture.js';
import { doc } from './fixtures.js';
import { openPage, wait } from './harness.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'el-run-page-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dir = path.join(tmp, 'run');
const refs = [0, 1, 2, 3, 4].map((step) => {
  const file = writeRunStep(dir, step);
  return { step, path: file, files: [file] };
});

async function rows() {
  const r = await runSteps(
    { kind: 'runSteps', dir, tokenizer: null, cacheDir: null, steps: refs },
    { progress: () => {}, cancelled: () => false },
  );
  return r.steps;
}

describe('the run view page', () => {
  test('charts with reference lines, advisories with evidence, follow bar; a point opens its step', async () => {
    const steps = await rows();
    const page = await openPage(startRunView);
    const advisories = runAdvisories(steps);
    page.send({
      type: 'run',
      dir,
      layout: 'flat',
      steps,
      advisories,
      following: true,
      waiting: [{ step: 5, why: 'quiet' }],
      busy: null,
      errors: [],
    });
    await wait(5);
    const d = page.document;
    assert.equal(page.app.dataset.stepList, '0,1,2,3,4');
    const figures = [...d.querySelectorAll('.run-chart')].map((f) => (f as HTMLElement).dataset.figure);
    for (const id of ['findings', 'k3', 'mean_exp_abs', 'reward', 'zero_std', 'truncated', 'length', 'turns'])
      assert.ok(figures.includes(id), `chart ${id}`);
    assert.ok(!figures.includes('versions'), 'no weight versions recorded: no chart');
    const trunc = d.querySelector('.run-chart[data-figure="truncated"]')!;
    assert.ok(
      trunc.classList.contains('missing') && !trunc.querySelector('svg'),
      'unknown truncation: a note',
    );
    // Findings per rule: stacked bars adding up to each step's findings.
    const bars = [...d.querySelectorAll('.run-chart[data-figure="findings"] rect.bar')];
    const total = (step: number) =>
      bars
        .filter((b) => b.getAttribute('data-step') === String(step))
        .reduce((n, b) => n + Number(/: (\d+)/.exec(b.querySelector('title')!.textContent ?? '')![1]), 0);
    for (const s of steps)
      assert.equal(
        total(s.step),
        Object.values(s.summary.findings).reduce((a, b) => a + b, 0),
      );
    const k3 = d.querySelector('.run-chart[data-figure="k3"]')!;
    assert.match(k3.querySelector('.ref-label')!.textContent ?? '', /k3 = 1e-3/);
    assert.match(k3.querySelector('figcaption')!.getAttribute('title') ?? '', /mismatch_kl/);
    assert.match(k3.querySelector('.y-label')!.textContent ?? '', /nats/);
    const mea = d.querySelector('.run-chart[data-figure="mean_exp_abs"]')!;
    assert.match(mea.querySelector('.ref-label')!.textContent ?? '', /1\.05/);
    assert.match(mea.querySelector('figcaption')!.getAttribute('title') ?? '', /token_mult_prob_error/);
    // One point per step on the k3 line, each titled with its value.
    const pts = k3.querySelectorAll('circle.run-pt');
    assert.equal(pts.length, 5);
    assert.match(pts[2].querySelector('title')!.textContent ?? '', /step 2: /);
    assert.match(
      d.querySelector('.follow-state')!.textContent ?? '',
      /Following: 5 steps; waiting for step 5/,
    );
    assert.ok(
      advisories.some((a) => a.id === 'mismatch-rising'),
      'the fixture’s mismatch rises',
    );
    const adv = d.querySelector('.advisory[data-advisory="mismatch-rising"]')!;
    assert.ok(adv.querySelectorAll('.evidence button').length >= 4);
    page.fresh();
    // The advisory links to its latest step's sample with the largest share of k3.
    const rise = advisories.find((a) => a.id === 'mismatch-rising')!;
    assert.equal(rise.link.step, 4);
    page.click('.advisory[data-advisory="mismatch-rising"] .advisory-open');
    assert.deepEqual(page.fresh(), [{ type: 'openSample', path: rise.link.path, record: rise.link.sample }]);
    assert.equal(rise.link.path, refs[4].files[0]);
    (pts[3] as unknown as { dispatchEvent(e: Event): void }).dispatchEvent(
      new (d.defaultView as unknown as { Event: typeof Event }).Event('click'),
    );
    const posted = page.fresh();
    assert.deepEqual(posted[0], { type: 'openStep', step: 3 });
    assert.deepEqual(posted[1], { type: 'group', step: 3, group: null });
    page.click('#follow-toggle');
    assert.deepEqual(page.fresh(), [{ type: 'follow', on: false }]);
    // The group view: cards side by side, previous / next group, next sibling.
    const view = await runGroup({
      kind: 'runGroup',
      dir,
      step: refs[3],
      tokenizer: null,
      cacheDir: null,
      group: null,
    });
    page.send({ type: 'group', view });
    await wait(5);
    assert.equal(d.querySelectorAll('.group-card').length, 4);
    assert.equal(d.querySelector('.group-card-head .muted')?.textContent, ' step_3.jsonl');
    assert.match(d.querySelector('.group-title')!.textContent ?? '', /Group 0 of step 3 \(1 of 3\)/);
    assert.ok((d.querySelector('#group-prev') as HTMLButtonElement).disabled);
    page.click('#group-next');
    assert.deepEqual(page.fresh(), [{ type: 'group', step: 3, group: 1 }]);
    page.send({
      type: 'group',
      view: await runGroup({
        kind: 'runGroup',
        dir,
        step: refs[3],
        tokenizer: null,
        cacheDir: null,
        group: 1,
      }),
    });
    await wait(5);
    page.click('#group-sibling');
    assert.deepEqual(page.fresh(), [{ type: 'openSample', path: refs[3].files[0], record: 5 }]);
    assert.equal(d.querySelector('.group-card.selected')?.getAttribute('data-record'), '5');
  });

  test('a run whose steps could not be read leads with it: never "none", "no advisory" or a green follow', async () => {
    const bad = path.join(tmp, 'bad');
    fs.mkdirSync(bad, { recursive: true });
    const garbage = path.join(bad, 'train_data_step1.jsonl');
    fs.writeFileSync(garbage, 'garbage, not JSON\n');
    const good = writeRunStep(bad, 2);
    const read = async (list: { step: number; path: string; files: string[] }[]) =>
      (
        await runSteps(
          { kind: 'runSteps', dir: bad, tokenizer: null, cacheDir: null, steps: list },
          { progress: () => {}, cancelled: () => false },
        )
      ).steps;
    const only = await read([{ step: 1, path: garbage, files: [garbage] }]);
    assert.deepEqual(only[0].unreadable, [garbage], 'the row names the file that could not be read');
    const page = await openPage(startRunView);
    const send = (steps: typeof only) =>
      page.send({
        type: 'run',
        dir: bad,
        layout: 'flat',
        steps,
        advisories: runAdvisories(steps),
        following: true,
        waiting: [],
        busy: null,
        errors: steps.flatMap((r) => r.errors.map((e) => `step ${r.step}: ${e}`)),
      });
    send(only);
    await wait(5);
    const d = page.document;
    const text = (sel: string) => d.querySelector(sel)?.textContent ?? '';
    // The first thing under the title and the follow bar is the refusal, with its reason.
    const first = d.querySelector('.run-view > .run-unreadable');
    assert.ok(first, 'a banner leads');
    assert.match(
      text('.run-unreadable'),
      /The only step could not be read \(step 1\): nothing below was checked/,
    );
    assert.match(text('.run-unreadable'), /line 1 is not JSON/);
    assert.ok(d.querySelector('.follow-state')!.classList.contains('unreadable'), 'no green follow mark');
    assert.match(text('.follow-text'), /Following: 1 step \(it could not be read\)/);
    assert.doesNotMatch(text('.run-advisories'), /No advisory holds/);
    assert.match(text('.run-advisories'), /Not checked: no step could be read/);
    // Nothing was read: no chart and no group view to stand for figures that do not exist.
    assert.equal(d.querySelectorAll('.run-chart').length, 0);
    assert.equal(d.querySelector('.run-group'), null);
    assert.match(text('.run-errors summary'), /^1 problem reading the run$/);
    assert.ok((d.querySelector('.run-errors') as HTMLDetailsElement).open, 'the problems are open');
    // One readable step beside it: counted apart, and the advisories say which steps they cover.
    const both = await read([
      { step: 1, path: garbage, files: [garbage] },
      { step: 2, path: good, files: [good] },
    ]);
    assert.deepEqual(
      both.map((r) => r.unreadable.length),
      [1, 0],
    );
    send(both);
    await wait(5);
    assert.match(
      text('.run-unreadable'),
      /1 of 2 steps could not be read \(step 1\): the figures and advisories below leave them out/,
    );
    assert.match(text('.follow-text'), /Following: 2 steps \(1 could not be read\)/);
    // A clean run has no banner and keeps its plain words.
    send(await read([{ step: 2, path: good, files: [good] }]));
    await wait(5);
    assert.equal(d.querySelector('.run-unreadable'), null);
    assert.ok(!d.querySelector('.follow-state')!.classList.contains('unreadable'));
    assert.match(text('.follow-text'), /^Following: 1 step; new steps/);
  });

  test("a group with a text id (prime-rl's uuid) is named by its start, whole in the tooltip", async () => {
    const page = await openPage(startRunView);
    const steps = await rows();
    page.send({
      type: 'run',
      dir,
      layout: 'flat',
      steps,
      advisories: [],
      following: false,
      waiting: [],
      busy: null,
      errors: [],
    });
    const uuid = '0e541d4c-8385-43cb-aa30-ae5f040f52db';
    const view = await runGroup({
      kind: 'runGroup',
      dir,
      step: refs[4],
      tokenizer: null,
      cacheDir: null,
      group: null,
    });
    assert.equal(view.label, null, 'a numbered group has no label');
    page.send({ type: 'group', view: { ...view, label: uuid } });
    await wait(5);
    const title = page.document.querySelector('.group-title')!;
    assert.match(title.textContent ?? '', /^Group 0e541d4c… of step 4 \(1 of 3\)/);
    assert.equal(title.getAttribute('title'), `group ${uuid}`);
  });

  test('a malformed message is dropped', async () => {
    const page = await openPage(startRunView);
    page.send({ type: 'run', dir: 3 });
    await wait(5);
    assert.match(page.app.textContent ?? '', /Loading/);
  });
});

describe('chart ticks', () => {
  const yTicks = (fig: HTMLElement) =>
    [...fig.querySelectorAll('.y-axis .tick text')].map((t) => t.textContent ?? '');
  const spec = (value: number): FigureSpec => ({
    id: 'one',
    title: 'one',
    unit: 'x',
    about: 'x',
    series: [{ name: 'x', value: () => value }],
  });
  type Row = Parameters<typeof renderStepChart>[2][number];

  test('a one-step chart has short ticks, whatever its value', () => {
    for (const value of [-0.0155194298, 0.0155194298, 0, 3.2, -7]) {
      const fig = renderStepChart(doc(), spec(value), [{ step: 3 } as Row], () => {});
      const ticks = yTicks(fig);
      assert.ok(ticks.length >= 2, `${value}: ticks ${ticks.join(' ')}`);
      for (const t of ticks) assert.ok(t.length <= 6, `${value}: tick "${t}"`);
    }
  });

  test('a card\'s path breaks after each "/" before it breaks inside a name', () => {
    const span = pathText(doc(), 'job-7/trial-1/agent/trajectory.json');
    assert.equal(span.textContent, 'job-7/trial-1/agent/trajectory.json');
    assert.deepEqual(
      [...span.childNodes].map((n) => (n.nodeName === 'WBR' ? '|' : n.textContent)),
      ['job-7/', '|', 'trial-1/', '|', 'agent/', '|', 'trajectory.json'],
    );
  });

  test("the y axis leaves its widest tick label clear of the axis's rotated label", () => {
    // The label (12 px, centred at x = 12) ends at 18; a tick label ends 9 px left of the axis and
    // is at most 0.62 em (11 px) a character wide: the two must not meet, whatever the ticks.
    for (const value of [-0.0155194298, 0.5, -123456, 3.2]) {
      const rows = [{ step: 0 } as Row, { step: 1 } as Row];
      const fig = renderStepChart(doc(), spec(value), rows, () => {});
      const axis = fig.querySelector('.y-axis')?.getAttribute('transform') ?? '';
      const left = Number(/translate\(([-\d.]+)/.exec(axis)?.[1]);
      const widest = Math.max(...yTicks(fig).map((t) => t.length));
      assert.ok(
        left - 9 - widest * 0.62 * 11 >= 18 + 4,
        `${value}: axis at ${left}, ticks ${yTicks(fig).join(' ')}`,
      );
      assert.ok(left >= 58, 'never left of the usual margin');
    }
  });

  test('ticks of tiny values take the exponent form when it is shorter', () => {
    const fig = renderStepChart(doc(), spec(0.0004), [{ step: 0 } as Row, { step: 1 } as Row], () => {});
    const ticks = yTicks(fig);
    assert.ok(ticks.includes('0') || ticks.includes('0.0000'), ticks.join(' '));
    for (const t of ticks) assert.ok(t.length <= 4, `tick "${t}"`);
    assert.equal(yTickFormat(scaleOf([0, 1]))(0.5), '0.5', 'ordinary values keep their plain form');
  });
});

const scaleOf = (domain: [number, number]) => scaleLinear().domain(domain).range([100, 0]);
