/**
 * The VS Code extension: a thin layer over the core library. `activate` only registers things.
 */
import * as vscode from 'vscode';
import {
  buildTokenizer,
  makeEnv,
  makeTasks,
  oracle,
  Rng,
  randomizeNames,
  runScripted,
} from '../core/index.js';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Episode Lab');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('episodeLab.showGymEpisode', () => {
      const tasks = makeTasks('train');
      const tok = buildTokenizer(makeTasks('all'));
      const rng = new Rng(1);
      const traj = runScripted(oracle, makeEnv(), randomizeNames(tasks[0], rng), tok, rng);
      output.appendLine(tok.decode(traj.ids));
      output.appendLine(JSON.stringify(traj.info));
      output.show(true);
    }),
  );
}

export function deactivate(): void {}
