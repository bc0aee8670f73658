/**
 * The episode table webview: receives a run's (or a dump file's) table, filters and sorts it as
 * the user types, draws the rows in view, opens a row in the inspector (click or Enter) and tells
 * the host the filtered order so the inspector's next/previous walk it. The query, the sort and the
 * selection survive hiding and a window reload (webview state).
 */
import {
  type Column,
  type EpisodeTable,
  emptyTable,
  filterRows,
  parseFilter,
  sortRows,
} from '../src/core/browse/table.js';
import {
  type FromTable,
  parseTableState,
  parseToTable,
  type TableSource,
  type TableState,
} from '../src/protocol/webview.js';
import { ROW_HEIGHT, renderBody, renderTableView } from './table.js';

interface VsCodeApi {
  postMessage(m: FromTable): void;
  getState(): unknown;
  setState(s: TableState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export function startTable(app: HTMLElement): void {
  const vscode = acquireVsCodeApi();
  const saved = parseTableState(vscode.getState());
  let table: EpisodeTable = emptyTable();
  let source: TableSource | null = saved?.source ?? null;
  let title = 'Episodes';
  let notes: string[] = [];
  let query = saved?.query ?? '';
  let sort = saved?.sort ?? null;
  let selected: string | null = saved?.selected ?? null;
  let order: number[] = [];
  let parts: ReturnType<typeof renderTableView> | null = null;
  let listTimer: ReturnType<typeof setTimeout> | null = null;

  const save = () => {
    if (source) vscode.setState({ source, query, sort, selected });
  };
  const keysOf = () => order.map((i) => table.keys[i]);

  function applyQuery(): void {
    const f = parseFilter(query);
    const started = performance.now();
    if (!f.ok) {
      if (parts) parts.error.textContent = f.error;
      return;
    }
    if (parts) parts.error.textContent = '';
    order = filterRows(table, f.value);
    if (sort) sortRows(table, order, sort.column, sort.descending);
    app.dataset.filterMs = (performance.now() - started).toFixed(1);
    app.dataset.rows = String(order.length);
    if (parts)
      parts.status.textContent = `${order.length} of ${table.keys.length} ${source?.kind === 'file' ? 'records' : 'episodes'}`;
    // The inspector's next/previous walk this order.
    if (listTimer) clearTimeout(listTimer);
    listTimer = setTimeout(() => vscode.postMessage({ type: 'list', keys: keysOf() }), 200);
  }

  function drawBody(): void {
    if (parts) renderBody(document, parts.body, table, order, selected);
  }

  function render(): void {
    parts = renderTableView(document, title, query, sort, notes, {
      onQuery: (q) => {
        query = q;
        save();
        applyQuery();
        if (parts) parts.body.scrollTop = 0;
        drawBody();
      },
      onSort: (c: Column) => {
        sort =
          sort?.column === c ? { column: c, descending: !sort.descending } : { column: c, descending: false };
        save();
        render();
      },
    });
    app.replaceChildren(parts.root);
    applyQuery();
    const body = parts.body;
    let frame = 0;
    body.addEventListener('scroll', () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        drawBody();
      });
    });
    body.addEventListener('click', (e) => {
      const row = (e.target as HTMLElement).closest<HTMLElement>('.grid-row');
      if (row?.dataset.key) open(row.dataset.key);
    });
    body.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        vscode.postMessage({ type: 'focusTree' });
        return;
      }
      const at = Math.max(
        0,
        order.findIndex((i) => table.keys[i] === selected),
      );
      const step: Record<string, number> = {
        ArrowDown: 1,
        ArrowUp: -1,
        PageDown: 20,
        PageUp: -20,
        Home: -1e9,
        End: 1e9,
      };
      if (e.key === 'Enter' && selected) {
        e.preventDefault();
        open(selected);
        return;
      }
      if (!(e.key in step) || order.length === 0) return;
      e.preventDefault();
      const p = Math.min(order.length - 1, Math.max(0, at + step[e.key]));
      select(table.keys[order[p]]);
      const top = p * ROW_HEIGHT;
      if (top < body.scrollTop) body.scrollTop = top;
      else if (top + ROW_HEIGHT > body.scrollTop + body.clientHeight)
        body.scrollTop = top + ROW_HEIGHT - body.clientHeight;
      drawBody();
    });
    // Bring the saved selection into view.
    const p = order.findIndex((i) => table.keys[i] === selected);
    requestAnimationFrame(() => {
      if (p >= 0) body.scrollTop = Math.max(0, p * ROW_HEIGHT - body.clientHeight / 2);
      drawBody();
    });
  }

  function select(key: string): void {
    selected = key;
    save();
  }

  function open(key: string): void {
    select(key);
    drawBody();
    vscode.postMessage({ type: 'open', key, list: keysOf() });
  }

  window.addEventListener('message', (event: MessageEvent) => {
    const parsed = parseToTable(event.data);
    if (!parsed.ok) {
      console.warn(`Episode Lab episode table: dropped a malformed message: ${parsed.error}`);
      return;
    }
    const m = parsed.value;
    if (m.type === 'table') {
      const changed = source?.id !== m.source.id;
      table = m.table;
      title = m.title;
      notes = m.notes;
      source = m.source;
      if (changed && saved?.source.id !== m.source.id) {
        query = '';
        sort = null;
        selected = null;
      }
      if (m.query !== undefined) {
        query = m.query;
        // Across steps reads in step order.
        sort = /^task = /.test(m.query) ? { column: 'step', descending: false } : sort;
      }
      save();
      render();
    } else {
      selected = m.key;
      save();
      drawBody();
    }
  });
  app.dataset.rows = '0';
  vscode.postMessage({ type: 'ready' });
}
