/**
 * The one module that knows about `@vscode/webview-ui-toolkit` (deprecated upstream: replacing it
 * means changing only this file). Builders return plain elements with the toolkit's tag names, so
 * render functions and their tests do not load the toolkit; `registerToolkit` (called once by the
 * webview's entry point) turns those tags into the toolkit's themed controls.
 */
import { linkButton } from './dom.js';

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

/** A button (`vscode-button`); disabled buttons carry their reason as a title. */
export function makeButton(
  doc: Document,
  id: string,
  label: string,
  onClick: () => void,
  opts: { disabled?: string | null; secondary?: boolean } = {},
): HTMLElement {
  const b = doc.createElement('vscode-button');
  b.id = id;
  b.textContent = label;
  if (opts.secondary) b.setAttribute('appearance', 'secondary');
  if (opts.disabled) {
    b.setAttribute('disabled', '');
    b.setAttribute('title', opts.disabled);
    b.setAttribute('aria-disabled', 'true');
  } else b.addEventListener('click', () => onClick());
  return b;
}

/** A number field (a plain themed input: the toolkit's text field adds nothing here). */
export function makeNumberField(
  doc: Document,
  id: string,
  value: number,
  min: number,
  max: number,
  onChange: (value: number) => void,
): HTMLInputElement {
  const input = doc.createElement('input');
  input.type = 'number';
  input.id = id;
  input.className = 'number-field';
  input.min = String(min);
  input.max = String(max);
  input.step = '1';
  input.value = String(value);
  input.addEventListener('change', () => {
    const v = Number(input.value);
    if (Number.isInteger(v) && v >= min && v <= max) onChange(v);
    else input.value = String(value);
  });
  return input;
}

/** The header link that opens a second inspector on what this one shows. */
export function openBesideButton(doc: Document, onClick: () => void): HTMLButtonElement {
  const title =
    'Open a second inspector beside this one, on the same episode, to compare the two side by side';
  return linkButton(doc, 'open-beside', 'open beside', onClick, title);
}

/** Register the toolkit's custom elements (browser only). */
export async function registerToolkit(): Promise<void> {
  const tk = await import('@vscode/webview-ui-toolkit');
  tk.provideVSCodeDesignSystem().register(tk.vsCodeDropdown(), tk.vsCodeOption(), tk.vsCodeButton());
}
