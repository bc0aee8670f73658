/**
 * What the webview panels (the inspector, the dashboard, the episode table) share: their HTML (the
 * one bundle with a nonce, the view's styles, a strict CSP), their options, and the wiring of their
 * messages, every one checked by the protocol's parser before the panel's handler sees it.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Result } from '../core/schema.js';

export type WebviewView = 'inspector' | 'dashboard' | 'table' | 'run';

const EMPTY_STYLE_HASH = 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

/** A CSP nonce: 128 bits from the OS's cryptographic generator. */
function nonce(): string {
  return randomBytes(16).toString('hex');
}

/** A webview's HTML: the shared bundle with a nonce, the view's styles, a strict CSP. */
function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  view: WebviewView,
  title: string,
): string {
  const n = nonce();
  const extra: Partial<Record<WebviewView, string[]>> = {
    dashboard: ['dashboard.css'],
    run: ['dashboard.css', 'run.css'],
  };
  const css = ['inspector.css', ...(extra[view] ?? [])].map((f) =>
    webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', f)),
  );
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
${css.map((c) => `<link rel="stylesheet" href="${c}">`).join('\n')}
<title>${title}</title>
</head>
<body>
<main id="app" data-view="${view}" aria-live="polite"><p class="empty">Loading…</p></main>
<script nonce="${n}" src="${js}"></script>
</body>
</html>`;
}

/** The options of both panels: scripts on, kept alive when hidden, resources from media/ and dist/ only. */
function panelOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'media'),
      vscode.Uri.joinPath(extensionUri, 'dist'),
    ],
  };
}

/** A view's panel: its VS Code view type, its page, the page's title, the parser of its page's messages. */
export interface PanelKind<M> {
  viewType: string;
  view: WebviewView;
  title: string;
  /** The protocol's parser: a message it rejects is logged and dropped, never handled. */
  parse(raw: unknown): Result<M>;
}

/**
 * The panel of a view (the dashboard's, the episode table's, an inspector's), taking messages `M`
 * from its page and posting it `Out`: opening it again brings it forward, attaching a new panel
 * disposes the old one, a disposed panel is forgotten (and `onClosed` told), and `ready` says
 * whether its page has said so.
 */
export class PanelSlot<M, Out> {
  panel: vscode.WebviewPanel | null = null;
  ready = false;

  constructor(
    private readonly kind: PanelKind<M>,
    private readonly extensionUri: vscode.Uri,
    private readonly log: (line: string) => void,
    private readonly onMessage: (m: M) => void | Promise<void>,
    private readonly onClosed: () => void = () => {},
  ) {}

  get isOpen(): boolean {
    return this.panel !== null;
  }

  /**
   * Open the panel, focused, in `column` with `title` (true), or bring the open one forward, keeping
   * the focus where it is if `preserveFocus` (false).
   */
  open(preserveFocus: boolean, column = vscode.ViewColumn.Active, title = this.kind.title): boolean {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return false;
    }
    this.attach(
      vscode.window.createWebviewPanel(
        this.kind.viewType,
        title,
        { viewColumn: column, preserveFocus: false },
        panelOptions(this.extensionUri),
      ),
    );
    return true;
  }

  /** Take the panel VS Code restores after a window reload (WebviewPanelSerializer). */
  revive(panel: vscode.WebviewPanel): void {
    panel.webview.options = panelOptions(this.extensionUri);
    this.attach(panel);
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.panel = panel;
    this.ready = false;
    const { view, title, parse } = this.kind;
    panel.webview.html = webviewHtml(panel.webview, this.extensionUri, view, title);
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      const parsed = parse(raw);
      if (!parsed.ok) {
        this.log(`${view}: dropped a malformed message from the webview: ${parsed.error}`);
        return;
      }
      void this.onMessage(parsed.value);
    });
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = null;
        this.ready = false;
        this.onClosed();
      }
    });
  }

  post(m: Out): void {
    void this.panel?.webview.postMessage(m);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
