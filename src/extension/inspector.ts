/**
 * An inspector panel (`Inspectors` keeps one or more): shows one episode's token strip and runs, in the trainer
 * process, what the webview asks for: the mask check, per-call credit, reruns and held-out
 * evaluations under an edited context policy, and retraining with one. HTML comes from files under media/ and dist/
 * with a strict CSP and a nonce; every message from the webview is checked before use; a
 * serializer restores an open inspector after a window reload from the webview's saved state.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ContextPolicy } from '../core/context/policy.js';
import { nextRecordWithFindings } from '../core/dumps/navigate.js';
import type { DumpFileSummary } from '../core/dumps/view.js';
import type { TrajectoryJSON } from '../core/gym/trajectory-json.js';
import type { Job } from '../protocol/trainer.js';
import {
  type AnalysisOp,
  type FromWebview,
  parseFromWebview,
  parseInspectorState,
  policyLabel,
  type SourceInfo,
  type ToWebview,
} from '../protocol/webview.js';
import type { DumpFileRef } from './dump-files.js';
import { type EpisodeSource, episodeSource } from './episode-source.js';
import type { TrainerClient } from './trainer-client.js';
import { attachPanel, panelOptions } from './webview-panel.js';
import { isInside } from './workspace-folders.js';

export const INSPECTOR_VIEW_TYPE = 'episodeLab.inspector';

/** What the inspector needs from the rest of the extension. */
export interface InspectorHooks {
  /** `<workspace>/.episode-lab/runs` (for retrained runs). */
  runsRoot(): string | undefined;
  /** Open the training dashboard on these folders. */
  openDashboard(roots: string[]): void;
  /** A job wrote (or finished) a run folder: refresh the explorer. */
  runChanged(dir: string, active: boolean): void;
  /** Show the next (1) or previous (-1) row of the episode table; false when there is none. */
  walk?(direction: -1 | 1): Promise<boolean>;
  /** Open a run's episode table with a query. */
  browse?(runDir: string, query: string): void;
  /** Open another inspector beside this one, showing what this one shows (to compare). */
  openBeside?(from: Inspector): void;
  /** This inspector's panel became the active one (the one the next episode opens in). */
  onActive?(ins: Inspector): void;
  /** This inspector's panel was closed. */
  onClosed?(ins: Inspector): void;
}

const RETRAIN_UNAVAILABLE = 'this trainer build has no retrain job';

interface Current {
  episode: TrajectoryJSON;
  title: string;
  src: EpisodeSource;
  /** The outcome advantage when the episode JSON has none (a sampled run's step as one group). */
  outcome: number | null;
}

export class Inspector implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  private current: Current | null = null;
  private webviewReady = false;
  /** The episode last posted to the page (cleared when the page (re)loads). */
  private shown: Current | null = null;
  /** The checkpoint of the last retrained run (the second row of the cross table). */
  private retrained: { model: string; label: string } | null = null;
  /** The dump file and record shown (instead of an episode of ours). */
  private dump: { file: DumpFileRef; summary: DumpFileSummary; record: number } | null = null;
  private pendingDump: Extract<ToWebview, { type: 'showDump' }> | null = null;
  /** The analyses running for this inspector (at most one of each): the webview's request, the trainer's job. */
  private readonly inFlight = new Map<AnalysisOp, { requestId: number; job: string | null }>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly trainer: TrainerClient,
    private readonly log: (line: string) => void,
    private readonly hooks: InspectorHooks,
    /** The panel's title prefix ("Inspector", "Inspector 2"). */
    readonly name = 'Inspector',
  ) {}

  get isOpen(): boolean {
    return this.panel !== null;
  }

  private sourceInfo(): SourceInfo | undefined {
    const c = this.current;
    if (!c) return undefined;
    return {
      run: c.src.runDir ? path.basename(c.src.runDir) : null,
      dir: c.src.runDir,
      model: c.src.modelLabel,
      critic: c.src.critic !== null,
      contextPolicy: c.src.contextPolicy,
      // Retraining starts from the base with the run's config, so any run (even a scripted one) can.
      retrainUnavailable: this.trainer.jobs.includes('retrain') ? null : RETRAIN_UNAVAILABLE,
    };
  }

  private postShow(): void {
    // Posted once per episode shown: `show()` and the page's `ready` can both get here once the
    // trainer has started (a slow start lets both wait), and each 'show' makes the page ask for
    // its analyses again, the second of which would be refused as already running.
    if (!this.current || !this.webviewReady || this.shown === this.current) return;
    this.shown = this.current;
    const { episode, title } = this.current;
    this.post({
      type: 'show',
      episode,
      title,
      backend: this.trainer.backend ?? undefined,
      source: this.sourceInfo(),
    });
  }

  /** Open the panel beside the active editor, or bring it forward. */
  private openPanel(): void {
    if (this.panel) {
      this.panel.reveal(undefined, false);
      return;
    }
    this.attach(
      vscode.window.createWebviewPanel(
        INSPECTOR_VIEW_TYPE,
        `Episode ${this.name}`,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
        panelOptions(this.extensionUri),
      ),
    );
  }

  /** Show an episode (opening the panel if needed), with the run it comes from. */
  show(
    episode: TrajectoryJSON | null,
    title: string,
    runDir: string | null = null,
    outcome: number | null = null,
  ): void {
    this.openPanel();
    if (episode) {
      this.dump = null;
      this.pendingDump = null;
      this.current = { episode, title, src: episodeSource(runDir), outcome };
      this.panel!.title = `${this.name}: ${title}`;
      // Learn which jobs the trainer has (retrain) before the webview draws its buttons.
      void this.trainer
        .ensureStarted()
        .catch(() => {})
        .then(() => this.postShow());
    }
  }

  /**
   * Show one record of a dump file (read and linted in the trainer process) beside the active
   * editor; `sample` picks one of a record's samples (prime-rl branches).
   */
  async showDump(file: DumpFileRef, summary: DumpFileSummary, record: number, sample = 0): Promise<void> {
    this.openPanel();
    this.current = null;
    this.dump = { file, summary, record };
    const title = `${path.basename(file.file)}: record ${record + 1}`;
    this.panel!.title = `${this.name}: ${title}`;
    try {
      const job = await this.trainer.start({
        kind: 'dumpSample',
        file: file.file,
        tokenizer: file.tokenizer,
        format: summary.format,
        record,
        offset: summary.offsets[record],
        bytes: summary.lengths[record],
      });
      const { views } = await job.result;
      if (!views.length) throw new Error(`record ${record + 1} holds no sample`);
      const k = Math.min(sample, views.length - 1);
      this.pendingDump = {
        type: 'showDump',
        title,
        summary,
        view: views[k],
        sample: k,
        samples: views.length,
      };
      this.postDump();
    } catch (e) {
      const message = (e as Error).message;
      this.log(`dump ${title}: ${message}`);
      void vscode.window.showErrorMessage(`Episode Lab: ${message}`);
    }
  }

  private postDump(): void {
    if (this.pendingDump && this.webviewReady) this.post(this.pendingDump);
  }

  /** Restore a panel after a window reload (WebviewPanelSerializer). */
  revive(panel: vscode.WebviewPanel, state: unknown): void {
    const s = parseInspectorState(state);
    if (state !== undefined && !s) this.log('inspector: the saved state was not usable; opening empty');
    if (s) {
      // The saved state comes from the webview: reopen only a run inside the workspace's runs.
      const dir = s.source?.dir ?? null;
      const allowed = dir !== null && isInside(this.hooks.runsRoot(), dir);
      if (dir !== null && !allowed)
        this.log(
          `inspector: the saved run folder ${dir} is not in this workspace's runs; showing the episode alone`,
        );
      this.current = {
        episode: s.episode,
        title: s.title,
        src: episodeSource(allowed ? dir : null),
        outcome: null,
      };
      panel.title = `${this.name}: ${s.title}`;
    }
    panel.webview.options = panelOptions(this.extensionUri);
    this.attach(panel);
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.panel = panel;
    this.webviewReady = false;
    attachPanel(panel, {
      extensionUri: this.extensionUri,
      view: 'inspector',
      title: 'Episode Inspector',
      parse: parseFromWebview,
      onMessage: (m) => this.handle(m),
      log: this.log,
      onDispose: () => {
        if (this.panel === panel) {
          this.panel = null;
          this.webviewReady = false;
          this.hooks.onClosed?.(this);
        }
      },
    });
    panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active && this.panel === panel) this.hooks.onActive?.(this);
    });
    this.hooks.onActive?.(this);
  }

  /** Show in another inspector what this one shows (the same episode, or the same dump sample). */
  async showIn(other: Inspector): Promise<void> {
    if (this.dump) {
      const { file, summary, record } = this.dump;
      await other.showDump(file, summary, record, this.pendingDump?.sample ?? 0);
    } else if (this.current) {
      const c = this.current;
      other.show(c.episode, c.title, c.src.runDir, c.outcome);
    } else other.show(null, '');
  }

  private post(m: ToWebview): void {
    void this.panel?.webview.postMessage(m);
  }

  /** Run an analysis job for the webview; errors come back as jobError. */
  private async analysis<K extends Job['kind']>(
    op: AnalysisOp,
    requestId: number,
    job: Extract<Job, { kind: K }>,
    done: (result: Awaited<Awaited<ReturnType<TrainerClient['start']>>['result']>) => void,
  ): Promise<void> {
    // The webview may ask again and again: one of each analysis in flight (a rerun, an evaluation, a
    // retrain), and a second asks to wait rather than queueing work without end.
    if (this.inFlight.has(op)) {
      this.post({
        type: 'jobError',
        requestId,
        op,
        message: `a ${op} is already running for this inspector: wait for it (or cancel it with Episode Lab: Cancel Run)`,
      });
      return;
    }
    const entry: { requestId: number; job: string | null } = { requestId, job: null };
    this.inFlight.set(op, entry);
    try {
      const running = await this.trainer.start(job, {
        onProgress: (_s, _t, message) => {
          this.log(`inspector ${op}: ${message}`);
          this.post({ type: 'jobProgress', requestId, message });
        },
        onLog: (text) => this.log(`inspector ${op}: ${text}`),
        onRunCreated: (dir) => this.hooks.runChanged(dir, true),
      });
      entry.job = running.id;
      done(await running.result);
    } catch (e) {
      const message = (e as Error).message;
      this.log(`inspector ${op} failed: ${message}`);
      this.post({ type: 'jobError', requestId, op, message });
    } finally {
      this.inFlight.delete(op);
    }
  }

  private async handle(m: FromWebview): Promise<void> {
    if (m.type === 'ready') {
      this.webviewReady = true;
      this.shown = null;
      if (this.dump) {
        this.postDump();
        return;
      }
      // After a window reload the trainer is new: learn its job kinds (retrain) before drawing.
      void this.trainer
        .ensureStarted()
        .catch(() => {})
        .then(() => this.postShow());
      return;
    }
    if (m.type === 'walk') {
      const moved = (await this.hooks.walk?.(m.direction)) ?? false;
      if (!moved)
        void vscode.window.showInformationMessage(
          `Episode Lab: no ${m.direction === 1 ? 'next' : 'previous'} row: open an episode from the episode table (Browse Episodes) to walk its filtered list`,
        );
      return;
    }
    if (m.type === 'cancelJob') {
      // Only the request this inspector is running: a stale or foreign id is ignored.
      const running = this.inFlight.get(m.op);
      if (running?.requestId === m.requestId && running.job) {
        this.log(`inspector ${m.op}: cancel asked; it stops at the end of the current step`);
        this.trainer.cancel(running.job);
      }
      return;
    }
    if (m.type === 'openBeside') {
      this.hooks.openBeside?.(this);
      return;
    }
    if (m.type === 'focusTree') {
      void vscode.commands.executeCommand('episodeLab.runs.focus');
      return;
    }
    if (m.type === 'browse') {
      const dir = this.current?.src.runDir;
      if (dir) this.hooks.browse?.(dir, m.query);
      return;
    }
    if (m.type === 'dumpNav') {
      const r = this.dump;
      if (!r) return;
      const next = nextRecordWithFindings(r.summary, r.record, m.direction, m.rule);
      if (next === null) {
        void vscode.window.showInformationMessage(
          `Episode Lab: no ${m.direction === 1 ? 'later' : 'earlier'} sample with ${m.rule ?? 'findings'} in ${path.basename(r.file.file)}`,
        );
        return;
      }
      await this.showDump(r.file, r.summary, next);
      return;
    }
    if (m.type === 'openDashboard') {
      const dir = this.current?.src.runDir;
      this.hooks.openDashboard(dir ? [dir] : []);
      return;
    }
    const c = this.current;
    if (!c) {
      if (m.type === 'maskCheck')
        this.post({ type: 'maskError', requestId: m.requestId, message: 'no episode is shown' });
      else
        this.post({
          type: 'jobError',
          requestId: m.requestId,
          op: m.type === 'evaluate' ? 'evaluate' : m.type,
          message: 'no episode is shown',
        });
      return;
    }
    const needModel = (op: AnalysisOp): string | null => {
      if (c.src.model) return c.src.model;
      this.post({
        type: 'jobError',
        requestId: m.requestId,
        op,
        message:
          'this episode comes from a scripted policy, which has no model: sample from the base or a trained run to rerun or evaluate',
      });
      return null;
    };
    switch (m.type) {
      case 'maskCheck': {
        try {
          const job = await this.trainer.start({
            kind: 'maskCheck',
            episode: c.episode,
            bug: m.bug,
            seed: 0,
            ...(c.src.model ? { model: c.src.model } : {}),
          });
          const result = await job.result;
          this.log(
            `mask check (${m.bug}) on ${c.title} with ${c.src.modelLabel ?? 'seeded random logits'}: ${result.totalFlags} flags`,
          );
          this.post({
            type: 'maskResult',
            requestId: m.requestId,
            result,
            backend: this.trainer.backend ?? '?',
          });
        } catch (e) {
          this.log(`mask check failed: ${(e as Error).message}`);
          this.post({ type: 'maskError', requestId: m.requestId, message: (e as Error).message });
        }
        return;
      }
      case 'credit':
        return this.analysis(
          'credit',
          m.requestId,
          {
            kind: 'creditTable',
            episode: c.episode,
            runDir: c.src.runDir,
            model: c.src.model,
            critic: c.src.critic,
            outcome: c.outcome,
          },
          (result) => this.post({ type: 'creditResult', requestId: m.requestId, result: result as never }),
        );
      case 'rerun': {
        const model = needModel('rerun');
        if (!model) return;
        return this.analysis(
          'rerun',
          m.requestId,
          {
            kind: 'rerun',
            episode: c.episode,
            runDir: c.src.runDir,
            model,
            policy: m.policy,
            n: m.n,
            seed: 1,
          },
          (result) => {
            this.log(`rerun of ${c.title} under ${policyLabel(m.policy)}: done`);
            this.post({ type: 'rerunResult', requestId: m.requestId, result: result as never });
          },
        );
      }
      case 'evaluate': {
        const which = m.model === 'retrained' ? this.retrained : null;
        if (m.model === 'retrained' && !which) {
          this.post({
            type: 'jobError',
            requestId: m.requestId,
            op: 'evaluate',
            message: 'nothing was retrained yet',
          });
          return;
        }
        const model = which?.model ?? needModel('evaluate');
        if (!model) return;
        const label = which?.label ?? `trained: ${policyLabel(c.src.contextPolicy)}`;
        return this.analysis(
          'evaluate',
          m.requestId,
          { kind: 'evalContext', runDir: c.src.runDir, model, policies: m.policies, perTask: 8, seed: 7 },
          (result) =>
            this.post({ type: 'evalResult', requestId: m.requestId, label, result: result as never }),
        );
      }
      case 'retrain': {
        const runsDir = this.hooks.runsRoot();
        if (!runsDir) {
          this.post({
            type: 'jobError',
            requestId: m.requestId,
            op: 'retrain',
            message: 'open a folder first',
          });
          return;
        }
        return this.analysis(
          'retrain',
          m.requestId,
          {
            kind: 'retrain',
            runsDir,
            runDir: c.src.runDir,
            policy: m.policy as ContextPolicy,
            steps: m.steps,
          },
          (result) => {
            const r = result as { runDir: string; steps: number; complete: boolean };
            this.hooks.runChanged(r.runDir, false);
            const label = `trained: ${policyLabel(m.policy)}`;
            // A cancelled retraining is kept on disk (it can be resumed) but is not a model to
            // evaluate as if it had finished.
            if (r.complete) this.retrained = { model: r.runDir, label };
            this.post({
              type: 'retrainDone',
              requestId: m.requestId,
              run: path.basename(r.runDir),
              label,
              steps: r.steps,
              complete: r.complete,
            });
          },
        );
      }
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
