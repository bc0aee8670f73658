/**
 * The one module that knows about `@vscode/webview-ui-toolkit` (deprecated upstream: replacing it
 * means changing only this file). Builders return plain elements with the toolkit's tag names, so
 * render functions and their tests do not load the toolkit; `registerToolkit` (called once by the
 * webview's entry point) turns those tags into the toolkit's themed controls.
 */

export interface Option {
  value: string;
  label: string;
}

/** A dropdown (`vscode-dropdown`); `onChange` gets the chosen value. */
export function makeDropdown(
  doc: Document,
  id: string,
  options: readonly Option[],
  value: string,
  onChange: (value: string) => void,
): HTMLElement {
  const dd = doc.createElement('vscode-dropdown');
  dd.id = id;
  dd.setAttribute('position', 'below');
  for (const o of options) {
    const opt = doc.createElement('vscode-option');
    opt.setAttribute('value', o.value);
    if (o.value === value) opt.setAttribute('selected', '');
    opt.textContent = o.label;
    dd.appendChild(opt);
  }
  dd.setAttribute('current-value', value);
  dd.addEventListener('change', () => {
    const v = (dd as HTMLElement & { value?: string }).value;
    if (typeof v === 'string' && v !== '') onChange(v);
  });
  return dd;
}

/** Register the toolkit's custom elements (browser only). */
export async function registerToolkit(): Promise<void> {
  const tk = await import('@vscode/webview-ui-toolkit');
  tk.provideVSCodeDesignSystem().register(tk.vsCodeDropdown(), tk.vsCodeOption(), tk.vsCodeButton());
}
