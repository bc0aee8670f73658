/**
 * The inspector panel (one at a time): shows one episode's token strip and runs the mask check
 * in the trainer process when the webview asks. HTML comes from files under media/ and dist/
 * with a strict CSP and a nonce; every message from the webview is checked before use; a
 * serializer restores an open inspector after a window reload from the webview's saved state.
 */
import * as vscode from 'vscode';
import type { TrajectoryJSON } from '../core/gym/trajectory-json.js';
import {
  type FromWebview,
  parseFromWebview,
  parseInspectorState,
  type ToWebview,
} from '../core/inspector-protocol.js';
import type { TrainerClient } from './trainer-client.js';

export const INSPECTOR_VIEW_TYPE = 'episodeLab.inspector';

const EMPTY_STYLE_HASH = 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

/** A CSP nonce (the one use of Math.random in src/). */
function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

export function inspectorHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const n = nonce();
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'inspector.css'));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    // The toolkit's dropdown writes an empty inline style attribute: allow exactly that (the
    // hash of the empty string), no other inline style.
    `style-src ${webview.cspSource} 'unsafe-hashes' '${EMPTY_STYLE_HASH}'`,
    `script-src 'nonce-${n}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Episode Inspector</title>
</head>
<body>
<main id="app" aria-live="polite"><p class="empty">Loading the inspector…</p></main>
<script nonce="${n}" src="${js}"></script>
</body>
</html>`;
}

export class Inspector implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  private current: { episode: TrajectoryJSON; title: string } | null = null;
  private webviewReady = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly trainer: TrainerClient,
    private readonly log: (line: string) => void,
  ) {}

  get isOpen(): boolean {
    return this.panel !== null;
  }

  private options(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, 'media'),
        vscode.Uri.joinPath(this.extensionUri, 'dist'),
      ],
    };
  }

  /** Show an episode (opening the panel if needed). */
  show(episode: TrajectoryJSON | null, title: string): void {
    if (!this.panel) {
      const panel = vscode.window.createWebviewPanel(
        INSPECTOR_VIEW_TYPE,
        'Episode Inspector',
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        this.options(),
      );
      this.attach(panel);
    } else this.panel.reveal(undefined, false);
    if (episode) {
      this.current = { episode, title };
      this.panel!.title = `Inspector: ${title}`;
      if (this.webviewReady)
        this.post({ type: 'show', episode, title, backend: this.trainer.backend ?? undefined });
    }
  }

  /** Restore a panel after a window reload (WebviewPanelSerializer). */
  revive(panel: vscode.WebviewPanel, state: unknown): void {
    const s = parseInspectorState(state);
    if (state !== undefined && !s) this.log('inspector: the saved state was not usable; opening empty');
    if (s) {
      this.current = { episode: s.episode, title: s.title };
      panel.title = `Inspector: ${s.title}`;
    }
    panel.webview.options = this.options();
    this.attach(panel);
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.panel = panel;
    this.webviewReady = false;
    panel.webview.html = inspectorHtml(panel.webview, this.extensionUri);
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      const parsed = parseFromWebview(raw);
      if (!parsed.ok) {
        this.log(`inspector: dropped a malformed message from the webview: ${parsed.error}`);
        return;
      }
      void this.handle(parsed.value);
    });
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = null;
        this.webviewReady = false;
      }
    });
  }

  private post(m: ToWebview): void {
    void this.panel?.webview.postMessage(m);
  }

  private async handle(m: FromWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.webviewReady = true;
        if (this.current)
          this.post({ type: 'show', ...this.current, backend: this.trainer.backend ?? undefined });
        return;
      case 'maskCheck': {
        if (!this.current) {
          this.post({ type: 'maskError', requestId: m.requestId, message: 'no episode is shown' });
          return;
        }
        try {
          const job = await this.trainer.start({
            kind: 'maskCheck',
            episode: this.current.episode,
            bug: m.bug,
            seed: 0,
          });
          const result = await job.result;
          this.log(`mask check (${m.bug}) on ${this.current.title}: ${result.totalFlags} flags`);
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
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
