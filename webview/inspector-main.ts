/**
 * The inspector webview: messages and state. Rendering is in render.ts (and context.ts,
 * credit.ts). Every message from the host is checked (src/core/inspector-protocol.ts); a
 * malformed one is dropped and logged to the webview's console. The view state survives hiding
 * (getState) and a window reload (the host's serializer gets it back).
 */
import type { ContextPolicy } from '../src/core/context/policy.js';
import {
  type FromWebview,
  type InspectorState,
  type MaskBug,
  parseInspectorState,
  parseToWebview,
  policyLabel,
} from '../src/protocol/webview.js';
import { mostCalls } from './context.js';
import { type DumpModel, renderDumpDetail, renderDumpPage } from './dump.js';
import { renderInspector } from './page.js';
import { renderDetail } from './strip.js';
import { registerToolkit } from './toolkit.js';
import { currentView, idleJob, type ViewModel } from './view-model.js';

interface VsCodeApi {
  postMessage(m: FromWebview): void;
  getState(): unknown;
  setState(s: InspectorState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** Episodes sampled per rerun of the task (the comparison shows the one with the most calls first). */
const RERUN_EPISODES = 16;
/** A retraining's steps unless the field says otherwise (the chapter's runs are 40 steps). */
const DEFAULT_RETRAIN_STEPS = 40;

export function startInspector(app: HTMLElement): void {
  const vscode = acquireVsCodeApi();
  const saved = parseInspectorState(vscode.getState());
  const vm: ViewModel = {
    episode: saved?.episode ?? null,
    title: saved?.title ?? '',
    bug: saved?.bug ?? 'correct',
    mask: null,
    maskPending: false,
    maskError: null,
    backend: null,
    source: saved?.source ?? null,
    credit: null,
    creditJob: idleJob(),
    heat: true,
    call: saved?.call ?? null,
    policy: saved?.policy,
    rerun: null,
    rerunJob: idleJob(),
    rerunShown: 0,
    evals: [],
    evalJob: idleJob(),
    retrainJob: idleJob(),
    retrainSteps: DEFAULT_RETRAIN_STEPS,
    retrained: null,
    retrainCancelled: null,
    pinned: saved?.pinned ?? null,
  };
  /** A real trainer's dump sample, when one is shown (instead of an episode of ours). */
  let dump: DumpModel | null = null;
  let requestId = 0;
  /** The request each analysis is waiting for (a later request makes an earlier answer stale). */
  const waiting = { mask: -1, credit: -1, rerun: -1, evaluate: -1, retrain: -1 };
  let focused = 0;

  function save(): void {
    if (vm.episode)
      vscode.setState({
        episode: vm.episode,
        title: vm.title,
        bug: vm.bug,
        ...(vm.source ? { source: vm.source } : {}),
        ...(vm.policy ? { policy: vm.policy } : {}),
        call: vm.call ?? null,
        ...(vm.pinned ? { pinned: vm.pinned } : {}),
      });
  }

  function requestMaskCheck(): void {
    if (!vm.episode) return;
    vm.maskPending = true;
    vm.maskError = null;
    waiting.mask = ++requestId;
    vscode.postMessage({ type: 'maskCheck', requestId: waiting.mask, bug: vm.bug });
  }

  function requestCredit(): void {
    if (!vm.episode) return;
    vm.credit = null;
    vm.creditJob = { pending: true, progress: null, error: null };
    waiting.credit = ++requestId;
    vscode.postMessage({ type: 'credit', requestId: waiting.credit });
  }

  const policy = (): ContextPolicy => vm.policy ?? vm.source?.contextPolicy ?? { kind: 'full' };

  const handlers = {
    onBug(bug: MaskBug): void {
      if (bug === vm.bug) return;
      vm.bug = bug;
      save();
      requestMaskCheck();
      render();
    },
    onCall(k: number | null): void {
      vm.call = k;
      save();
      render();
    },
    onPolicy(p: ContextPolicy): void {
      vm.policy = p;
      save();
      render();
    },
    onHeat(on: boolean): void {
      vm.heat = on;
      render();
    },
    onRerun(): void {
      vm.rerunJob = { pending: true, progress: null, error: null };
      vm.rerun = null;
      waiting.rerun = ++requestId;
      vscode.postMessage({ type: 'rerun', requestId: waiting.rerun, policy: policy(), n: RERUN_EPISODES });
      render();
    },
    onEvaluate(model: 'run' | 'retrained'): void {
      const run = vm.source?.contextPolicy ?? { kind: 'full' };
      const edited = policy();
      const policies = policyLabel(run) === policyLabel(edited) ? [run] : [run, edited];
      vm.evalJob = { pending: true, progress: null, error: null };
      waiting.evaluate = ++requestId;
      vscode.postMessage({ type: 'evaluate', requestId: waiting.evaluate, policies, model });
      render();
    },
    onRetrain(): void {
      vm.retrainJob = { pending: true, progress: null, error: null };
      vm.retrainCancelled = null;
      waiting.retrain = ++requestId;
      vscode.postMessage({
        type: 'retrain',
        requestId: waiting.retrain,
        policy: policy(),
        steps: vm.retrainSteps ?? DEFAULT_RETRAIN_STEPS,
      });
      render();
    },
    onRetrainSteps(steps: number): void {
      vm.retrainSteps = steps;
    },
    onCancel(op: 'evaluate' | 'retrain'): void {
      const job = op === 'evaluate' ? 'evalJob' : 'retrainJob';
      if (!vm[job]?.pending) return;
      vscode.postMessage({ type: 'cancelJob', requestId: waiting[op], op });
      vm[job] = { ...vm[job]!, progress: 'cancelling: stops at the end of the current step…' };
      render();
    },
    onRerunShown(i: number): void {
      vm.rerunShown = i;
      render();
    },
    onDashboard(): void {
      vscode.postMessage({ type: 'openDashboard' });
    },
    onWalk(direction: -1 | 1): void {
      vscode.postMessage({ type: 'walk', direction });
    },
    onBrowse(query: string): void {
      vscode.postMessage({ type: 'browse', query });
    },
    onOpenBeside(): void {
      vscode.postMessage({ type: 'openBeside' });
    },
    onPin(pin: boolean): void {
      vm.pinned = pin && vm.episode ? { episode: vm.episode, title: vm.title } : null;
      save();
      render();
    },
  };

  /** Focus token i of the strip and show its detail. */
  function showToken(i: number): void {
    const chip = app.querySelector<HTMLElement>(`.strip-box .strip .chip[data-i="${i}"]`);
    if (!chip) return;
    app.querySelectorAll<HTMLElement>('.strip-box .strip .chip[tabindex="0"]').forEach((c) => {
      c.tabIndex = -1;
    });
    chip.tabIndex = 0;
    chip.focus();
    chip.scrollIntoView({ block: 'center' });
    showDetail(i);
  }

  function showDetail(i: number): void {
    if (dump) {
      focused = i;
      app.querySelector('.detail-box')?.replaceChildren(renderDumpDetail(document, dump.view, i));
      return;
    }
    if (!vm.episode) return;
    focused = i;
    const box = app.querySelector('.detail-box');
    if (box)
      box.replaceChildren(
        renderDetail(document, vm.episode, i, vm.mask, { credit: vm.credit, view: currentView(vm) }),
      );
  }

  function renderDump(r: DumpModel): void {
    const scroll = window.scrollY;
    app.replaceChildren(
      renderDumpPage(
        document,
        r,
        {
          onNavigate: (direction, rule) => vscode.postMessage({ type: 'dumpNav', direction, rule }),
          onWalk: (direction) => vscode.postMessage({ type: 'walk', direction }),
          onPin: (pin) => {
            if (dump) dump.pinned = pin ? { view: dump.view, title: dump.title } : null;
            render();
          },
          onOpenBeside: () => vscode.postMessage({ type: 'openBeside' }),
        },
        showToken,
      ),
    );
    app.dataset.state = 'dump';
    app.dataset.findings = String(r.view.findings.length);
    if (focused < r.view.ids.length) showDetail(focused);
    window.scrollTo(0, scroll);
  }

  function render(): void {
    if (dump) {
      renderDump(dump);
      return;
    }
    const keepFocus =
      app.contains(document.activeElement) && document.activeElement?.classList.contains('chip');
    const scroll = window.scrollY;
    app.replaceChildren(renderInspector(document, vm, handlers));
    app.dataset.state = vm.maskPending ? 'pending' : vm.mask ? 'checked' : 'idle';
    app.dataset.credit = vm.credit ? 'ready' : vm.creditJob?.error ? 'error' : 'pending';
    app.dataset.rerun = vm.rerun
      ? 'ready'
      : vm.rerunJob?.pending
        ? 'pending'
        : vm.rerunJob?.error
          ? 'error'
          : 'idle';
    if (vm.episode && focused < vm.episode.ids.length) {
      showDetail(focused);
      if (keepFocus) app.querySelector<HTMLElement>(`.strip .chip[data-i="${focused}"]`)?.focus();
    }
    window.scrollTo(0, scroll);
  }

  // Hover or keyboard focus shows a token; arrow keys move along the strip (roving tabindex).
  const chipOf = (e: Event) =>
    (e.target as HTMLElement).closest?.('.strip-box .strip .chip') as HTMLElement | null;
  app.addEventListener('mouseover', (e) => {
    const chip = chipOf(e);
    if (chip) showDetail(Number(chip.dataset.i));
  });
  app.addEventListener('focusin', (e) => {
    const chip = chipOf(e);
    if (chip) showDetail(Number(chip.dataset.i));
  });
  // Escape and ] / [ work wherever the focus is in the page (just opened, it is on the body, outside #app).
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !(e.target as HTMLElement).closest?.('input, textarea, vscode-dropdown')) {
      vscode.postMessage({ type: 'focusTree' });
      return;
    }
    if ((e.key === ']' || e.key === '[') && !(e.target as HTMLElement).closest?.('input, textarea')) {
      e.preventDefault();
      vscode.postMessage({ type: 'walk', direction: e.key === ']' ? 1 : -1 });
    }
  });
  app.addEventListener('keydown', (e) => {
    const chip = chipOf(e);
    const T = dump ? dump.view.ids.length : vm.episode?.ids.length;
    if (!chip || T === undefined) return;
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
    const next = app.querySelector<HTMLElement>(`.strip-box .strip .chip[data-i="${j}"]`);
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
    if (m.type === 'showDump') {
      const same = dump?.view.record === m.view.record && dump?.summary.file === m.summary.file;
      dump = {
        title: m.title,
        summary: m.summary,
        view: m.view,
        sample: m.sample,
        samples: m.samples,
        pinned: dump?.pinned ?? null,
      };
      if (!same) focused = 0;
      render();
      return;
    }
    if (m.type === 'show') dump = null;
    switch (m.type) {
      case 'show': {
        const same =
          vm.episode !== null &&
          JSON.stringify(vm.episode.ids) === JSON.stringify(m.episode.ids) &&
          vm.title === m.title;
        // The same episode again while its analyses run: they answer for it, ask nothing twice.
        const maskRunning = same && vm.maskPending;
        const creditRunning = same && vm.creditJob?.pending === true;
        vm.episode = m.episode;
        vm.title = m.title;
        if (!maskRunning) vm.mask = null;
        if (m.backend) vm.backend = m.backend;
        const sourceChanged = JSON.stringify(vm.source ?? null) !== JSON.stringify(m.source ?? null);
        vm.source = m.source ?? null;
        if (!same) {
          focused = 0;
          vm.call = null;
          vm.rerun = null;
          vm.rerunJob = idleJob();
          vm.evals = [];
          vm.evalJob = idleJob();
        }
        if (!same || sourceChanged) vm.policy = vm.source?.contextPolicy;
        save();
        if (!maskRunning) requestMaskCheck();
        if (!creditRunning) requestCredit();
        break;
      }
      case 'maskResult':
        if (m.requestId !== waiting.mask) return; // a stale answer
        if (m.result.lossMask.length !== (vm.episode?.ids.length ?? 0) - 1) return;
        vm.mask = m.result;
        vm.backend = m.backend;
        vm.maskPending = false;
        break;
      case 'maskError':
        if (m.requestId !== waiting.mask) return;
        vm.maskPending = false;
        vm.maskError = m.message;
        break;
      case 'creditResult':
        if (m.requestId !== waiting.credit) return;
        if (m.result.tokenAdvantages.length !== (vm.episode?.ids.length ?? 0) - 1) return;
        vm.credit = m.result;
        vm.creditJob = idleJob();
        break;
      case 'rerunResult':
        if (m.requestId !== waiting.rerun) return;
        vm.rerun = m.result;
        vm.rerunShown = mostCalls(m.result.episodes);
        vm.rerunJob = idleJob();
        break;
      case 'evalResult':
        if (m.requestId !== waiting.evaluate) return;
        for (const row of m.result.rows)
          vm.evals = [
            ...(vm.evals ?? []),
            {
              model: m.label,
              context: policyLabel(row.policy),
              stats: row.stats,
              episodes: m.result.episodes,
            },
          ];
        vm.evalJob = idleJob();
        break;
      case 'retrainDone':
        if (m.requestId !== waiting.retrain) return;
        vm.retrainJob = idleJob();
        if (m.complete) vm.retrained = m.label;
        else
          vm.retrainCancelled = `Retraining cancelled after ${m.steps} step${m.steps === 1 ? '' : 's'}: the run ${m.run} keeps them (resume it with episode-lab train --resume .episode-lab/runs/${m.run}); it is not offered for evaluation.`;
        break;
      case 'jobProgress': {
        const job = [
          [waiting.rerun, 'rerunJob'],
          [waiting.evaluate, 'evalJob'],
          [waiting.retrain, 'retrainJob'],
          [waiting.credit, 'creditJob'],
        ].find(([id]) => id === m.requestId)?.[1] as
          | 'rerunJob'
          | 'evalJob'
          | 'retrainJob'
          | 'creditJob'
          | undefined;
        if (!job || !vm[job]?.pending) return;
        vm[job] = { ...vm[job]!, progress: m.message };
        break;
      }
      case 'jobError': {
        const key = {
          credit: 'creditJob',
          rerun: 'rerunJob',
          evaluate: 'evalJob',
          retrain: 'retrainJob',
        } as const;
        if (m.requestId !== waiting[m.op]) return;
        vm[key[m.op]] = { pending: false, progress: null, error: m.message };
        break;
      }
    }
    render();
  });

  registerToolkit()
    .catch((e) => console.warn(`Episode Lab inspector: the toolkit did not load: ${e}`))
    .finally(() => {
      render();
      if (vm.episode) {
        requestMaskCheck();
        requestCredit();
      }
      vscode.postMessage({ type: 'ready' });
    });
}
