// Small helpers for building widget markup without a framework.

type Attrs = Record<string, string | number | boolean | undefined>;

/** Creates an element with attributes and children: el('button', {type: 'button'}, 'Run'). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === 'class') node.className = String(value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

let nextId = 0;
/** A document-unique id for label/aria wiring. */
export function uid(prefix: string): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** A labelled control: <label for=id>text</label> + the control, wrapped in a div. */
export function labelled(text: string, control: HTMLElement, hint?: string): HTMLDivElement {
  if (!control.id) control.id = uid('control');
  const wrapper = el('div', { class: 'control' }, el('label', { for: control.id }, text), control);
  if (hint) {
    const hintId = uid('hint');
    control.setAttribute('aria-describedby', hintId);
    wrapper.append(el('small', { id: hintId, class: 'hint' }, hint));
  }
  return wrapper;
}

/** A labelled control (labelled's) that takes its figure's width on a row of its own: a text box (main.css, .control.wide). */
export function wide(control: HTMLDivElement): HTMLDivElement {
  control.classList.add('wide');
  return control;
}

/** A <select> with the given options (value, label). */
export function select(options: [string, string][], value: string): HTMLSelectElement {
  const node = el('select');
  for (const [v, label] of options) node.append(el('option', { value: v }, label));
  node.value = value;
  return node;
}

/** A numeric <input type=range> or <input type=number>. */
export function numberInput(type: 'range' | 'number', min: number, max: number, step: number, value: number): HTMLInputElement {
  return el('input', { type, min, max, step, value });
}

/** Formats a probability or error for display: fixed for ordinary values, exponent for tiny ones. */
export function formatNumber(value: number, digits = 4): string {
  if (!Number.isFinite(value)) return String(value);
  if (value !== 0 && Math.abs(value) < 10 ** -digits) return value.toExponential(2);
  return value.toFixed(digits);
}

/** A file's size for a status line: "63.9 kB", "1.2 MB". */
export function formatFileSize(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Shows a message in a widget's status line; kind 'error' is announced assertively. */
export function setStatus(node: HTMLElement, message: string, kind: 'info' | 'error' = 'info'): void {
  node.textContent = message;
  node.dataset.kind = kind;
  node.setAttribute('role', kind === 'error' ? 'alert' : 'status');
}

const svgNs = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes and, optionally, its text. */
export function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  text?: string,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(svgNs, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Calls `onWidth` with `element`'s content width, in whole pixels, when it is first
 * laid out and whenever it changes. Drawings size themselves from this rather than
 * reading clientWidth, which forces a layout of the page on every read.
 */
export function observeWidth(element: Element, onWidth: (width: number) => void, toPixels = Math.round): void {
  let last: number | null = null;
  new ResizeObserver(([entry]) => {
    const width = toPixels(entry.contentRect.width);
    if (width === last) return;
    last = width;
    onWidth(width);
  }).observe(element);
}
