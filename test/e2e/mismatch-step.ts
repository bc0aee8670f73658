/**
 * An end-to-end step for the mismatch views: with a NeMo-RL dump (test/fixtures/dumps/nemo-rl-buggy.jsonl)
 * open in an inspector (the dump steps before it open one), check the strip's mismatch lane and a
 * token's mismatch detail, ask for the file view, move a rule slider, open the worst sample at its
 * worst token, and take screenshots at the workbench's size and at 400 px wide.
 */
import assert from 'node:assert/strict';
import type { Frame, Page } from 'playwright-core';

/** The inspector frame that shows a dump sample, polled until it appears. */
async function dumpFrame(page: Page, ms = 30_000): Promise<Frame> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const f of page.frames()) {
      try {
        const shown = await f.evaluate(() => {
          const app = document.getElementById('app');
          return Boolean(app && app.dataset.view === 'inspector' && app.dataset.state === 'dump');
        });
        if (shown) return f;
      } catch {
        // a frame that is navigating or cross-origin: skip
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no inspector showing a dump appeared within ${ms} ms`);
}

async function scrollTo(frame: Frame, selector: string): Promise<void> {
  await frame
    .locator(selector)
    .first()
    .evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await frame.page().waitForTimeout(200);
}

export async function mismatchViews(
  page: Page,
  shot: (page: Page, name: string) => Promise<void>,
): Promise<void> {
  const rf = await dumpFrame(page);
  // The lane: coloured on trained tokens with both log-probs, hatched on placeholders.
  await rf.locator('.strip-box .chip .vlane').first().waitFor({ timeout: 30_000 });
  const coloured = await rf.locator('.strip-box .chip .vlane:not(.none)').count();
  assert.ok(coloured > 0, 'the lane colours the trained tokens');
  assert.match((await rf.locator('.mm-legend').textContent()) ?? '', /clipped at p99/);
  await rf.locator('.strip-box .chip:has(.vlane:not(.none))').first().hover();
  assert.match((await rf.locator('.detail').textContent()) ?? '', /d = trainer − sampler/);
  assert.ok((await rf.locator('.turn-mm').count()) > 0, 'per-turn figures beside the turns');
  await shot(page, 'mismatch-dark-lane');
  await scrollTo(rf, '.turn-mismatch');
  await shot(page, 'mismatch-dark-turns');
  // The file view.
  await rf.locator('#file-mismatch').click();
  await rf.locator('.mm-summary').waitFor({ timeout: 60_000 });
  assert.equal(await rf.locator('.mm-scatter path.points').count(), 2, 'two scatter plots');
  await scrollTo(rf, '.mismatch-file');
  await shot(page, 'mismatch-dark-file');
  const before = await rf.locator('.mm-rule-tis .mm-frac').textContent();
  await rf.locator('#mm-tis').fill('1');
  await rf.locator('.mm-rule-tis .mm-frac', { hasNotText: before ?? '' }).waitFor({ timeout: 5_000 });
  await scrollTo(rf, '.mm-rules');
  await shot(page, 'mismatch-dark-sliders');
  const size = page.viewportSize();
  if (size) {
    await page.setViewportSize({ width: 400, height: size.height });
    await page.waitForTimeout(500);
    await scrollTo(rf, '.mismatch-file');
    await shot(page, 'mismatch-dark-file-400');
    await page.setViewportSize(size);
    await page.waitForTimeout(500);
  }
  // The worst sample opens at its worst token.
  await rf.locator('.mm-worst button').first().click();
  await rf
    .locator('.chip.focused, .chip:focus')
    .first()
    .waitFor({ timeout: 30_000 })
    .catch(() => {});
  await shot(page, 'mismatch-dark-worst');
}
