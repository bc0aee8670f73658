/**
 * Messages between the extension host and the inspector webview, checked on both sides:
 * a message that does not match its type is dropped and logged, never acted on.
 *
 *   host -> webview   show {episode, title, backend?}
 *                     maskResult {requestId, result}   maskError {requestId, message}
 *   webview -> host   ready   maskCheck {requestId, bug}
 *
 * The webview's saved state (`getState`/`setState`, and what the panel serializer restores after a
 * window reload) is an `InspectorState`.
 */
import { type TrajectoryJSON, validateTrajectoryJSON } from './gym/trajectory-json.js';
import { checkMaskCheckResult, type Parsed } from './protocol.js';
import { isMaskBug, type MaskBug, type MaskCheckResult } from './rl/mask-check.js';

export type ToWebview =
  | { type: 'show'; episode: TrajectoryJSON; title: string; backend?: string }
  | { type: 'maskResult'; requestId: number; result: MaskCheckResult; backend: string }
  | { type: 'maskError'; requestId: number; message: string };

export type FromWebview = { type: 'ready' } | { type: 'maskCheck'; requestId: number; bug: MaskBug };

export interface InspectorState {
  episode: TrajectoryJSON;
  title: string;
  bug: MaskBug;
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isReq = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

function attempt<T>(f: () => T | string): Parsed<T> {
  try {
    const v = f();
    return typeof v === 'string' ? { ok: false, error: v } : { ok: true, value: v };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** Check a message arriving in the webview. */
export function parseToWebview(x: unknown): Parsed<ToWebview> {
  return attempt<ToWebview>(() => {
    if (!isObj(x)) return 'message must be an object';
    switch (x.type) {
      case 'show':
        validateTrajectoryJSON(x.episode);
        if (typeof x.title !== 'string') return 'show.title must be a string';
        if (x.backend !== undefined && typeof x.backend !== 'string') return 'show.backend';
        break;
      case 'maskResult': {
        if (!isReq(x.requestId)) return 'maskResult.requestId';
        if (typeof x.backend !== 'string') return 'maskResult.backend';
        checkMaskCheckResult(x.result);
        break;
      }
      case 'maskError':
        if (!isReq(x.requestId) || typeof x.message !== 'string') return 'maskError fields';
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as ToWebview;
  });
}

/** Check a message arriving in the extension host from the webview. */
export function parseFromWebview(x: unknown): Parsed<FromWebview> {
  return attempt<FromWebview>(() => {
    if (!isObj(x)) return 'message must be an object';
    switch (x.type) {
      case 'ready':
        break;
      case 'maskCheck':
        if (!isReq(x.requestId)) return 'maskCheck.requestId';
        if (!isMaskBug(x.bug)) return `maskCheck.bug ${JSON.stringify(x.bug)} is not a known mask bug`;
        break;
      default:
        return `unknown message type ${JSON.stringify(x.type)}`;
    }
    return x as unknown as FromWebview;
  });
}

/** Check saved webview state (from getState or the serializer); null when unusable. */
export function parseInspectorState(x: unknown): InspectorState | null {
  if (!isObj(x) || typeof x.title !== 'string' || !isMaskBug(x.bug)) return null;
  try {
    validateTrajectoryJSON(x.episode);
  } catch {
    return null;
  }
  return x as unknown as InspectorState;
}
