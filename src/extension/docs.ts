/**
 * The docs the extension ships (README.md and docs/*.md, kept in the .vsix by .vscodeignore), listed
 * for the Open Docs command, which opens the picked page in the Markdown preview.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** A page of the docs: its file and its title (its first `# ` heading, else its file name). */
export interface DocPage {
  file: string;
  title: string;
}

/** README.md then docs/*.md (by name) under `root`; files that are missing are left out. */
export function docPages(root: string): DocPage[] {
  const docs = path.join(root, 'docs');
  const files = [
    path.join(root, 'README.md'),
    ...(fs.existsSync(docs)
      ? fs
          .readdirSync(docs)
          .filter((f) => f.endsWith('.md'))
          .sort()
          .map((f) => path.join(docs, f))
      : []),
  ].filter((f) => fs.existsSync(f));
  return files.map((file) => {
    const heading = /^# (.+)$/m.exec(fs.readFileSync(file, 'utf8').slice(0, 4000));
    return { file, title: heading ? heading[1].trim() : path.basename(file) };
  });
}

/** Ask which page of the docs to read and open it in the Markdown preview (README.md first). */
export async function openDocs(extensionUri: vscode.Uri): Promise<void> {
  const pages = docPages(extensionUri.fsPath);
  if (pages.length === 0) {
    void vscode.window.showErrorMessage('Episode Lab: this build ships no docs.');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    pages.map((p) => ({
      label: p.title,
      description: path.relative(extensionUri.fsPath, p.file),
      file: p.file,
    })),
    { title: 'Episode Lab docs', matchOnDescription: true },
  );
  if (pick) await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(pick.file));
}
