// The source reader: the C++ core's own source, with the lines of one
// operation highlighted and explained. The files and line ranges come from
// `virtual:anatomy-source`, which the build makes from the marker comments in
// core/ (web/tools/anatomy-source.ts); the list and the explanations come from
// src/source/sections.mjs, and the build checks the two against each other.
// Above the code, the shape contract of each function the view shows, as the
// header next to its .cpp declares it (`q: [B, Hq, T, dh], ... -> [B, Hq, T, S]`).
// State in the URL: source-reader.op (operation id) and source-reader.view (which of its views, from 0).
import source from 'virtual:anatomy-source';
import { el, uid } from '../../lib/dom';
import type { WidgetContext } from '../../lib/widget';
import type { Operation, View } from '../../source/sections.mjs';
import { OPERATIONS } from '../../source/sections.mjs';
import './source-reader.css';

interface Range {
  startLine: number;
  endLine: number;
}

/** The file a view shows and its highlighted ranges; throws if the build handed over something inconsistent. */
function resolveView(op: Operation, view: View): { file: string; ranges: Range[] } {
  const ranges = view.sections.map((id) => {
    const range = source.sections[id];
    if (!range) throw new Error(`the build did not locate section "${id}" of "${op.title}"`);
    return range;
  });
  const file = ranges[0].file;
  if (!(file in source.files)) throw new Error(`the build did not include ${file}`);
  return { file, ranges: [...ranges].sort((a, b) => a.startLine - b.startLine) };
}

/** "line 7", "lines 7–9", "lines 7, 12" */
function describeLines(lines: number[]): string {
  if (lines.length === 1) return `line ${lines[0]}`;
  const consecutive = lines.every((n, i) => i === 0 || n === lines[i - 1] + 1);
  return consecutive ? `lines ${lines[0]}–${lines[lines.length - 1]}` : `lines ${lines.join(', ')}`;
}

/** Text with `backticks` as <code>. */
function prose(text: string): (string | HTMLElement)[] {
  return text.split(/`([^`]+)`/).map((part, i) => (i % 2 === 1 ? el('code', {}, part) : part));
}

/** Where a `//` comment starts in a line of C++, outside string and character literals; -1 if none. */
function commentStart(line: string): number {
  let quote = '';
  for (let i = 0; i < line.length - 1; i += 1) {
    const ch = line[i];
    if (quote) {
      if (ch === '\\') i += 1;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '/' && line[i + 1] === '/') return i;
  }
  return -1;
}

const markerLine = /^\s*\/\/\s*\[\/?anatomy:[a-z0-9_]+\]\s*$/;

/**
 * The whole file as a <pre>: one block per line with its number in a gutter.
 * Lines inside `ranges` are <mark> elements; key lines also get class "key".
 */
function renderFile(text: string, ranges: Range[], keyLines: Set<number>): { pre: HTMLPreElement; lines: HTMLElement[] } {
  const inRange = (n: number) => ranges.some((r) => n >= r.startLine && n <= r.endLine);
  const rows = text.replace(/\n$/, '').split('\n');
  const width = String(rows.length).length;
  const lines = rows.map((row, i) => {
    const n = i + 1;
    const highlighted = inRange(n);
    const line = el(highlighted ? 'mark' : 'span', { class: 'source-reader-line', 'data-line': n });
    if (keyLines.has(n)) line.classList.add('key');
    if (markerLine.test(row)) line.classList.add('marker');
    line.append(el('span', { class: 'source-reader-ln' }, String(n).padStart(width, ' ')));
    const cut = commentStart(row);
    const code = el('span', { class: 'source-reader-lc' });
    if (cut < 0) code.append(row);
    else code.append(row.slice(0, cut), el('span', { class: 'source-reader-cm' }, row.slice(cut)));
    line.append(code, '\n');
    return line;
  });
  const pre = el('pre', { class: 'source-reader-pre' }, el('code', {}, ...lines));
  return { pre, lines };
}

export async function mountSourceReader(root: HTMLElement, { state }: WidgetContext): Promise<void> {
  const operations = OPERATIONS;
  for (const op of operations) op.views.forEach((view) => resolveView(op, view));  // fail early, in place of the widget

  let opIndex = Math.max(0, operations.findIndex((op) => op.id === state.get('op')));
  let viewIndex = state.getNumber('view', 0, 0, operations[opIndex].views.length - 1);

  // --- the list of operations: a single-select listbox, selection follows focus ---
  const listLabel = el('p', { class: 'source-reader-list-label', id: uid('source-reader-list-label') }, 'Operation');
  const list = el('ul', { class: 'source-reader-list', role: 'listbox', tabindex: 0, 'aria-labelledby': listLabel.id });
  const options = operations.map((op, i) => {
    const option = el('li', { role: 'option', id: uid('source-reader-op'), 'aria-selected': 'false', title: op.title }, op.short);
    option.addEventListener('click', () => {
      select(i, 0);
      list.focus();
    });
    return option;
  });
  list.append(...options);
  list.addEventListener('keydown', (event) => {
    const last = operations.length - 1;
    const next: Record<string, number> = {
      ArrowDown: Math.min(last, opIndex + 1),
      ArrowRight: Math.min(last, opIndex + 1),
      ArrowUp: Math.max(0, opIndex - 1),
      ArrowLeft: Math.max(0, opIndex - 1),
      Home: 0,
      End: last,
    };
    if (!(event.key in next)) return;
    event.preventDefault();
    if (next[event.key] !== opIndex) select(next[event.key], 0);
  });

  // --- the reading panel ---
  const title = el('h3', { class: 'source-reader-title' });
  const summary = el('p', { class: 'source-reader-summary' });
  const viewsLabel = el('span', { class: 'source-reader-views-label', id: uid('source-reader-views') }, 'Show:');
  const views = el('div', { class: 'source-reader-views', role: 'group', 'aria-labelledby': viewsLabel.id });
  const where = el('p', { class: 'source-reader-where', role: 'status', 'aria-live': 'polite' });
  const contracts = el('ul', { class: 'source-reader-contracts', 'aria-label': 'Shape contracts' });
  const codeBox = el('div', { class: 'source-reader-code', role: 'region', tabindex: 0 });
  const notesTitle = el('h4', { class: 'source-reader-notes-title' }, 'Key lines');
  const notes = el('ol', { class: 'source-reader-notes' });
  let lineNodes: HTMLElement[] = [];

  const panel = el('div', { class: 'source-reader-panel' }, title, summary, el('div', { class: 'source-reader-view-bar' }, viewsLabel, views), where, contracts, codeBox, notesTitle, notes);
  root.append(el('div', { class: 'source-reader' }, el('div', { class: 'source-reader-grid' }, el('div', { class: 'source-reader-nav' }, listLabel, list), panel)));

  /** Scrolls the code box (never the page) so that lines first..last are in view, centred when they fit. */
  function scrollCodeTo(first: number, last: number): void {
    const top = lineNodes[first - 1];
    const bottom = lineNodes[last - 1];
    if (!top || !bottom) return;
    const lineHeight = top.offsetHeight || 16;
    const span = bottom.offsetTop + bottom.offsetHeight - top.offsetTop;
    const room = codeBox.clientHeight;
    codeBox.scrollTop = span < room ? top.offsetTop - (room - span) / 2 : top.offsetTop - lineHeight;
  }

  function flash(lines: number[]): void {
    for (const n of lines) {
      const node = lineNodes[n - 1];
      if (!node) continue;  // the file is still loading
      node.classList.remove('flash');
      void node.offsetWidth;  // restart the animation
      node.classList.add('flash');
      setTimeout(() => node.classList.remove('flash'), 1500);
    }
  }

  // Each file's text loads when it is first shown (a module of its own, see
  // web/tools/anatomy-source.ts); a choice made while one loads wins over it.
  let shownRequest = 0;
  async function showCode(file: string, ranges: Range[], keyLines: number[][], rangeText: string): Promise<void> {
    const request = ++shownRequest;
    codeBox.setAttribute('aria-busy', 'true');
    let text: string;
    try {
      text = await source.files[file]();
    } catch (error) {
      if (request !== shownRequest) return;
      lineNodes = [];
      codeBox.replaceChildren(el('p', { class: 'status error' }, `Could not load ${file}: ${error instanceof Error ? error.message : String(error)}`));
      codeBox.removeAttribute('aria-busy');
      return;
    }
    if (request !== shownRequest) return;
    const rendered = renderFile(text, ranges, new Set(keyLines.flat()));
    lineNodes = rendered.lines;
    codeBox.setAttribute('aria-label', `Source of ${file}, lines ${rangeText} highlighted`);
    codeBox.replaceChildren(rendered.pre);
    codeBox.removeAttribute('aria-busy');
    codeBox.scrollLeft = 0;
    scrollCodeTo(ranges[0].startLine, ranges[0].endLine);
  }

  function render(): Promise<void> {
    const op = operations[opIndex];
    const view = op.views[viewIndex];
    const { file, ranges } = resolveView(op, view);
    const keyLines = source.keyLines[op.id]?.[viewIndex] ?? [];

    options.forEach((option, i) => option.setAttribute('aria-selected', String(i === opIndex)));
    list.setAttribute('aria-activedescendant', options[opIndex].id);

    title.textContent = op.title;
    summary.replaceChildren(...prose(op.summary));

    views.replaceChildren(
      ...op.views.map((v, i) => {
        const button = el('button', { type: 'button', class: 'small secondary', 'aria-pressed': String(i === viewIndex) }, v.label);
        button.addEventListener('click', () => select(opIndex, i));
        return button;
      }),
    );
    views.parentElement!.hidden = op.views.length < 2;

    const rangeText = ranges.map((r) => `${r.startLine}–${r.endLine}`).join(', ');
    where.replaceChildren(
      el('code', { class: 'source-reader-file' }, file),
      ` · lines ${rangeText} highlighted`,
    );

    const shown = view.sections.flatMap((id) => source.contracts[id] ?? []);
    contracts.replaceChildren(
      ...shown.map((c) =>
        el('li', { class: 'source-reader-contract', title: `Declared in ${c.header}, line ${c.line}` },
          el('code', { class: 'source-reader-contract-name' }, `${c.name}()`), ' ', ...c.shapes.map((shape) => el('code', { class: 'source-reader-shape' }, shape)))),
    );
    contracts.hidden = shown.length === 0;

    const code = showCode(file, ranges, keyLines, rangeText);

    notes.replaceChildren(
      ...view.notes.map((note, i) => {
        const lines = keyLines[i] ?? [];
        const jump = el('button', { type: 'button', class: 'small secondary source-reader-jump', title: `Show ${describeLines(lines)} in the code` }, describeLines(lines));
        jump.addEventListener('click', () => {
          scrollCodeTo(lines[0], lines[lines.length - 1]);
          flash(lines);
        });
        return el('li', {}, jump, ' ', ...prose(note.note));
      }),
    );
    notesTitle.hidden = view.notes.length === 0;
    return code;
  }

  function select(op: number, view: number): void {
    opIndex = op;
    viewIndex = view;
    state.set({ op: operations[op].id, view: view === 0 ? null : view });
    void render();
  }

  await render();
  // The code box is laid out only once the widget is in the page; scroll again then.
  requestAnimationFrame(() => {
    const first = resolveView(operations[opIndex], operations[opIndex].views[viewIndex]).ranges[0];
    scrollCodeTo(first.startLine, first.endLine);
  });
}
