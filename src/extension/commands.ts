import * as path from 'node:path';
import * as vscode from 'vscode';
import { SCRIPTED_POLICIES, type ScriptedPolicyName } from '../core/gym/names.js';
import { runCheckpoint } from '../core/paths.js';
import { resumeRefusal } from '../core/runs/resumable.js';
import { readTrainConfig } from '../core/runs/train-config.js';
import type { Credit, Estimator, JobKind, JobOf, JobResults, RunResult } from '../protocol/trainer.js';
import type { Dashboard } from './dashboard.js';
import type { OpenedDump } from './dump-files.js';
import { outcomeFromStep } from './episode-source.js';
import type { Inspectors } from './inspectors.js';
import type { EpisodeEntry } from './run-index.js';
import { runState } from './run-state.js';
import type { Node, RunTreeProvider } from './run-tree.js';
import type { EpisodeTablePanel } from './table-panel.js';
import {
  chooseTokenizer,
  memoryStore,
  PickedTokenizers,
  type Store,
  type TokenizerChoice,
  tokenizerIn,
} from './tokenizer-choice.js';
import type { TrainerClient } from './trainer-client.js';

const POLICY_DETAIL: Record<ScriptedPolicyName, string> = {
  uninformed: 'format-correct but uninformed (the RL base agent’s supervised data)',
  oracle: 'reads, edits with the operation the source shows, submits: passes every task',
  blind: 'edits with the commonest operation without reading: the blind-guess ceiling',
  malformed: 'makes every kind of invalid call once, then fixes and submits',
};

/**
 * Parse and validate a training config file's text: a JSON object of RLConfig fields plus `steps`
 * and `from` (checked by the core's readTrainConfig, as the trainer checks them). The error names
 * the file and the bad field.
 */
export function parseConfigText(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (!isRecord(value)) throw new Error(`${file}: a training config is a JSON object of RLConfig fields`);
  readTrainConfig(value, file);
  return value;
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** The chapter's GAE lambda and critic warm-up (recipe 12.2). */
export const CHAPTER_LAMBDA = 0.95;
export const CHAPTER_WARMUP_STEPS = 60;

/** The estimators as Train Agent offers them, each with its one-line help. */
export const ESTIMATOR_ITEMS: readonly { label: string; detail: string; estimator: Estimator }[] = [
  {
    label: 'outcome (GRPO)',
    detail: 'the default: every token of an episode gets its group-normalised reward',
    estimator: 'outcome',
  },
  {
    label: 'token-level GAE',
    detail: `section 12.2: a critic's value per token, GAE with gamma 1, lambda ${CHAPTER_LAMBDA}`,
    estimator: 'token',
  },
  {
    label: 'turn-level GAE',
    detail: `section 12.2: one TD error per call (the critic's value at each call), lambda ${CHAPTER_LAMBDA}`,
    estimator: 'turn',
  },
];

/**
 * Ask for the advantage estimator, for outcome GRPO whether to train a critic beside it (the GAE
 * estimators always have one), and with a critic its warm-up steps (the chapter's 60 first). The
 * chapter's lambda; undefined if cancelled.
 */
async function creditForm(): Promise<Credit | undefined> {
  const estimator = (
    await vscode.window.showQuickPick([...ESTIMATOR_ITEMS], {
      title: 'Advantage estimator (section 12.2)',
      ignoreFocusOut: true,
    })
  )?.estimator;
  if (estimator === undefined) return undefined;
  const warm = 'warmed up first on episodes of the starting policy (3 passes over the training tasks)';
  const critic =
    estimator !== 'outcome'
      ? true
      : (
          await vscode.window.showQuickPick(
            [
              {
                label: 'no critic',
                detail: 'the default: the inspector shows the outcome advantage only',
                on: false,
              },
              {
                label: 'train a critic beside the policy',
                detail: `the inspector shows per-call values and TD errors; ${warm}`,
                on: true,
              },
            ],
            { title: 'Critic', ignoreFocusOut: true },
          )
        )?.on;
  if (critic === undefined) return undefined;
  if (!critic) return { estimator, critic, lam: CHAPTER_LAMBDA, warmupSteps: CHAPTER_WARMUP_STEPS };
  const warmupSteps = (
    await vscode.window.showQuickPick(
      [
        {
          label: `${CHAPTER_WARMUP_STEPS} steps`,
          description: 'the default: the chapter (minutes)',
          steps: CHAPTER_WARMUP_STEPS,
        },
        { label: '10 steps', description: 'quicker: a rougher critic at first', steps: 10 },
        {
          label: '2 steps',
          description: 'a smoke check of the views: TD errors of an untrained critic',
          steps: 2,
        },
      ],
      { title: 'Critic warm-up (regression steps before training)', ignoreFocusOut: true },
    )
  )?.steps;
  if (warmupSteps === undefined) return undefined;
  return { estimator, critic, lam: CHAPTER_LAMBDA, warmupSteps };
}

/** Ask for the main knobs of a training run, one after the other; the config, or undefined if cancelled. */
async function trainingForm(): Promise<Record<string, unknown> | undefined> {
  const ask = async (title: string, value: string, check: (v: string) => string | null) =>
    vscode.window.showInputBox({ title, value, ignoreFocusOut: true, validateInput: check });
  const steps = await ask('Training steps', '40', (v) =>
    /^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 100_000
      ? null
      : 'a whole number from 1 to 100000',
  );
  if (steps === undefined) return undefined;
  const seed = await ask('Seed', '0', (v) => (/^\d{1,9}$/.test(v.trim()) ? null : 'a whole number'));
  if (seed === undefined) return undefined;
  const pick = async <T>(title: string, items: (vscode.QuickPickItem & { value: T })[]) =>
    (await vscode.window.showQuickPick(items, { title, ignoreFocusOut: true }))?.value;
  const maxTurns = await pick('Turn budget (max turns)', [
    { label: '6', description: 'the default', value: 6 },
    { label: '3', description: 'section 12.3: reading stops paying', value: 3 },
    { label: '12', value: 12 },
    { label: '24', description: 'long horizons: context overflow', value: 24 },
  ]);
  if (maxTurns === undefined) return undefined;
  const reward = await pick('Reward', [
    { label: 'pass or fail', description: 'the default: 1 for a passing submission', value: {} },
    { label: 'step penalty 0.05', description: 'section 12.2/12.3', value: { stepPenalty: 0.05 } },
    { label: 'step penalty 0.3', description: 'section 12.7: submit at once', value: { stepPenalty: 0.3 } },
    { label: 'wrong submission -1', description: 'section 12.7: never submit', value: { wrongSubmit: -1 } },
    {
      label: 'wrong submission -1, unsubmitted -1',
      description: 'section 12.7, option (a)',
      value: { wrongSubmit: -1, unsubmitted: -1 },
    },
  ]);
  if (reward === undefined) return undefined;
  const lossMode = await pick('Loss mode', [
    { label: 'token_mean', description: 'the default', value: 'token_mean' },
    { label: 'seq_mean_token_mean', description: 'exercise 5', value: 'seq_mean_token_mean' },
  ]);
  if (lossMode === undefined) return undefined;
  const contextPolicy = await pick('Context policy (what each call sees)', [
    { label: 'full history', description: 'the default', value: { kind: 'full' } },
    { label: 'keep_obs=1', description: 'section 12.4', value: { kind: 'keepObs', k: 1 } },
    { label: 'keep_obs=0', value: { kind: 'keepObs', k: 0 } },
    { label: 'summarize reads', description: 'exercise 3', value: { kind: 'summarize' } },
  ]);
  if (contextPolicy === undefined) return undefined;
  const batch = await pick('Batch (episodes per step)', [
    { label: '20 prompts x 8 episodes', description: 'the default: 160 per step, the chapter', value: {} },
    {
      label: '4 prompts x 4 episodes',
      description: '16 per step: quicker, noisier',
      value: { promptsPerStep: 4, groupSize: 4 },
    },
    {
      label: '2 prompts x 2 episodes',
      description: '4 per step: a smoke check of the views, not of learning',
      value: { promptsPerStep: 2, groupSize: 2 },
    },
  ]);
  if (batch === undefined) return undefined;
  const config = {
    steps: Number(steps),
    seed: Number(seed),
    maxTurns,
    reward: { kind: 'hidden', ...reward },
    lossMode,
    contextPolicy,
    ...batch,
  };
  readTrainConfig(config, 'config'); // every value above is one the schemas take
  return config;
}

/** The kinds of job that write a run (their result is a RunResult). */
type RunKind = { [K in JobKind]: JobResults[K] extends RunResult ? K : never }[JobKind];

/** Where sampled episodes come from. */
type SampleSource = { from: 'scripted'; policy: ScriptedPolicyName } | { from: 'base' | 'checkpoint' };

/** Ask what to sample from: a scripted policy, the base agent, or a run's checkpoint. */
async function pickSampleSource(): Promise<SampleSource | undefined> {
  const items: (vscode.QuickPickItem & { source: SampleSource })[] = [
    ...SCRIPTED_POLICIES.map((policy) => ({
      label: `Scripted: ${policy}`,
      detail: POLICY_DETAIL[policy],
      source: { from: 'scripted' as const, policy },
    })),
    {
      label: 'The shipped RL base agent',
      detail: 'sample from the base checkpoint',
      source: { from: 'base' },
    },
    { label: 'A run’s checkpoint…', detail: 'sample from a trained run', source: { from: 'checkpoint' } },
  ];
  return (await vscode.window.showQuickPick(items, { title: 'Sample episodes from', ignoreFocusOut: true }))
    ?.source;
}

/** Ask how many episodes to sample (1 to 100000). */
async function askEpisodes(): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'How many episodes?',
    value: '32',
    ignoreFocusOut: true,
    validateInput: (v) =>
      /^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 100000
        ? null
        : 'a whole number from 1 to 100000',
  });
  return text === undefined ? undefined : Number(text.trim());
}

/**
 * Ask for a seed. A new one each time by default (two samples with one seed are the same
 * episodes); shown, so a sample can be repeated.
 */
async function askSeed(): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'Seed (the same seed samples the same episodes)',
    value: String(Date.now() % 100_000),
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d{1,9}$/.test(v.trim()) ? null : 'a whole number from 0 to 999999999'),
  });
  return text === undefined ? undefined : Number(text.trim());
}

/** Ask for a sampling temperature in (0, 10]. */
async function askTemperature(): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'Sampling temperature',
    value: '1',
    ignoreFocusOut: true,
    validateInput: (v) => {
      const t = Number(v);
      return Number.isFinite(t) && t > 0 && t <= 10 ? null : 'a number in (0, 10]';
    },
  });
  return text === undefined ? undefined : Number(text);
}

/** Run folders that hold a policy checkpoint (final or latest). */
export function runsWithCheckpoints(dirs: readonly string[]): string[] {
  return dirs.filter((d) => runCheckpoint(d) !== null);
}

export class Commands {
  constructor(
    private readonly trainer: TrainerClient,
    private readonly tree: RunTreeProvider,
    private readonly treeView: vscode.TreeView<Node>,
    private readonly inspector: Pick<Inspectors, 'isOpen' | 'show' | 'showDump'> &
      Partial<Pick<Inspectors, 'refreshDump'>>,
    private readonly dashboard: Dashboard,
    private readonly output: vscode.OutputChannel,
    private readonly table: Pick<EpisodeTablePanel, 'show'>,
    /** The tokenizer folder picked for each dump file (by default kept for this window only). */
    private picked: PickedTokenizers = new PickedTokenizers(memoryStore()),
  ) {}

  /** Keep the tokenizer folders picked for dump files in `store` (VS Code's global state: across reloads). */
  rememberPicksIn(store: Store): void {
    this.picked = new PickedTokenizers(store);
  }

  private log(line: string): void {
    this.output.appendLine(`[${new Date().toLocaleTimeString()}] ${line}`);
  }

  /** `<workspace>/.episode-lab/runs`, or undefined without a folder. */
  static runsRoot(): string | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder ? path.join(folder.uri.fsPath, '.episode-lab', 'runs') : undefined;
  }

  private needRunsRoot(): string | undefined {
    const root = Commands.runsRoot();
    if (!root)
      void vscode.window.showErrorMessage(
        'Episode Lab: open a folder first; runs are kept in its .episode-lab/runs.',
      );
    return root;
  }

  /** Run a job that writes a run, with a cancellable progress notification. */
  private async runJob<K extends RunKind>(
    title: string,
    job: JobOf<K>,
    onRunCreated?: (dir: string) => void,
  ): Promise<RunResult | undefined> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Episode Lab: ${title}`, cancellable: true },
      async (progress, token) => {
        let runDir: string | undefined;
        let last = 0;
        try {
          progress.report({ message: 'starting the trainer process…' });
          const running = await this.trainer.start(job, {
            onRunCreated: (dir) => {
              runDir = dir;
              this.tree.setActive(dir, true);
              this.log(`${title}: run folder ${dir}`);
              onRunCreated?.(dir);
              void this.tree.refresh().then(() => this.reveal(dir, false));
            },
            onProgress: (step, total, message) => {
              const pct = (100 * step) / Math.max(total, 1);
              progress.report({ message, increment: pct - last });
              last = pct;
              this.log(`${title}: ${message}`);
              void this.tree.refresh();
            },
            onLog: (text) => this.log(text),
          });
          this.log(`${title}: started (${running.id}) on TF.js backend ${this.trainer.backend}`);
          token.onCancellationRequested(() => {
            this.log(`${title}: cancel requested; completed steps stay on disk`);
            this.trainer.cancel(running.id);
          });
          const result: RunResult = await running.result;
          this.dashboard.schedule(0);
          this.log(
            `${title}: ${result.complete ? 'done' : 'stopped'}: ${result.steps} steps, ${result.episodes} episodes in ${result.runDir}`,
          );
          if (!result.complete) void this.offerResume(title, result);
          return result;
        } catch (e) {
          const msg = (e as Error).message;
          this.log(`${title}: failed: ${msg}`);
          void vscode.window.showErrorMessage(`Episode Lab: ${msg}`);
          return undefined;
        } finally {
          if (runDir) this.tree.setActive(runDir, false);
          await this.tree.refresh();
          this.dashboard.schedule(0);
        }
      },
    );
  }

  /** Say that a job stopped early, with a Resume button when its run can be resumed. */
  private async offerResume(title: string, result: RunResult): Promise<void> {
    const message = `Episode Lab: ${title} stopped cleanly after ${result.steps} step${result.steps === 1 ? '' : 's'}; every completed step is on disk.`;
    if (resumeRefusal(result.runDir) !== null) {
      void vscode.window.showInformationMessage(message);
      return;
    }
    const choice = await vscode.window.showInformationMessage(message, 'Resume');
    if (choice === 'Resume') await this.resumeRun(result.runDir);
  }

  /**
   * Resume a stopped training run (the explorer's run, a run folder, or one picked from the stopped
   * runs): the trainer's resume job, which continues it as `episode-lab train --resume` does. A run
   * that cannot be resumed (finished, a recipe's arm, one with invalid credit options, or one this
   * window is writing) is an error message that says why, and starts nothing.
   */
  async resumeRun(target?: Node | string): Promise<void> {
    const dir =
      typeof target === 'string' ? target : target?.kind === 'run' ? target.dir : await this.pickStopped();
    if (!dir) return;
    const refusal = this.tree.active.has(dir)
      ? `${path.basename(dir)} is being written by a job of this window`
      : resumeRefusal(dir);
    if (refusal) {
      void vscode.window.showErrorMessage(`Episode Lab: ${refusal}`);
      return;
    }
    const name = path.basename(dir);
    this.dashboard.show([dir], true);
    const result = await this.runJob(`Resume ${name}`, { kind: 'resume', runDir: dir });
    if (result?.complete)
      void vscode.window.showInformationMessage(
        `Episode Lab: ${name} resumed and finished: ${result.steps} more step${result.steps === 1 ? '' : 's'}, ${result.episodes} episodes`,
      );
  }

  /** A stopped run that can be resumed, picked by the user (a message when there is none). */
  private async pickStopped(): Promise<string | undefined> {
    await this.tree.refresh();
    const root = Commands.runsRoot();
    const stopped = this.tree
      .runs()
      .filter((r) => runState(r, this.tree.active.has(r.dir)) === 'stopped' && resumeRefusal(r.dir) === null);
    if (stopped.length === 0) {
      void vscode.window.showInformationMessage('Episode Lab: no stopped training run to resume.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      stopped.map((r) => ({
        label: root ? path.relative(root, r.dir) : r.name,
        description: `${r.steps().length} of ${String(r.meta?.config.steps ?? '?')} steps`,
        dir: r.dir,
      })),
      { title: 'Resume which run?' },
    );
    return pick?.dir;
  }

  private async reveal(dir: string, expand: boolean): Promise<void> {
    if (!this.tree.runs().some((r) => r.dir === dir)) return; // a recipe folder: its arms are the runs
    try {
      await this.treeView.reveal(this.tree.runNode(dir), {
        select: true,
        focus: false,
        expand: expand ? 2 : false,
      });
    } catch (e) {
      this.log(`could not reveal ${dir} in the run explorer: ${(e as Error).message}`);
    }
  }

  /** Sample episodes into a new run: from a scripted policy, the base agent or a run's checkpoint. */
  async sampleEpisodes(args?: {
    policy?: ScriptedPolicyName;
    episodes?: number;
    seed?: number;
  }): Promise<void> {
    const runsDir = this.needRunsRoot();
    if (!runsDir) return;
    const source: SampleSource | undefined = args?.policy
      ? { from: 'scripted', policy: args.policy }
      : await pickSampleSource();
    if (!source) return;
    const episodes = args?.episodes ?? (await askEpisodes());
    if (episodes === undefined) return;
    const seed = args?.seed ?? (await askSeed());
    if (seed === undefined) return;
    const result =
      source.from === 'scripted'
        ? await this.runJob(`Sample Episodes (${source.policy})`, {
            kind: 'sampleScripted',
            runsDir,
            policy: source.policy,
            split: 'train',
            episodes,
            batch: Math.max(1, Math.min(64, Math.ceil(episodes / 4))),
            seed,
            maxTurns: 6,
          })
        : await this.sampleModel(runsDir, source.from, episodes, seed);
    if (!result) return;
    await this.reveal(result.runDir, true);
    void vscode.window.showInformationMessage(
      `Episode Lab: sampled ${result.episodes} episodes into ${path.basename(result.runDir)}`,
    );
  }

  /** Sample from the base or a picked run's checkpoint, at a temperature asked for. */
  private async sampleModel(
    runsDir: string,
    from: 'base' | 'checkpoint',
    episodes: number,
    seed: number,
  ): Promise<RunResult | undefined> {
    const temperature = await askTemperature();
    if (temperature === undefined) return undefined;
    const source = from === 'checkpoint' ? await this.pickCheckpoint() : 'base';
    if (!source) return undefined;
    return this.runJob(`Sample Episodes (${source === 'base' ? 'base' : path.basename(source)})`, {
      kind: 'sampleModel',
      runsDir,
      from: source,
      episodes,
      seed,
      temperature,
    });
  }

  /** A run with a checkpoint (from the explorer's runs), or any checkpoint or run folder. */
  private async pickCheckpoint(): Promise<string | undefined> {
    await this.tree.refresh();
    const root = Commands.runsRoot();
    const runs = runsWithCheckpoints(this.tree.runs().map((r) => r.dir));
    const browse = { label: '$(folder-opened) Another folder…', dir: '' };
    const pick = await vscode.window.showQuickPick(
      [
        ...runs.map((dir) => ({
          label: root ? path.relative(root, dir) : path.basename(dir),
          description: `${runCheckpoint(dir)?.which ?? 'latest'} checkpoint`,
          dir,
        })),
        browse,
      ],
      { title: 'Sample from which run’s checkpoint?', ignoreFocusOut: true },
    );
    if (!pick) return undefined;
    if (pick !== browse) return pick.dir;
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      title: 'A run folder or a checkpoint folder (with model.json)',
    });
    return picked?.[0]?.fsPath;
  }

  async trainAgent(): Promise<void> {
    const runsDir = this.needRunsRoot();
    if (!runsDir) return;
    const how = await vscode.window.showQuickPick(
      [
        {
          label: 'Train with the default config…',
          detail:
            'choose steps, seed, turn budget, reward, loss mode, context policy, batch, advantage estimator and critic',
          id: 'form',
        },
        { label: 'Run a recipe…', detail: 'one of the chapter’s experiments', id: 'recipe' },
        { label: 'Train with a JSON config file…', detail: 'an RLConfig (see the README)', id: 'config' },
      ],
      { title: 'Train an agent' },
    );
    if (!how) return;
    if (how.id === 'recipe') return this.runRecipe();
    if (how.id === 'form') {
      const config = await trainingForm();
      if (!config) return;
      const credit = await creditForm();
      if (!credit) return;
      await this.runJob('Train Agent', { kind: 'train', runsDir, config, credit }, (dir) =>
        this.dashboard.show([dir], true),
      );
      return;
    }
    const files = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      filters: { 'RL config': ['json'] },
      title: 'A training config (RLConfig as JSON)',
    });
    if (!files?.[0]) return;
    let config: Record<string, unknown>;
    try {
      const bytes = await vscode.workspace.fs.readFile(files[0]);
      config = parseConfigText(Buffer.from(bytes).toString('utf8'), path.basename(files[0].fsPath));
    } catch (e) {
      void vscode.window.showErrorMessage(`Episode Lab: ${(e as Error).message}`);
      return;
    }
    await this.runJob('Train Agent', { kind: 'train', runsDir, config }, (dir) =>
      this.dashboard.show([dir], true),
    );
  }

  async runRecipe(): Promise<void> {
    const runsDir = this.needRunsRoot();
    if (!runsDir) return;
    try {
      await this.trainer.ensureStarted();
    } catch (e) {
      void vscode.window.showErrorMessage(
        `Episode Lab: the trainer process did not start: ${(e as Error).message}`,
      );
      return;
    }
    if (this.trainer.recipes.length === 0) {
      void vscode.window.showErrorMessage('Episode Lab: this build has no recipes.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      this.trainer.recipes.map((r) => ({
        label: r.name,
        description: `section ${r.section}${r.trains ? ' · trains' : ''}`,
        detail: r.title,
        recipe: r,
      })),
      { title: 'Run a recipe of chapter 12', matchOnDetail: true },
    );
    if (!pick) return;
    let smoke = false;
    if (pick.recipe.trains) {
      const how = await vscode.window.showQuickPick(
        [
          {
            label: 'Full',
            detail: 'the chapter’s protocol: 40 training steps per arm, 160 episodes each (minutes per arm)',
            smoke: false,
          },
          {
            label: 'Smoke',
            detail:
              'a quick check of the code paths, not of learning: 2 training steps per arm of 16 episodes (4 tasks x 4); shorter warm-ups; 2 held-out episodes per task',
            smoke: true,
          },
        ],
        { title: `Recipe ${pick.label}` },
      );
      if (!how) return;
      smoke = how.smoke;
    }
    const result = await this.runJob(
      `Recipe ${pick.label}${smoke ? ' (smoke)' : ''}`,
      { kind: 'recipe', runsDir, recipe: pick.label, seed: 0, smoke },
      (dir) => {
        if (pick.recipe.trains) this.dashboard.show([dir], true);
      },
    );
    if (result) {
      this.dashboard.show([result.runDir], true);
      void vscode.window.showInformationMessage(
        `Episode Lab: recipe ${pick.label} ${result.complete ? 'done' : 'stopped'}: ${path.basename(result.runDir)}`,
      );
    }
  }

  /** Open the training dashboard on runs picked from the explorer (or the given folders). */
  async showDashboard(dirs?: string[]): Promise<void> {
    if (dirs?.length) {
      this.dashboard.show(dirs);
      return;
    }
    await this.tree.refresh();
    const root = Commands.runsRoot();
    const runs = this.tree.runs().filter((r) => r.history.size > 0);
    if (runs.length === 0) {
      void vscode.window.showInformationMessage('Episode Lab: no run has training steps yet.');
      return;
    }
    // Recipe folders (several arms, maybe several seeds) and single runs.
    const recipeDirs = new Set<string>();
    if (root)
      for (const r of runs) {
        const top = path.relative(root, r.dir).split(path.sep)[0];
        if (top !== path.relative(root, r.dir)) recipeDirs.add(path.join(root, top));
      }
    const items = [
      ...[...recipeDirs].map((dir) => ({
        label: `$(beaker) ${path.basename(dir)}`,
        description: 'recipe: every arm and seed',
        dir,
        picked: false,
      })),
      ...runs.map((r, i) => ({
        label: root ? path.relative(root, r.dir) : r.name,
        description: `${r.meta?.kind ?? '?'} · ${r.history.size} steps`,
        dir: r.dir,
        picked: i === 0,
      })),
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: 'Training curves of which runs?',
      canPickMany: true,
    });
    if (!pick?.length) return;
    this.dashboard.show(pick.map((p) => p.dir));
  }

  async openRun(): Promise<void> {
    await this.tree.refresh();
    const runs = this.tree.runs();
    const browse = { label: '$(folder-opened) Another folder…', dir: '' };
    const pick = await vscode.window.showQuickPick(
      [
        ...runs.map((r) => ({
          label: r.name,
          description: `${r.meta?.kind ?? '?'} · ${r.episodes.length} episodes`,
          dir: r.dir,
        })),
        browse,
      ],
      { title: 'Open a run' },
    );
    if (!pick) return;
    let dir = pick.dir;
    if (pick === browse) {
      const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false });
      if (!picked?.[0]) return;
      dir = picked[0].fsPath;
      const ix = this.tree.index(dir);
      await ix.update();
      if (!ix.meta) {
        void vscode.window.showErrorMessage(`Episode Lab: ${ix.warnings.at(-1) ?? `${dir} is not a run`}`);
        return;
      }
      const first = ix.episodes[0];
      if (first) await this.openEpisodeEntry(dir, first);
      return;
    }
    const ix = this.tree.index(dir);
    this.log(
      `run ${ix.name}: ${ix.steps().length} steps, ${ix.episodes.length} episodes, ${ix.meta?.backend ?? ''}`,
    );
    for (const w of ix.warnings) this.log(`run ${ix.name}: ${w}`);
    await this.reveal(dir, true);
  }

  async openInspector(): Promise<void> {
    if (this.inspector.isOpen) {
      this.inspector.show(null, '');
      return;
    }
    await this.tree.refresh();
    const run = this.tree.runs().find((r) => r.episodes.length > 0);
    if (run) await this.openEpisodeEntry(run.dir, run.episodes[0]);
    else this.inspector.show(null, '');
  }

  async openEpisode(n?: Node): Promise<void> {
    if (n?.kind !== 'episode') return;
    await this.openEpisodeEntry(n.dir, n.entry);
  }

  /** Open the episode `index` of `step` of a run (from the episode table). */
  async openRunEpisode(dir: string, step: number, index: number): Promise<void> {
    const ix = this.tree.index(dir);
    await ix.update();
    const entry = (ix.byStep.get(step) ?? []).find((e) => e.index === index);
    if (!entry) {
      void vscode.window.showErrorMessage(
        `Episode Lab: ${path.basename(dir)} has no episode ${index} in step ${step}`,
      );
      return;
    }
    await this.openEpisodeEntry(dir, entry);
  }

  /** Open a run's episodes or an opened dump file's records in the episode table. */
  async browseEpisodes(n?: Node): Promise<void> {
    if (n?.kind === 'run') return this.table.show({ kind: 'run', id: n.dir });
    if (n?.kind === 'dumpFile') return this.table.show({ kind: 'file', id: n.file });
    await this.tree.refresh();
    const root = Commands.runsRoot();
    const items = [
      ...this.tree.dumps
        .list()
        .filter((r) => r.summary)
        .map((r) => ({
          label: `$(file-code) ${path.basename(r.ref.file)}`,
          description: r.ref.file,
          source: { kind: 'file' as const, id: r.ref.file },
        })),
      ...this.tree.runs().map((r) => ({
        label: root ? path.relative(root, r.dir) : r.name,
        description: `${r.episodes.length} episodes`,
        source: { kind: 'run' as const, id: r.dir },
      })),
    ];
    if (!items.length) {
      void vscode.window.showInformationMessage(
        'Episode Lab: no runs or dump files yet: sample, train, or open a dump file.',
      );
      return;
    }
    const pick = await vscode.window.showQuickPick(items, { title: 'Browse the episodes of…' });
    if (pick) this.table.show(pick.source);
  }

  private async openEpisodeEntry(dir: string, entry: EpisodeEntry): Promise<void> {
    try {
      const ix = this.tree.index(dir);
      const ep = await ix.readEpisode(entry);
      const outcome = outcomeFromStep(ix.byStep.get(entry.step) ?? [], ep);
      this.inspector.show(
        ep,
        `${path.basename(dir)} · step ${entry.step} · episode ${entry.index}`,
        dir,
        outcome,
      );
    } catch (e) {
      void vscode.window.showErrorMessage(`Episode Lab: cannot open that episode: ${(e as Error).message}`);
    }
  }

  /**
   * Open a real trainer's dump file: lint and index it in the trainer process (progress,
   * cancel), list it in the run explorer, and show its first record with findings (else the first).
   * `uri` comes from the explorer's context menu; without it, a file dialog asks.
   */
  async openDumpFile(uri?: vscode.Uri): Promise<void> {
    let file = uri?.fsPath;
    if (!file) {
      const picked = await vscode.window.showOpenDialog({
        title: 'Open a dump file (NeMo-RL, prime-rl, Episode Lab, token-level JSONL, SkyRL, slime)',
        canSelectMany: false,
        filters: { 'Dump files': ['jsonl', 'pkl', 'pt'], 'All files': ['*'] },
      });
      file = picked?.[0]?.fsPath;
    }
    if (file) await this.loadDump(file, false);
  }

  /** The tokenizer folder to read `file` with, by tokenizer-choice.ts's precedence. */
  tokenizerFor(file: string): TokenizerChoice {
    const setting = vscode.workspace.getConfiguration('episodeLab').get<string>('tokenizer') ?? '';
    return chooseTokenizer(file, { picked: this.picked.get(file), setting });
  }

  /**
   * Read a dump file (again) with the tokenizer chosen for it: index it, then lint it whole with
   * progress. A first open shows its first record, then its first record with findings; a `refresh`
   * (another tokenizer) redraws the inspectors that show it, at their record.
   */
  private async loadDump(file: string, refresh: boolean): Promise<void> {
    const { dir: tokenizer, origin, ignored } = this.tokenizerFor(file);
    const opened = this.tree.dumps.open({ file, tokenizer, origin });
    this.tree.dumpsChanged();
    const name = path.basename(file);
    this.log(`${name}: tokenizer ${tokenizer ?? 'none found'}${origin ? ` (${origin})` : ''}`);
    if (ignored) {
      this.log(`${name}: ${ignored}`);
      void vscode.window.showWarningMessage(`Episode Lab: ${ignored}`);
    }
    // First index it (fast) and show its first record; then lint it whole, with progress.
    try {
      const quick = await (
        await this.trainer.start({ kind: 'dumpOpen', file, tokenizer, format: 'auto', lint: false })
      ).result;
      opened.summary = quick;
      this.tree.dumpsChanged();
      const first = quick.lengths.findIndex((n) => n > 0);
      if (refresh) void this.inspector.refreshDump?.(opened.ref, quick);
      else if (first >= 0) void this.inspector.showDump(opened.ref, quick, first);
    } catch (e) {
      opened.error = (e as Error).message;
      this.tree.dumpsChanged();
      this.log(`${name}: ${opened.error}`);
      void vscode.window.showErrorMessage(`Episode Lab: ${opened.error}`);
      return;
    }
    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Episode Lab: linting ${name}`,
        cancellable: true,
      },
      (progress, token) => this.lintDump(opened, refresh, progress, token),
    );
  }

  /** Lint an opened dump file whole in the trainer process, then show it (see loadDump). */
  private async lintDump(
    opened: OpenedDump,
    refresh: boolean,
    progress: vscode.Progress<{ message?: string; increment?: number }>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const { file, tokenizer } = opened.ref;
    const name = path.basename(file);
    let last = 0;
    try {
      const running = await this.trainer.start(
        { kind: 'dumpOpen', file, tokenizer, format: 'auto', lint: true },
        {
          onProgress: (step, total, message) => {
            const pct = (100 * step) / Math.max(total, 1);
            progress.report({ message, increment: pct - last });
            last = pct;
          },
          onLog: (text) => this.log(text),
        },
      );
      token.onCancellationRequested(() => this.trainer.cancel(running.id));
      const summary = await running.result;
      opened.summary = summary;
      opened.linted = true;
      const total = summary.rules.reduce((a, r) => a + r.findings, 0);
      this.log(
        `${name}: ${summary.format}, ${summary.records} records, ${total} findings${summary.cancelled ? ' (cancelled: the part read so far)' : ''}; tokenizer ${summary.tokenizer ?? 'none'}`,
      );
      for (const note of summary.notes) this.log(`${name}: ${note}`);
      this.tree.dumpsChanged();
      if (refresh && this.inspector.refreshDump) {
        await this.inspector.refreshDump(opened.ref, summary);
        return;
      }
      // Show the first record with findings (the inspector shows the file's findings now).
      const first = summary.findingsPerRecord.findIndex((n) => n > 0);
      const record = first >= 0 ? first : summary.lengths.findIndex((n) => n > 0);
      if (record >= 0) await this.inspector.showDump(opened.ref, summary, record);
    } catch (e) {
      const message = (e as Error).message;
      opened.error = message;
      this.tree.dumpsChanged();
      this.log(`${name}: ${message}`);
      void vscode.window.showErrorMessage(`Episode Lab: ${message}`);
    }
  }

  /**
   * The inspector's "pick a tokenizer folder" for `file`: a folder dialog; a folder holding a
   * tokenizer (itself or its `tokenizer/`) is remembered for the file, which is read again with it.
   * A folder without one is refused with what it lacks.
   */
  async pickTokenizer(file: string): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      title: `The tokenizer folder for ${path.basename(file)} (tokenizer.json and tokenizer_config.json)`,
      openLabel: 'Read with this tokenizer',
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
    });
    const chosen = picked?.[0]?.fsPath;
    if (!chosen) return;
    const dir = tokenizerIn(chosen);
    if (!dir) {
      void vscode.window.showErrorMessage(
        `Episode Lab: ${chosen} holds no tokenizer.json and tokenizer_config.json (nor does its tokenizer/ folder)`,
      );
      return;
    }
    await this.picked.set(file, dir);
    await this.loadDump(file, true);
  }

  /**
   * The `episodeLab.tokenizer` setting changed: read again each opened file whose tokenizer it
   * changes (one that brings its own keeps it), and redraw the inspectors that show it.
   */
  async tokenizerSettingChanged(): Promise<void> {
    for (const d of this.tree.dumps.list()) {
      const now = this.tokenizerFor(d.ref.file);
      if (now.dir !== d.ref.tokenizer || now.origin !== (d.ref.origin ?? null))
        await this.loadDump(d.ref.file, true);
    }
  }

  /** Close an opened dump file (the explorer's node, or one picked): it leaves the run explorer. */
  async closeDumpFile(n?: Node): Promise<void> {
    let file = n?.kind === 'dumpFile' ? n.file : undefined;
    if (!file) {
      const open = this.tree.dumps.list();
      if (open.length === 0) {
        void vscode.window.showInformationMessage('Episode Lab: no dump file is open.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        open.map((d) => ({
          label: path.basename(d.ref.file),
          description: d.error ? 'could not be read' : d.ref.file,
          file: d.ref.file,
        })),
        { title: 'Close which dump file?' },
      );
      file = pick?.file;
    }
    if (file && this.tree.dumps.close(file)) this.tree.dumpsChanged();
  }

  /** Open one record of an opened dump file (from the run explorer). */
  async openRecord(n?: Node): Promise<void> {
    if (n?.kind !== 'dumpRecord') return;
    const opened = this.tree.dumps.get(n.file);
    if (!opened?.summary) return;
    await this.inspector.showDump(opened.ref, opened.summary, n.record);
  }

  async cancelRun(): Promise<void> {
    const running = this.trainer.cancellable();
    if (running.length === 0) {
      void vscode.window.showInformationMessage('Episode Lab: no run is in progress.');
      return;
    }
    let targets = running;
    if (running.length > 1) {
      const pick = await vscode.window.showQuickPick(
        running.map((r) => ({ label: r.id, description: r.job.kind, r })),
        { title: 'Cancel which run?', canPickMany: true },
      );
      if (!pick?.length) return;
      targets = pick.map((p) => p.r);
    }
    for (const r of targets) {
      this.log(`cancelling ${r.id} (${r.job.kind}): it stops at the end of its current step`);
      this.trainer.cancel(r.id);
    }
    void vscode.window.showInformationMessage(
      'Episode Lab: stopping at the end of the current step (completed steps stay on disk)…',
    );
  }
}
