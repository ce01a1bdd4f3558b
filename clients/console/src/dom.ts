/**
 * Building the page without HTML strings: every text, whatever a user typed or uploaded or the
 * API answered, becomes a text node, so nothing reaches the page as markup.
 */
export type Child = Node | string | number | null | undefined | false;
type Value = string | number | boolean | null | undefined;
export type Attrs = Record<string, Value | EventListener>;

function apply(element: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** An HTML element; attributes named `on<event>` are listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

/** An SVG element (the chart). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(element, attrs);
  append(element, children);
  return element;
}

/** Replaces what `parent` holds. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A labelled control: the label's `for` ties its text to the control as its accessible name. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id !== '' ? control.id : `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  control.id = id;
  const hintNode = hint === undefined ? null : h('small', { id: `${id}-hint` }, hint);
  if (hintNode !== null) control.setAttribute('aria-describedby', hintNode.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintNode);
}

/** Saves bytes as a file through a temporary link (the download attribute names it). */
export function saveAs(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A file name from a user's list name: letters, digits, `-`, `_` and `.` only. */
export const safeFileName = (name: string): string => name.replace(/[^\w.-]+/g, '_').slice(0, 80) || 'list';
