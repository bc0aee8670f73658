/**
 * The layout check of the end-to-end suite: nothing in a webview is wider than its panel.
 *
 * `overflowing(page)` looks into every frame whose document has an `#app` (the inspector, the
 * episode table, the dashboard) and returns one line per element that is wider than the frame's
 * viewport (`document.documentElement.clientWidth`), or that reaches past its right or left edge
 * without a horizontally scrolling box between it and the page (an element inside such a box is
 * reachable by scrolling that box, so only its width counts). Each line reads
 * `<view> <selector>: <width> px wide at [left, right] in a <panel> px panel`; empty: all fits.
 * Hidden elements (no box) are skipped.
 */
import type { Frame, Page } from 'playwright-core';

/** What the page-side check returns for one frame. */
interface FrameReport {
  view: string;
  lines: string[];
}

/** Runs inside the webview's document (no closure over Node values). */
function checkDocument(): FrameReport | null {
  const app = document.getElementById('app');
  if (!app || document.visibilityState !== 'visible' || window.innerWidth === 0) return null;
  const panel = document.documentElement.clientWidth;
  const describe = (e: Element): string => {
    const parts: string[] = [];
    for (let n: Element | null = e; n && n !== document.body && parts.length < 4; n = n.parentElement) {
      const cls = [...n.classList]
        .slice(0, 2)
        .map((c) => `.${c}`)
        .join('');
      parts.unshift(`${n.tagName.toLowerCase()}${n.id ? `#${n.id}` : ''}${cls}`);
    }
    return parts.join(' > ');
  };
  const scrolls = (e: Element): boolean => {
    for (let n = e.parentElement; n && n !== document.body; n = n.parentElement) {
      const ox = getComputedStyle(n).overflowX;
      if (ox === 'auto' || ox === 'scroll' || ox === 'hidden' || ox === 'clip') return true;
    }
    return false;
  };
  const lines: string[] = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const tooWide = r.width > panel + 1;
    const outside = (r.right > panel + 1 || r.left < -1) && !scrolls(e);
    if (tooWide || outside)
      lines.push(
        `${describe(e)}: ${Math.round(r.width)} px wide at [${Math.round(r.left)}, ${Math.round(r.right)}] in a ${panel} px panel`,
      );
  }
  return { view: app.dataset.view ?? 'webview', lines };
}

/** Every element wider than its webview panel, in every webview frame of the page (see the file's comment). */
export async function overflowing(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const f of page.frames()) {
    const report = await reportOf(f);
    if (report) for (const l of report.lines) out.push(`${report.view} ${l}`);
  }
  return out;
}

async function reportOf(f: Frame): Promise<FrameReport | null> {
  try {
    // tsx compiles this file with esbuild's keepNames, which wraps the inner functions of
    // checkDocument in `__name(...)`: the page needs that helper, or every check throws.
    await f.evaluate('globalThis.__name = globalThis.__name || ((fn) => fn)');
    return await f.evaluate(checkDocument);
  } catch (e) {
    // A mistake in the check itself must fail the test, not pass as "nothing overflows".
    if (/ReferenceError|TypeError|SyntaxError/.test(String(e))) throw e;
    // a frame that is navigating or cross-origin has nothing of ours to check
    return null;
  }
}
