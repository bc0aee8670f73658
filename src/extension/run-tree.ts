/**
 * The run explorer: runs -> steps -> episodes (pass/fail, reward, turns, stop reason). Children
 * are built lazily when a node is expanded; a step with many episodes is split into pages of
 * PAGE episodes so that 10 000 episodes stay fluid. Refreshing reads only what was appended to
 * each run's files (RunIndex).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { findRuns } from './dashboard-data.js';
import { describeEpisode, describeStep, type EpisodeEntry, RunIndex } from './run-index.js';

export const PAGE = 100;

export type Node =
  | { kind: 'run'; id: string; dir: string }
  | { kind: 'step'; id: string; dir: string; step: number }
  | { kind: 'page'; id: string; dir: string; step: number; start: number }
  | { kind: 'episode'; id: string; dir: string; step: number; entry: EpisodeEntry };

export class RunTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly indexes = new Map<string, RunIndex>();
  private readonly nodes = new Map<string, Node>();
  private runDirs: string[] = [];
  /** Runs being written by a job (shown with a spinning icon). */
  readonly active = new Set<string>();
  private refreshing: Promise<void> | null = null;
  private again = false;

  constructor(private readonly runsRoot: () => string | undefined) {}

  dispose(): void {
    this.changed.dispose();
  }

  index(dir: string): RunIndex {
    let ix = this.indexes.get(dir);
    if (!ix) {
      ix = new RunIndex(dir);
      this.indexes.set(dir, ix);
    }
    return ix;
  }

  private node<N extends Node>(n: N): N {
    const old = this.nodes.get(n.id);
    if (old && old.kind === n.kind && n.kind !== 'episode') return old as N;
    this.nodes.set(n.id, n);
    return n;
  }

  runNode(dir: string): Node {
    return this.node({ kind: 'run', id: `run:${dir}`, dir });
  }

  /** Re-list the runs and read what was appended; coalesces calls made while one is running. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.refreshOnce();
      } while (this.again);
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    const root = this.runsRoot();
    let dirs: string[] = [];
    if (root && fs.existsSync(root)) {
      // Runs directly under the root, and the arms of recipe folders (recipe/arm, recipe/seed-N/arm).
      const top = (await fs.promises.readdir(root, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
        .reverse(); // names end in a timestamp: newest first
      dirs = top.flatMap((name) => findRuns(path.join(root, name), 2));
    }
    const listChanged = dirs.join('\n') !== this.runDirs.join('\n');
    this.runDirs = dirs;
    const changedRuns: Node[] = [];
    for (const dir of dirs) if (await this.index(dir).update()) changedRuns.push(this.runNode(dir));
    if (listChanged) this.changed.fire(undefined);
    else for (const n of changedRuns) this.changed.fire(n);
  }

  runs(): RunIndex[] {
    return this.runDirs.map((d) => this.index(d));
  }

  getChildren(n?: Node): Node[] {
    if (!n) return this.runDirs.map((dir) => this.runNode(dir));
    const ix = this.index(n.dir);
    if (n.kind === 'run')
      return ix
        .steps()
        .map((step) => this.node({ kind: 'step', id: `step:${n.dir}:${step}`, dir: n.dir, step }));
    if (n.kind === 'step') {
      const eps = ix.byStep.get(n.step) ?? [];
      if (eps.length <= PAGE) return eps.map((e) => this.episodeNode(n.dir, e));
      const pages: Node[] = [];
      for (let start = 0; start < eps.length; start += PAGE)
        pages.push(
          this.node({
            kind: 'page',
            id: `page:${n.dir}:${n.step}:${start}`,
            dir: n.dir,
            step: n.step,
            start,
          }),
        );
      return pages;
    }
    if (n.kind === 'page') {
      const eps = ix.byStep.get(n.step) ?? [];
      return eps.slice(n.start, n.start + PAGE).map((e) => this.episodeNode(n.dir, e));
    }
    return [];
  }

  private episodeNode(dir: string, entry: EpisodeEntry): Node {
    return this.node({ kind: 'episode', id: `ep:${dir}:${entry.line}`, dir, step: entry.step, entry });
  }

  getParent(n: Node): Node | undefined {
    if (n.kind === 'run') return undefined;
    if (n.kind === 'step' || n.kind === 'page') {
      if (n.kind === 'page') return this.nodes.get(`step:${n.dir}:${n.step}`);
      return this.runNode(n.dir);
    }
    const eps = this.index(n.dir).byStep.get(n.step) ?? [];
    const step = this.nodes.get(`step:${n.dir}:${n.step}`) ?? {
      kind: 'step' as const,
      id: `step:${n.dir}:${n.step}`,
      dir: n.dir,
      step: n.step,
    };
    if (eps.length <= PAGE) return step;
    const k = eps.indexOf(n.entry);
    const start = Math.floor(Math.max(k, 0) / PAGE) * PAGE;
    return this.node({
      kind: 'page',
      id: `page:${n.dir}:${n.step}:${start}`,
      dir: n.dir,
      step: n.step,
      start,
    });
  }

  getTreeItem(n: Node): vscode.TreeItem {
    const ix = this.index(n.dir);
    const C = vscode.TreeItemCollapsibleState;
    switch (n.kind) {
      case 'run': {
        const root = this.runsRoot();
        const label = root ? path.relative(root, n.dir).split(path.sep).join('/') : ix.name;
        const item = new vscode.TreeItem(label, C.Collapsed);
        const m = ix.meta;
        const steps = ix.steps().length;
        item.description = `${m?.kind ?? '?'}${m?.from ? ` · ${m.from}` : ''} · ${steps} step${steps === 1 ? '' : 's'} · ${ix.episodes.length} episodes`;
        item.iconPath = new vscode.ThemeIcon(this.active.has(n.dir) ? 'sync~spin' : 'beaker');
        item.tooltip = `${n.dir}\ncreated ${m?.created ?? '?'}${m?.backend ? `\nbackend ${m.backend}` : ''}${ix.warnings.length ? `\n${ix.warnings.join('\n')}` : ''}`;
        item.contextValue = 'run';
        item.id = n.id;
        return item;
      }
      case 'step': {
        const eps = ix.byStep.get(n.step)?.length ?? 0;
        const item = new vscode.TreeItem(`step ${n.step}`, eps ? C.Collapsed : C.None);
        item.description = describeStep(ix.history.get(n.step), eps);
        item.iconPath = new vscode.ThemeIcon('list-ordered');
        item.id = n.id;
        return item;
      }
      case 'page': {
        const eps = ix.byStep.get(n.step) ?? [];
        const end = Math.min(n.start + PAGE, eps.length) - 1;
        const item = new vscode.TreeItem(`episodes ${n.start}–${end}`, C.Collapsed);
        const passed = eps.slice(n.start, end + 1).filter((e) => e.pass).length;
        item.description = `${passed} passed`;
        item.id = n.id;
        return item;
      }
      case 'episode': {
        const e = n.entry;
        const item = new vscode.TreeItem(`episode ${e.index}`, C.None);
        item.description = describeEpisode(e);
        item.tooltip = `task ${e.taskId} · ${e.tokens} tokens\n${describeEpisode(e)}`;
        item.iconPath = e.pass
          ? new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed'))
          : new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
        item.accessibilityInformation = {
          label: `episode ${e.index}, step ${e.step}, ${describeEpisode(e)}`,
        };
        item.command = { command: 'episodeLab.openEpisode', title: 'Open in the inspector', arguments: [n] };
        item.id = n.id;
        return item;
      }
    }
  }
}
