/**
 * The run view's commands and hooks: open a run folder (palette, explorer context menu, run
 * explorer row), open a step's samples in the episode table, open one sample in the inspector.
 * Data files go through the dump-file path the rest of the extension uses (DumpFiles, dumpOpen).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunStepRef } from '../protocol/runs.js';
import type { Commands } from './commands.js';
import type { OpenedDump } from './dump-files.js';
import type { Inspectors } from './inspectors.js';
import type { RunTreeProvider } from './run-tree.js';
import type { RunViews } from './run-view.js';
import type { EpisodeTablePanel } from './table-panel.js';
import type { TrainerClient } from './trainer-client.js';

export interface RunCommandParts {
  trainer: Pick<TrainerClient, 'start'>;
  tree: RunTreeProvider;
  inspector: Pick<Inspectors, 'showDump'>;
  table: Pick<EpisodeTablePanel, 'show'>;
  commands: Pick<Commands, 'openDumpFile'>;
  runViews: Pick<RunViews, 'open'>;
}

/** The tokenizer folder setting (null: one beside the files, or none). */
export function tokenizerSetting(): string | null {
  const setting = vscode.workspace.getConfiguration('episodeLab').get<string>('tokenizer') ?? '';
  return setting.trim() === '' ? null : setting.trim();
}

/**
 * "Open Run Folder…": the folder given (explorer context menu, run explorer row) or one picked in
 * a folder dialog, opened in its run view and listed in the run explorer's "Run folders".
 */
export async function openRunFolder(parts: RunCommandParts, uri?: vscode.Uri): Promise<void> {
  let dir = uri?.fsPath;
  if (!dir) {
    const picked = await vscode.window.showOpenDialog({
      title: 'Open a run folder (a trainer output folder, or a folder of step files)',
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
    });
    dir = picked?.[0]?.fsPath;
  }
  if (!dir) return;
  parts.runViews.open(dir);
}

/**
 * Open a step's samples in the episode table: its data file (a quick pick of its files when it has
 * several, one per rank) is opened as a dump file (linted once in the trainer process) and its
 * records listed.
 */
export async function openStepSamples(parts: RunCommandParts, dir: string, step: RunStepRef): Promise<void> {
  let file = step.files[0];
  if (step.files.length > 1) {
    const pick = await vscode.window.showQuickPick(
      step.files.map((f) => ({
        label: path.relative(step.path, f) || path.basename(f),
        description: f,
        file: f,
      })),
      { title: `Step ${step.step} of ${path.basename(dir)}: which file's samples?` },
    );
    if (!pick) return;
    file = pick.file;
  }
  if (!parts.tree.dumps.get(file)?.linted) await parts.commands.openDumpFile(vscode.Uri.file(file));
  if (parts.tree.dumps.get(file)?.summary) parts.table.show({ kind: 'file', id: file });
}

/** Open record `record` of a run's data file in the inspector (indexing the file first when it is not open). */
export async function openRunSample(parts: RunCommandParts, file: string, record: number): Promise<void> {
  let opened = parts.tree.dumps.get(file);
  if (!opened?.summary) {
    opened = parts.tree.dumps.open({ file, tokenizer: tokenizerSetting() });
    try {
      const job = await parts.trainer.start({
        kind: 'dumpOpen',
        file,
        tokenizer: opened.ref.tokenizer,
        format: 'auto',
        lint: false,
      });
      opened.summary = await job.result;
    } catch (e) {
      opened.error = (e as Error).message;
      void vscode.window.showErrorMessage(`Episode Lab: ${opened.error}`);
      return;
    } finally {
      parts.tree.dumpsChanged();
    }
  }
  await parts.inspector.showDump(opened.ref, opened.summary, record);
  if (!opened.linted) void lintInBackground(parts, opened);
}

/** Lint an opened dump file whole (its findings in the run explorer), without a notification. */
async function lintInBackground(parts: RunCommandParts, opened: OpenedDump): Promise<void> {
  try {
    const job = await parts.trainer.start({
      kind: 'dumpOpen',
      file: opened.ref.file,
      tokenizer: opened.ref.tokenizer,
      format: 'auto',
      lint: true,
    });
    opened.summary = await job.result;
    opened.linted = true;
  } catch (e) {
    opened.error = (e as Error).message;
  }
  parts.tree.dumpsChanged();
}
