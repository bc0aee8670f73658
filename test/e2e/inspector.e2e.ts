/**
 * End to end, in a real VS Code workbench (code-server, offline) driven by headless Chromium
 * (see ../../../shared/E2E.md): install the packaged .vsix, run "Episode Lab: Sample Episodes"
 * from the command palette, open an episode from the run explorer, check the inspector's token
 * strip chip by chip per owner, inject "train on tool tokens" and see the flags, survive a window
 * reload, and save screenshots in a dark and a light theme to test/e2e/.work/screenshots/.
 *
 * Needs `bash test/e2e/setup.sh` and `npm run package` first (`npm run test:e2e` does both).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { type Browser, chromium, type FrameLocator, type Page } from 'playwright-core';

const E2E = __dirname;
const ROOT = path.resolve(E2E, '..', '..');
const WORK = path.join(E2E, '.work');
const RUN = path.join(WORK, 'run');
const SHOTS = path.join(WORK, 'screenshots');
const VSIX = path.join(ROOT, 'episode-lab.vsix');
const CODE_SERVER = path.join(E2E, 'node_modules', '.bin', 'code-server');
const WORKSPACE = path.join(RUN, 'workspace');
const OWNERS = ['template', 'prompt', 'policy', 'tool'] as const;

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const say = (msg: string) => process.stdout.write(`  [e2e ${elapsed()}] ${msg}\n`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

function writeSettings(theme: string): void {
  const dir = path.join(RUN, 'user-data', 'User');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.colorTheme': theme,
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'security.workspace.trust.enabled': false,
        'chat.commandCenter.enabled': false,
        'window.commandCenter': false,
        'git.openRepositoryInParentFolders': 'never',
        'git.enabled': false,
      },
      null,
      2,
    ),
  );
}

const env = () => ({
  ...process.env,
  XDG_DATA_HOME: path.join(RUN, 'xdg-data'),
  XDG_CONFIG_HOME: path.join(RUN, 'xdg-config'),
  XDG_CACHE_HOME: path.join(RUN, 'xdg-cache'),
});

function codeServerArgs(): string[] {
  return [
    '--config',
    path.join(RUN, 'config.yaml'),
    '--user-data-dir',
    path.join(RUN, 'user-data'),
    '--extensions-dir',
    path.join(RUN, 'ext'),
  ];
}

async function waitHealthy(port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer /healthz within ${ms} ms`);
}

/** Run a command from the palette; right after start-up it may not be listed yet, so retry. */
async function runCommand(page: Page, title: string): Promise<void> {
  for (let attempt = 1; attempt <= 10; attempt++) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 2000 });
      await page.keyboard.press('Enter');
      return;
    } catch {
      say(`"${title}" not listed yet (attempt ${attempt})`);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(500);
    }
  }
  throw new Error(`the command palette never listed "${title}"`);
}

/** The inspector webview's inner frame. */
const inspectorFrame = (page: Page): FrameLocator =>
  page
    .frameLocator('iframe.webview.ready:not([src*="purpose=webviewView"])')
    .frameLocator('iframe#active-frame');

async function chipCounts(frame: FrameLocator): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const o of OWNERS) out[o] = await frame.locator(`.strip .chip.owner-${o}`).count();
  return out;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  say(`screenshot ${name}.png`);
}

test('Episode Lab in code-server: sample, explore, inspect, debug the mask', {
  timeout: 240_000,
}, async () => {
  assert.ok(fs.existsSync(CODE_SERVER), 'run bash test/e2e/setup.sh first');
  assert.ok(fs.existsSync(VSIX), 'run npm run package first');
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.mkdirSync(WORKSPACE, { recursive: true });
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.writeFileSync(path.join(RUN, 'config.yaml'), 'auth: none\ncert: false\n');
  writeSettings('Default Dark Modern');

  execFileSync(CODE_SERVER, [...codeServerArgs(), '--install-extension', VSIX], {
    env: env(),
    stdio: 'pipe',
  });
  say('installed the .vsix');

  const port = await freePort();
  let server: ChildProcess | null = null;
  let browser: Browser | null = null;
  let pageForFailure: Page | null = null;
  const serverLog = fs.openSync(path.join(RUN, 'code-server.log'), 'w');
  try {
    server = spawn(
      CODE_SERVER,
      [
        ...codeServerArgs(),
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        WORKSPACE,
      ],
      { env: env(), detached: true, stdio: ['ignore', serverLog, serverLog] },
    );
    await waitHealthy(port, 30_000);
    say(`code-server up on port ${port}`);

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    pageForFailure = page;
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WORKSPACE)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.part.statusbar').waitFor({ timeout: 60_000 });
    say('workbench ready');

    // 1. Sample episodes from the command palette (first choice: scripted oracle; 32 episodes).
    await runCommand(page, 'Episode Lab: Sample Episodes');
    await page
      .locator('.quick-input-widget', { hasText: 'Sample episodes from' })
      .waitFor({ timeout: 15_000 });
    await page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'Scripted: oracle' })
      .first()
      .waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'How many episodes?' }).waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    const done = page.locator('.notifications-toasts .notification-toast', {
      hasText: 'sampled 32 episodes',
    });
    await done.waitFor({ timeout: 60_000 });
    say('sampled 32 episodes');

    const runsRoot = path.join(WORKSPACE, '.episode-lab', 'runs');
    const runs = fs.readdirSync(runsRoot);
    assert.equal(runs.length, 1);
    const lines = fs
      .readFileSync(path.join(runsRoot, runs[0], 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(lines.length, 32, 'the run folder holds the 32 episodes');
    assert.equal(
      fs
        .readFileSync(path.join(runsRoot, runs[0], 'history.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
      4,
    );
    const first = JSON.parse(lines[0]) as { owner: number[]; actionMask: number[] };
    const expected = Object.fromEntries(OWNERS.map((o, k) => [o, first.owner.filter((x) => x === k).length]));

    // 2. The run explorer shows the run with its steps and episodes: open episode 0 of step 0.
    const episodeRow = page.locator('.monaco-list-row[aria-label^="episode 0, step 0,"]');
    await episodeRow.waitFor({ timeout: 15_000 });
    assert.equal((await page.locator('.monaco-list-row[aria-label^="episode 0, step"]').count()) >= 1, true);
    await episodeRow.click();
    const frame = inspectorFrame(page);
    await frame.locator('.strip .chip').first().waitFor({ timeout: 30_000 });
    say('inspector open');

    // 3. One chip per token, per owner as in the file; the correct mask shows zero flags.
    assert.deepEqual(await chipCounts(frame), expected);
    await frame.locator('.verdict.good').waitFor({ timeout: 30_000 });
    assert.match((await frame.locator('.verdict').textContent()) ?? '', /^0 flags/);
    assert.equal(await frame.locator('.strip .chip.flag').count(), 0);
    assert.equal(await frame.locator('.strip .chip.grad').count(), expected.policy);
    assert.match(
      (await frame.locator('.backend').textContent()) ?? '',
      /backend \(trainer process\): (wasm|cpu|tensorflow)/,
    );
    await frame.locator('.strip .chip.owner-policy').first().focus();
    assert.match((await frame.locator('.detail').textContent()) ?? '', /ownerpolicy/);
    await shot(page, 'inspector-dark-correct-mask');

    // 4. Inject "train on tool tokens": every tool chip is flagged, nothing else.
    await frame.locator('vscode-dropdown#bug').click();
    await frame.locator('vscode-option[value="tool"]').click();
    await frame.locator('.verdict.bad').waitFor({ timeout: 30_000 });
    assert.equal(await frame.locator('.strip .chip.flag').count(), expected.tool);
    assert.equal(await frame.locator('.strip .chip.flag:not(.owner-tool)').count(), 0);
    assert.equal(
      await frame.locator('.mask-table tr.owner-tool td').last().textContent(),
      String(expected.tool),
    );
    await frame.locator('.strip .chip.flag').first().hover();
    await shot(page, 'inspector-dark-tool-bug');

    // 5. A window reload keeps the inspector (serializer + webview state), with the chosen bug.
    await runCommand(page, 'Developer: Reload Window');
    await page.waitForEvent('load', { timeout: 30_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const revived = inspectorFrame(page);
    await revived.locator('.verdict.bad').waitFor({ timeout: 60_000 });
    assert.deepEqual(await chipCounts(revived), expected);
    assert.equal(await revived.locator('.strip .chip.flag').count(), expected.tool);
    say('the inspector survived a window reload');

    // 6. Light theme (the theme picker is avoided: it offers a marketplace search).
    await runCommand(page, 'Preferences: Toggle between Light/Dark Themes');
    await page.locator('.monaco-workbench.vs:not(.vs-dark)').waitFor({ timeout: 20_000 });
    await revived.locator('body.vscode-light').waitFor({ timeout: 20_000 });
    await page.waitForTimeout(500);
    await shot(page, 'inspector-light-tool-bug');
    await revived.locator('vscode-dropdown#bug').click();
    await revived.locator('vscode-option[value="shift"]').click();
    await revived.locator('.verdict.bad').waitFor({ timeout: 30_000 });
    await page.waitForTimeout(300);
    await shot(page, 'inspector-light-shift-bug');

    const csp = consoleErrors.filter((e) => /Content Security Policy|Refused to/.test(e));
    assert.deepEqual(csp, [], 'no CSP violation');
    say('done');
  } catch (e) {
    await pageForFailure?.screenshot({ path: path.join(SHOTS, 'failure.png') }).catch(() => {});
    throw e;
  } finally {
    await browser?.close().catch(() => {});
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 300));
      try {
        process.kill(-server.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.closeSync(serverLog);
  }
});
