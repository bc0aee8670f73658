/**
 * Small DOM builders every view shares: an element with its class and text, a section opened by its
 * heading, a status line, a label for a control, a link-styled button, and a token's detail as a
 * definition list. Each returns the element it built, unattached.
 */

/** `<tag class="cls">text</tag>` (no class when `cls` is empty, no text when `text` is undefined). */
export function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  cls = '',
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** `<section class="cls"><h2>heading</h2></section>`: a view's box, its content appended after. */
export function section(doc: Document, cls: string, heading: string): HTMLElement {
  const box = el(doc, 'section', cls);
  box.appendChild(el(doc, 'h2', '', heading));
  return box;
}

/** A status line, `<p class="status cls">text</p>` (cls: pending, error, warn, muted, ...). */
export function status(doc: Document, cls: string, text: string): HTMLElement {
  return el(doc, 'p', `status ${cls}`, text);
}

/** `<label for="control">text</label>`. */
export function labelFor(doc: Document, control: string, text: string): HTMLLabelElement {
  const l = el(doc, 'label', '', text);
  l.htmlFor = control;
  return l;
}

/** A `button.link-button#id` that calls `onClick`; `title` is its tooltip. */
export function linkButton(
  doc: Document,
  id: string,
  label: string,
  onClick: () => void,
  title?: string,
): HTMLButtonElement {
  const b = el(doc, 'button', 'link-button', label);
  if (id) b.id = id;
  if (title !== undefined) b.title = title;
  b.addEventListener('click', () => onClick());
  return b;
}

/**
 * A token's fields as `<dl class="detail">`, one `<dt>`/`<dd>` pair each, in order; the value of the
 * field named `flagged` is marked `flag-text` unless it is 'none'.
 */
export function detailList(doc: Document, rows: readonly [string, string][], flagged: string): HTMLElement {
  const dl = el(doc, 'dl', 'detail');
  for (const [k, v] of rows) {
    const dd = el(doc, 'dd', '', v);
    if (k === flagged && v !== 'none') dd.className = 'flag-text';
    dl.append(el(doc, 'dt', '', k), dd);
  }
  return dl;
}
