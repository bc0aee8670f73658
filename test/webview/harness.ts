/**
 * A webview page under test: its entry point started on a linkedom document with a fake VS Code
 * API (posts recorded, state kept), host messages delivered as the host's `postMessage` would, and
 * events dispatched as a user's would. Warnings the page logs are collected in `warnings`.
 */
import assert from 'node:assert/strict';
import { parseHTML } from 'linkedom';

export type Posted = { type: string } & Record<string, unknown>;

export interface Page {
  app: HTMLElement;
  document: Document;
  /** Everything the page posted to the host, in order. */
  posted: Posted[];
  /** What the page posted since the last call. */
  fresh(): Posted[];
  /** The state the page saved last (or the one it was started with). */
  state(): unknown;
  /** A message from the host. */
  send(m: unknown): void;
  /** A keydown of `key` dispatched on `target`; returns whether the page took it (preventDefault). */
  key(target: Element, key: string): boolean;
  click(selector: string): void;
  /** Set a dropdown or field to `value` and fire its `event` (change unless said). */
  choose(selector: string, value: string, event?: string): void;
  /** An event of `type` dispatched on `target` (it bubbles). */
  fire(target: Element, type: string): void;
}

/** What pages logged with console.warn (cleared by the tests that read it). */
export const warnings: string[] = [];
console.warn = (m: string) => warnings.push(String(m));

/** Wait `ms` milliseconds (timers and animation frames of the page run meanwhile). */
export const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start a fresh page with `start`, `saved` as its webview state; resolves once it posted `ready`. */
export async function openPage(start: (app: HTMLElement) => void, saved?: unknown): Promise<Page> {
  const w = parseHTML('<!doctype html><html><body><div id="app"></div></body></html>');
  const document = w.document as unknown as Document;
  const Event = (w as unknown as { Event: typeof globalThis.Event }).Event;
  const app = document.getElementById('app')!;
  // linkedom has no focus model: the page under test is the focused one.
  (document as unknown as { hasFocus: () => boolean }).hasFocus = () => true;
  const listeners: ((e: { data: unknown }) => void)[] = [];
  const posted: Posted[] = [];
  let seen = 0;
  let state = saved;
  const g = globalThis as unknown as Record<string, unknown>;
  g.document = document;
  g.window = {
    scrollY: 0,
    scrollTo() {},
    addEventListener(type: string, f: (e: { data: unknown }) => void) {
      if (type === 'message') listeners.push(f);
    },
  };
  g.requestAnimationFrame = (f: () => void) => setTimeout(f, 0);
  g.acquireVsCodeApi = () => ({
    postMessage: (m: Posted) => posted.push(structuredClone(m)),
    getState: () => state,
    setState: (s: unknown) => {
      state = structuredClone(s);
    },
  });
  // linkedom lays nothing out: elements get no scrolling and no size (a page of height 0).
  const proto = Object.getPrototypeOf(Object.getPrototypeOf(document.createElement('span')));
  proto.scrollIntoView ??= () => {};
  proto.scrollTop ??= 0;
  proto.clientHeight ??= 0;
  start(app);
  for (let i = 0; i < 400 && !posted.some((m) => m.type === 'ready'); i++) await wait(10);
  assert.ok(
    posted.some((m) => m.type === 'ready'),
    'the page says it is ready',
  );
  const fire = (target: Element, type: string, props: object = {}) => {
    const e = Object.assign(new Event(type, { bubbles: true, cancelable: true }), props);
    target.dispatchEvent(e);
    return e;
  };
  const find = (selector: string) => {
    const el = app.querySelector(selector);
    assert.ok(el, `${selector} is on the page`);
    return el as HTMLElement & { value: string };
  };
  return {
    app,
    document,
    posted,
    fresh: () => {
      const out = posted.slice(seen);
      seen = posted.length;
      return out;
    },
    state: () => state,
    send: (m) => {
      for (const f of listeners) f({ data: structuredClone(m) });
    },
    key: (target, key) => fire(target, 'keydown', { key }).defaultPrevented,
    click: (selector) => {
      fire(find(selector), 'click');
    },
    choose: (selector, value, event = 'change') => {
      const el = find(selector);
      el.value = value;
      fire(el, event);
    },
    fire: (target, type) => {
      fire(target, type);
    },
  };
}
