/**
 * The dumps feature's commands: Open Trainer Dump (index, then lint with progress and cancel),
 * the tokenizer picked per file and the setting's changes, Close Dump File and a record from the
 * explorer. The opened files are this feature's (`files`); the run explorer lists them.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Feature, type Host } from '../host.js';
import type { Node } from '../run-tree.js';
import type { OpenedDump } from './dump-files.js';
import {
  chooseTokenizer,
  memoryStore,
  PickedTokenizers,
  type Store,
  type TokenizerChoice,
  tokenizerIn,
} from './tokenizer-choice.js';

/** What the notices about the `episodeLab.tokenizer` setting itself are kept under (no file path is empty). */
const SETTING_NOTICES = '';

export class DumpCommands extends Feature {
  /**
   * The notices already raised, by what they are about: a resolved file (since it was last read
   * cleanly), or SETTING_NOTICES for the tokenizer setting's own (the same for every file).
   */
  private readonly raised = new Map<string, Set<string>>();

  constructor(
    host: Host,
    /** The tokenizer folder picked for each dump file (by default kept for this window only). */
    private picked: PickedTokenizers = new PickedTokenizers(memoryStore()),
  ) {
    super(host);
  }

  /** Keep the tokenizer folders picked for dump files in `store` (VS Code's global state: across reloads). */
  rememberPicksIn(store: Store): void {
    this.picked = new PickedTokenizers(store);
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
        title: 'Open a dump file (NeMo-RL, prime-rl, Episode Lab, token-level JSONL, SkyRL, slime, Harbor)',
        canSelectMany: false,
        filters: { 'Dump files': ['jsonl', 'json', 'pkl', 'pt', 'zst'], 'All files': ['*'] },
      });
      file = picked?.[0]?.fsPath;
    }
    if (file) await this.loadDump(file, false, true);
  }

  /**
   * Raise a notice about `about` (a file, or SETTING_NOTICES) as an error or a warning toast.
   * Unless the user `asked` for the file (opened it, picked its tokenizer), a notice already raised
   * about it is not raised again (the caller logs it): a setting's change that reads every opened
   * file again raises each file's notice once.
   */
  private notify(about: string, kind: 'error' | 'warning', message: string, asked: boolean): void {
    const key = about === SETTING_NOTICES ? about : path.resolve(about);
    const seen = this.raised.get(key) ?? new Set<string>();
    this.raised.set(key, seen);
    if (!asked && seen.has(message)) return;
    seen.add(message);
    const text = `Episode Lab: ${message}`;
    if (kind === 'error') void vscode.window.showErrorMessage(text);
    else void vscode.window.showWarningMessage(text);
  }

  /** The tokenizer folder to read `file` with, by tokenizer-choice.ts's precedence. */
  tokenizerFor(file: string): TokenizerChoice {
    const setting = vscode.workspace.getConfiguration('episodeLab').get<string>('tokenizer') ?? '';
    return chooseTokenizer(file, { picked: this.picked.get(file), setting });
  }

  /**
   * Read a dump file (again) with the tokenizer chosen for it: index it, then lint it whole with
   * progress. A first open shows its first record, then its first record with findings; a `refresh`
   * (another tokenizer) redraws the inspectors that show it, at their record. `asked`: the user
   * asked for this file, so its notices are raised even if they were before (see notify).
   */
  private async loadDump(file: string, refresh: boolean, asked: boolean): Promise<void> {
    const { dir: tokenizer, origin, ignored } = this.tokenizerFor(file);
    const opened = this.tree.dumps.open({ file, tokenizer, origin });
    this.tree.dumpsChanged();
    const name = path.basename(file);
    this.log(`${name}: tokenizer ${tokenizer ?? 'none found'}${origin ? ` (${origin})` : ''}`);
    if (ignored) {
      this.log(`${name}: ${ignored}`);
      this.notify(SETTING_NOTICES, 'warning', ignored, asked);
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
      this.notify(file, 'error', opened.error, asked);
      return;
    }
    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Episode Lab: linting ${name}`,
        cancellable: true,
      },
      (progress, token) => this.lintDump(opened, refresh, asked, progress, token),
    );
  }

  /** Lint an opened dump file whole in the trainer process, then show it (see loadDump). */
  private async lintDump(
    opened: OpenedDump,
    refresh: boolean,
    asked: boolean,
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
      this.raised.delete(path.resolve(file));
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
      this.notify(file, 'error', message, asked);
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
    await this.loadDump(file, true, true);
  }

  /**
   * The `episodeLab.tokenizer` setting changed: read again each opened file whose tokenizer it
   * changes (one that brings its own keeps it), and redraw the inspectors that show it. A file's
   * notice raised before is not raised again (clicking its row in the explorer reads it again and does).
   */
  async tokenizerSettingChanged(): Promise<void> {
    for (const d of this.tree.dumps.list()) {
      const now = this.tokenizerFor(d.ref.file);
      if (now.dir !== d.ref.tokenizer || now.origin !== (d.ref.origin ?? null))
        await this.loadDump(d.ref.file, true, false);
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
      const names = this.tree.dumps.names();
      const pick = await vscode.window.showQuickPick(
        open.map((d) => ({
          label: names.get(d.ref.file) ?? path.basename(d.ref.file),
          description: d.error ? 'could not be read' : d.ref.file,
          file: d.ref.file,
        })),
        { title: 'Close which dump file?', matchOnDescription: true },
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
}
