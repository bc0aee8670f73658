/**
 * The inspector webview's entry point: messages and state. Rendering is in render.ts.
 * Every message from the host is checked (src/core/inspector-protocol.ts); a malformed one is
 * dropped and logged to the webview's console. The view state survives hiding (getState) and a
 * window reload (the host's serializer gets it back).
 */
import {
  type FromWebview,
  type InspectorState,
  parseInspectorState,
  parseToWebview,
} from '../src/core/inspector-protocol.js';
import type { MaskBug } from '../src/core/rl/mask-check.js';
import { renderDetail, renderInspector, type ViewModel } from './render.js';
import { registerToolkit } from './toolkit.js';

interface VsCodeApi {
  postMessage(m: FromWebview): void;
  getState(): unknown;
  setState(s: InspectorState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const app = document.getElementById('app')!;
const saved = parseInspectorState(vscode.getState());
const vm: ViewModel = {
  episode: saved?.episode ?? null,
  title: saved?.title ?? '',
  bug: saved?.bug ?? 'correct',
  mask: null,
  maskPending: false,
  maskError: null,
  backend: null,
};
let requestId = 0;
let focused = 0;

function save(): void {
  if (vm.episode) vscode.setState({ episode: vm.episode, title: vm.title, bug: vm.bug });
}

function requestMaskCheck(): void {
  if (!vm.episode) return;
  vm.maskPending = true;
  vm.maskError = null;
  vscode.postMessage({ type: 'maskCheck', requestId: ++requestId, bug: vm.bug });
}

function onBug(bug: MaskBug): void {
  if (bug === vm.bug) return;
  vm.bug = bug;
  save();
  requestMaskCheck();
  render();
}

function showDetail(i: number): void {
  if (!vm.episode) return;
  focused = i;
  const box = app.querySelector('.detail-box');
  if (box) box.replaceChildren(renderDetail(document, vm.episode, i, vm.mask));
}

function render(): void {
  const keepFocus =
    app.contains(document.activeElement) && document.activeElement?.classList.contains('chip');
  app.replaceChildren(renderInspector(document, vm, { onBug }));
  app.dataset.state = vm.maskPending ? 'pending' : vm.mask ? 'checked' : 'idle';
  if (vm.episode && focused < vm.episode.ids.length) {
    showDetail(focused);
    if (keepFocus) app.querySelector<HTMLElement>(`.chip[data-i="${focused}"]`)?.focus();
  }
}

// Hover or keyboard focus shows a token; arrow keys move along the strip (roving tabindex).
app.addEventListener('mouseover', (e) => {
  const chip = (e.target as HTMLElement).closest?.('.strip .chip') as HTMLElement | null;
  if (chip) showDetail(Number(chip.dataset.i));
});
app.addEventListener('focusin', (e) => {
  const chip = (e.target as HTMLElement).closest?.('.strip .chip') as HTMLElement | null;
  if (chip) showDetail(Number(chip.dataset.i));
});
app.addEventListener('keydown', (e) => {
  const chip = (e.target as HTMLElement).closest?.('.strip .chip') as HTMLElement | null;
  if (!chip || !vm.episode) return;
  const T = vm.episode.ids.length;
  const i = Number(chip.dataset.i);
  const step: Record<string, number> = {
    ArrowRight: 1,
    ArrowDown: 1,
    ArrowLeft: -1,
    ArrowUp: -1,
    Home: -T,
    End: T,
  };
  if (!(e.key in step)) return;
  e.preventDefault();
  const j = Math.min(T - 1, Math.max(0, i + step[e.key]));
  const next = app.querySelector<HTMLElement>(`.strip .chip[data-i="${j}"]`);
  if (next) {
    chip.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
});

window.addEventListener('message', (event: MessageEvent) => {
  const parsed = parseToWebview(event.data);
  if (!parsed.ok) {
    console.warn(`Episode Lab inspector: dropped a malformed message: ${parsed.error}`);
    return;
  }
  const m = parsed.value;
  switch (m.type) {
    case 'show':
      vm.episode = m.episode;
      vm.title = m.title;
      vm.mask = null;
      if (m.backend) vm.backend = m.backend;
      focused = 0;
      save();
      requestMaskCheck();
      break;
    case 'maskResult':
      if (m.requestId !== requestId) return; // a stale answer
      if (m.result.lossMask.length !== (vm.episode?.ids.length ?? 0) - 1) return;
      vm.mask = m.result;
      vm.backend = m.backend;
      vm.maskPending = false;
      break;
    case 'maskError':
      if (m.requestId !== requestId) return;
      vm.maskPending = false;
      vm.maskError = m.message;
      break;
  }
  render();
});

registerToolkit()
  .catch((e) => console.warn(`Episode Lab inspector: the toolkit did not load: ${e}`))
  .finally(() => {
    render();
    if (vm.episode) requestMaskCheck();
    vscode.postMessage({ type: 'ready' });
  });
