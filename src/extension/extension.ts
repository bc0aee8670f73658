/**
 * The VS Code extension: a thin layer over the core library. `activate` only registers things:
 * the commands, the run explorer, the inspector's serializer and the trainer process bridge.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { Commands } from './commands.js';
import { DASHBOARD_VIEW_TYPE, Dashboard } from './dashboard.js';
import { INSPECTOR_VIEW_TYPE } from './inspector.js';
import { Inspectors } from './inspectors.js';
import { RunTreeProvider } from './run-tree.js';
import { EpisodeTablePanel, TABLE_VIEW_TYPE } from './table-panel.js';
import { TrainerClient } from './trainer-client.js';
import { isInside } from './workspace-folders.js';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Episode Lab');
  const log = (line: string) => output.appendLine(`[${new Date().toLocaleTimeString()}] ${line}`);
  const trainer = new TrainerClient(
    vscode.Uri.joinPath(context.extensionUri, 'dist', 'trainer.js').fsPath,
    log,
  );
  const tree = new RunTreeProvider(() => Commands.runsRoot());
  const treeView = vscode.window.createTreeView('episodeLab.runs', {
    treeDataProvider: tree,
    showCollapseAll: true,
  });
  const dashboard = new Dashboard(context.extensionUri, tree, log);
  const inspector = new Inspectors(
    context.extensionUri,
    trainer,
    log,
    {
      runsRoot: () => Commands.runsRoot(),
      openDashboard: (roots) => void commands.showDashboard(roots),
      runChanged: (dir, active) => {
        tree.setActive(dir, active);
        void tree.refresh();
      },
      walk: (direction) => table.walk(direction),
      browse: (dir, query) => table.show({ kind: 'run', id: dir }, query),
    },
    (message) => void vscode.window.showInformationMessage(`Episode Lab: ${message}`),
  );
  const table = new EpisodeTablePanel(context.extensionUri, trainer, log, {
    open: async (source, key) => {
      if (source.kind === 'run') {
        const [step, index] = key.split(':').map(Number);
        await commands.openRunEpisode(source.id, step, index);
      } else {
        const opened = tree.dumps.get(source.id);
        if (opened?.summary) await inspector.showDump(opened.ref, opened.summary, Number(key));
      }
    },
    dumpSummary: (file) => tree.dumps.get(file)?.summary ?? null,
    allowedRun: (dir) => {
      const root = Commands.runsRoot();
      return isInside(root, dir) && path.resolve(dir) !== path.resolve(root ?? '');
    },
  });
  const commands = new Commands(trainer, tree, treeView, inspector, dashboard, output, table);

  // The run explorer refreshes on file changes (runs written by the CLI too) and on each step.
  const watcher = vscode.workspace.createFileSystemWatcher('**/.episode-lab/runs/**');
  const refresh = () => void tree.refresh();
  void tree.refresh();

  const register = (id: string, f: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, f);
  context.subscriptions.push(
    output,
    tree,
    treeView,
    inspector,
    dashboard,
    table,
    tree.onDidChangeTreeData(() => dashboard.schedule()),
    watcher,
    watcher.onDidCreate(refresh),
    watcher.onDidChange(refresh),
    watcher.onDidDelete(refresh),
    { dispose: () => trainer.dispose() },
    register('episodeLab.trainAgent', () => commands.trainAgent()),
    register('episodeLab.runRecipe', () => commands.runRecipe()),
    register('episodeLab.sampleEpisodes', (args?: Parameters<Commands['sampleEpisodes']>[0]) =>
      commands.sampleEpisodes(args),
    ),
    register('episodeLab.openRun', () => commands.openRun()),
    register('episodeLab.openInspector', () => commands.openInspector()),
    register('episodeLab.cancelRun', () => commands.cancelRun()),
    register('episodeLab.openEpisode', (n?: Parameters<Commands['openEpisode']>[0]) =>
      commands.openEpisode(n),
    ),
    register('episodeLab.refreshRuns', refresh),
    register('episodeLab.browseEpisodes', (n?: Parameters<Commands['browseEpisodes']>[0]) =>
      commands.browseEpisodes(n),
    ),
    register('episodeLab.openDumpFile', (uri?: vscode.Uri) => commands.openDumpFile(uri)),
    register('episodeLab.openInEpisodeLab', (uri?: vscode.Uri) => commands.openDumpFile(uri)),
    register('episodeLab.openRecord', (n?: Parameters<Commands['openRecord']>[0]) => commands.openRecord(n)),
    register('episodeLab.showDashboard', (n?: { dir?: string }) =>
      commands.showDashboard(n?.dir ? [n.dir] : undefined),
    ),
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
      async deserializeWebviewPanel(panel, state) {
        dashboard.revive(panel, state);
      },
    }),
    vscode.window.registerWebviewPanelSerializer(TABLE_VIEW_TYPE, {
      async deserializeWebviewPanel(panel, state) {
        table.revive(panel, state);
      },
    }),
    vscode.window.registerWebviewPanelSerializer(INSPECTOR_VIEW_TYPE, {
      async deserializeWebviewPanel(panel, state) {
        inspector.revive(panel, state);
      },
    }),
  );
  // The Cancel Run button shows only while a job that a cancel stops is in flight.
  trainer.onRunningChanged(() => {
    void vscode.commands.executeCommand('setContext', 'episodeLab.running', trainer.cancellable().length > 0);
  });
  log('Episode Lab activated');
}

export function deactivate(): void {}
