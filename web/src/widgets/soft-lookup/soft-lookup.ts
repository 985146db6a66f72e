// The soft lookup: one query, a handful of keys on a plane, each key with a
// small value vector. Every move asks the wasm core's softLookup for
//   scores = scale * q.k,  weights = softmax(scores),  mixed = sum_n weights_n * v_n
// and draws the weights as the keys' circles and as bars. The query and the keys
// can be dragged (mouse, touch) or moved with the arrow keys; keys can be added
// and removed. The scale slider shows the two limits: a large scale gives a hard
// lookup of the best-matching key, a small one the plain mean of the values.
import '../shared/lessons.css';
import { CoreError, Lookup } from '../../lib/core';
import { el, formatNumber, labelled, select, setStatus, svgEl, uid } from '../../lib/dom';
import { markInvalid, readNumber, stillShowing } from '../../lib/fields';
import type { WidgetContext } from '../../lib/widget';
import { markUpdated } from '../shared/lesson-kit';

interface Point { x: number; y: number }
interface Key { at: Point; value: number[] } // value: [Dv]

const extent = 3;             // the plane runs from -3 to 3 on both axes
const maxKeys = 8;
const minKeys = 2;
const step = 0.1, bigStep = 0.5; // arrow keys; with Shift
const scaleRange = [-2, 2];   // the slider is log10(scale): 0.01 to 100
const valueLimit = 9;         // each number of a value, -9 to 9: the bars are drawn to this

const defaultQuery: Point = { x: 1.2, y: 0.6 };
const defaultKeys: Key[] = [
  { at: { x: 2, y: 0.5 }, value: [1, 0, 0] },
  { at: { x: -1, y: 1.8 }, value: [0, 1, 0] },
  { at: { x: -1.6, y: -1.4 }, value: [0, 0, 1] },
  { at: { x: 0.8, y: -2 }, value: [0.5, 0.5, 0] },
];
// Where an added key goes: spots not taken by the defaults, in turn.
const newKeySpots: Point[] = [
  { x: 0.4, y: 2.4 }, { x: -2.4, y: 0.2 }, { x: 2.4, y: -1.2 }, { x: -0.4, y: -0.6 },
  { x: 1.6, y: 1.8 }, { x: -2, y: -2.4 }, { x: 2.6, y: 2.6 }, { x: -2.6, y: 2.4 },
];

const round = (v: number) => Math.round(v * 100) / 100;
const clampToPlane = (v: number) => Math.min(extent, Math.max(-extent, round(v)));
const keyName = (n: number) => `k${n + 1}`;
const fmt = (v: number) => formatNumber(v, 2);

// ---------------------------------------------------------------- URL state

function parsePoint(text: string | null): Point | null {
  const parts = (text ?? '').split(',').map(Number);
  if (parts.length !== 2 || !parts.every(Number.isFinite)) return null;
  return { x: clampToPlane(parts[0]), y: clampToPlane(parts[1]) };
}

function parseKeys(keysText: string | null, valuesText: string | null, dims: number): Key[] | null {
  if (!keysText) return null;
  const points = keysText.split(';').map(parsePoint);
  if (points.length < minKeys || points.length > maxKeys || points.some((p) => p === null)) return null;
  const values = (valuesText ?? '').split(';').map((v) => v.split(',').map(Number));
  return points.map((at, n) => ({
    at: at!,
    value: Array.from({ length: dims }, (_, d) => {
      const x = values[n]?.[d];
      return x !== undefined && Number.isFinite(x) ? Math.min(9, Math.max(-9, round(x))) : 0;
    }),
  }));
}

// ---------------------------------------------------------------- the widget

export function mountSoftLookup(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  root.classList.add('lesson-widget', 'lookup-widget');

  let dims = state.get('dims') === '2' ? 2 : 3;
  let query: Point = parsePoint(state.get('q')) ?? { ...defaultQuery };
  let keys: Key[] = parseKeys(state.get('k'), state.get('v'), dims) ?? defaultKeys.map((k) => ({ at: { ...k.at }, value: k.value.slice(0, dims) }));
  const linkedScale = Number(state.get('s'));
  let logScale = state.get('s') !== null && linkedScale > 0 ? Math.min(scaleRange[1], Math.max(scaleRange[0], Math.log10(linkedScale))) : 0;
  const scale = () => Math.round(10 ** logScale * 1000) / 1000;
  /** The scale as every line of the widget writes it. */
  const scaleText = () => formatNumber(scale(), scale() < 0.1 ? 3 : 2);
  /** Value fields that hold something other than a number from -9 to 9, with their message. */
  const invalid = new Map<HTMLInputElement, string>();

  // ---- controls
  const scaleInput = el('input', { type: 'range', min: scaleRange[0], max: scaleRange[1], step: 0.05, value: logScale, 'data-testid': 'soft-lookup-scale' });
  const scaleOutput = el('output', { class: 'scale-output', 'data-testid': 'soft-lookup-scale-value' });
  const dimsSelect = select([['2', '2 numbers'], ['3', '3 numbers']], String(dims));
  dimsSelect.dataset.testid = 'soft-lookup-dims';
  const addButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'soft-lookup-add' }, 'Add a key');
  const resetButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'soft-lookup-reset' }, 'Reset');
  const status = el('p', { class: 'status', 'data-testid': 'soft-lookup-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'soft-lookup-timing' });

  // ---- the plane
  const svg = svgEl('svg');
  const pad = 0.35;
  svg.setAttribute('viewBox', `${-extent - pad} ${-extent - pad} ${2 * (extent + pad)} ${2 * (extent + pad)}`);
  svg.setAttribute('class', 'lookup-plane');
  svg.setAttribute('role', 'group');
  svg.setAttribute('aria-label', 'The query q and the keys on a plane. Drag a point, or focus it and use the arrow keys.');
  svg.dataset.testid = 'soft-lookup-plane';
  const defs = svgEl('defs', {});
  const marker = svgEl('marker', { id: uid('soft-lookup-arrow'), viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' });
  marker.append(svgEl('path', { d: 'M0 0L10 5L0 10z', class: 'query-arrowhead' }));
  defs.append(marker);
  const grid = svgEl('g', { class: 'plane-grid', 'aria-hidden': 'true' });
  for (let i = -extent; i <= extent; i++) {
    grid.append(svgEl('line', { x1: i, y1: -extent, x2: i, y2: extent, class: i === 0 ? 'axis' : 'grid' }));
    grid.append(svgEl('line', { x1: -extent, y1: i, x2: extent, y2: i, class: i === 0 ? 'axis' : 'grid' }));
  }
  const background = svgEl('rect', { x: -extent - pad, y: -extent - pad, width: 2 * (extent + pad), height: 2 * (extent + pad), class: 'plane-background' });
  const arrow = svgEl('line', { x1: 0, y1: 0, class: 'query-arrow', 'marker-end': `url(#${marker.id})`, 'aria-hidden': 'true' });
  const keyLayer = svgEl('g', { class: 'key-layer' });
  const queryNode = pointNode('q', 'query');
  queryNode.g.dataset.testid = 'soft-lookup-query';
  queryNode.g.classList.add('query');
  svg.append(defs, background, grid, arrow, keyLayer, queryNode.g);

  let keyNodes: ReturnType<typeof pointNode>[] = [];

  function pointNode(label: string, kind: string) {
    const g = svgEl('g', { tabindex: 0, role: 'application', 'aria-roledescription': `movable ${kind}`, class: 'point' }) as SVGGElement;
    const shape = kind === 'query'
      ? svgEl('rect', { x: -0.17, y: -0.17, width: 0.34, height: 0.34, transform: 'rotate(45)', class: 'query-shape' })
      : svgEl('circle', { r: 0.3, class: 'key-shape' });
    const name = svgEl('text', { class: 'point-label', 'text-anchor': 'middle', dy: '0.35em' });
    name.textContent = label;
    const weight = svgEl('text', { class: 'point-weight', x: 0.42, y: -0.3 });
    g.append(shape, name, weight);
    return { g, shape, weight };
  }

  // Two tables, narrow enough for a phone: what the core returned, and the values.
  const weightRows = el('tbody');
  const weightTable = el(
    'table',
    { class: 'lookup-table', 'data-testid': 'soft-lookup-weights' },
    el('caption', {}, 'What the core returned for this query'),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'key at (x, y)'), el('th', { scope: 'col', class: 'num' }, 'score'), el('th', { scope: 'col' }, 'weight'))),
    weightRows,
  );
  const valueRows = el('tbody');
  const resultRows = el('tbody');
  const valueHead = el('th', { scope: 'col' });
  const valueTable = el(
    'table',
    { class: 'lookup-table', 'data-testid': 'soft-lookup-values' },
    el('caption', {}, `Each key's value (numbers from −${valueLimit} to ${valueLimit})`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'key'), valueHead, el('th', { scope: 'col' }, el('span', { class: 'lesson-sr-only' }, 'remove')))),
    valueRows,
  );
  const resultTable = el(
    'table',
    { class: 'lookup-table result-table', 'data-testid': 'soft-lookup-results' },
    el('caption', {}, 'What the lookup returns, next to its two limits'),
    resultRows,
  );
  const limits = el('p', { class: 'lesson-caption', 'data-testid': 'soft-lookup-limits' });

  const scaleControl = labelled('Scale (multiplies q·k before the softmax)', scaleInput,
    '0.01 to 100 on a log scale; attention would use 1/√2 ≈ 0.71 here');
  scaleInput.after(scaleOutput);
  scaleOutput.setAttribute('for', scaleInput.id);
  root.append(
    el('div', { class: 'controls' },
      scaleControl,
      labelled('Each value holds', dimsSelect),
      el('div', { class: 'control buttons' }, addButton, resetButton)),
    el('div', { class: 'status-row' }, status, timing),
    el('div', { class: 'lookup-layout' },
      el('div', { class: 'lookup-plane-box' }, svg,
        el('p', { class: 'lesson-caption' },
          'Each circle grows with its key\'s weight, and the weights are softmax(scale · q·k): they follow the dot product with the query, so a long key pointing the same way as q beats a nearer one, and they always add up to 1. ' +
          'Raise the scale and the best-matching key takes nearly all the weight, as an exact lookup would; lower it and every key gets about the same share, so the mixed value drifts to the plain mean.')),
      el('div', { class: 'lookup-panel' }, weightTable, valueTable, resultTable, limits)),
  );

  // ---- drawing
  /** The first invalid field's message in the status line; false when there is none. */
  function showProblems(): boolean {
    const [first] = invalid.values();
    if (first === undefined) return false;
    setStatus(status, first, 'error');
    return true;
  }

  function rebuildKeys(): void {
    invalid.clear(); // the fields are made again from the values in use
    const focused = keyNodes.findIndex((node) => node.g === document.activeElement);
    keyLayer.replaceChildren();
    keyNodes = keys.map((_, n) => {
      const node = pointNode(keyName(n), 'key');
      node.g.dataset.testid = `soft-lookup-key-${n}`;
      node.g.classList.add('key');
      attachPointer(node.g, () => keys[n].at, (p) => (keys[n].at = p));
      node.g.addEventListener('keydown', (e) => {
        if ((e.key === 'Delete' || e.key === 'Backspace') && keys.length > minKeys) {
          e.preventDefault();
          removeKey(n);
        }
      });
      keyLayer.append(node.g);
      return node;
    });
    if (focused >= 0) keyNodes[Math.min(focused, keyNodes.length - 1)]?.g.focus();

    valueHead.replaceChildren(`value v (${dims} numbers)`);
    weightRows.replaceChildren(
      ...keys.map((_, n) =>
        el('tr', {},
          el('th', { scope: 'row' }, keyName(n), ' ', el('small', { class: 'key-at', 'data-cell': 'at' })),
          el('td', { class: 'num', 'data-cell': 'score' }),
          el('td', { class: 'weight-cell', 'data-cell': 'weight', 'data-testid': `soft-lookup-weight-${n}` },
            el('span', { class: 'weight-bar', 'aria-hidden': 'true' }, el('span', { class: 'weight-fill' })), el('span', { class: 'weight-number' })))),
    );
    valueRows.replaceChildren(
      ...keys.map((key, n) => {
        const inputs = key.value.map((x, d) =>
          el('input', { type: 'number', step: 0.1, min: -valueLimit, max: valueLimit, value: x, class: 'value-input', 'aria-label': `value of ${keyName(n)}, number ${d + 1}`, 'data-testid': `soft-lookup-value-${n}-${d}` }));
        for (const [d, input] of inputs.entries())
          input.addEventListener('input', () => {
            // Out of range is refused, not clamped: the lookup uses the number the field shows or none.
            const name = `number ${d + 1} of ${keyName(n)}'s value`;
            const read = readNumber(input, `N${name.slice(1)}`, -valueLimit, valueLimit);
            if ('error' in read) {
              markInvalid([input]);
              invalid.set(input, `${read.error}${stillShowing([[name, keys[n].value[d]]])}`);
              showProblems();
              return;
            }
            markInvalid([input], false);
            invalid.delete(input);
            keys[n].value[d] = read.value;
            update();
          });
        const remove = el('button', { type: 'button', class: 'small', 'aria-label': `Remove key ${keyName(n)}`, 'data-testid': `soft-lookup-remove-${n}` }, '×');
        remove.disabled = keys.length <= minKeys;
        remove.addEventListener('click', () => removeKey(n));
        return el('tr', {}, el('th', { scope: 'row' }, keyName(n)), el('td', {}, el('span', { class: 'value-inputs' }, ...inputs)), el('td', {}, remove));
      }),
    );
    addButton.disabled = keys.length >= maxKeys;
  }

  function update(): void {
    const start = performance.now();
    const values = keys.map((k) => k.value);
    let result: Lookup, mean: Lookup;
    try {
      result = core.softLookup({ query: [query.x, query.y], keys: keys.map((k) => [k.at.x, k.at.y]), values, scale: scale() });
      // The same lookup with the query at the origin: every score is 0, every weight 1/N, the mix the plain mean.
      mean = core.softLookup({ query: [0, 0], keys: keys.map((k) => [k.at.x, k.at.y]), values, scale: 1 });
    } catch (error) {
      setStatus(status, `The core refused this lookup: ${error instanceof CoreError ? error.message : String(error)}`, 'error');
      return;
    }
    draw(result, mean);
    const ms = performance.now() - start;
    markUpdated(root, timing, ms);
    state.set({
      q: `${query.x},${query.y}`,
      s: scale(),
      k: keys.map((k) => `${k.at.x},${k.at.y}`).join(';'),
      v: keys.map((k) => k.value.join(',')).join(';'),
      dims,
    });
  }

  function draw(result: Lookup, mean: Lookup): void {
    const { scores, weights, mixed } = result;
    const best = scores.indexOf(Math.max(...scores));
    scaleInput.value = String(logScale);
    scaleOutput.textContent = `× ${scaleText()}`;
    scaleInput.setAttribute('aria-valuetext', `scale ${scaleText()}`);

    place(queryNode.g, query);
    queryNode.g.setAttribute('aria-label', `query q at (${fmt(query.x)}, ${fmt(query.y)}). Arrow keys move it by ${step}, with Shift by ${bigStep}.`);
    queryNode.g.dataset.x = String(query.x);
    queryNode.g.dataset.y = String(query.y);
    arrow.setAttribute('x2', String(query.x * 0.93));
    arrow.setAttribute('y2', String(-query.y * 0.93));

    for (const [n, node] of keyNodes.entries()) {
      const key = keys[n], w = weights[n];
      place(node.g, key.at);
      node.shape.setAttribute('r', String(0.12 + 0.4 * Math.sqrt(w)));
      node.shape.setAttribute('fill-opacity', String(0.15 + 0.75 * w));
      node.g.classList.toggle('best', n === best);
      node.weight.textContent = formatNumber(w, 3);
      node.g.dataset.x = String(key.at.x);
      node.g.dataset.y = String(key.at.y);
      node.g.dataset.weight = String(w);
      node.g.setAttribute('aria-label',
        `key ${keyName(n)} at (${fmt(key.at.x)}, ${fmt(key.at.y)}), weight ${formatNumber(w, 3)}${n === best ? ', the largest score' : ''}. ` +
        `Arrow keys move it${keys.length > minKeys ? '; Delete removes it' : ''}.`);

      const row = weightRows.rows[n];
      row.querySelector('[data-cell=at]')!.textContent = `(${fmt(key.at.x)}, ${fmt(key.at.y)})`;
      row.querySelector('[data-cell=score]')!.textContent = formatNumber(scores[n], 3);
      const weightCell = row.querySelector<HTMLElement>('[data-cell=weight]')!;
      weightCell.dataset.value = String(w);
      weightCell.querySelector<HTMLElement>('.weight-fill')!.style.width = `${(100 * w).toFixed(1)}%`;
      weightCell.querySelector('.weight-number')!.textContent = formatNumber(w, 3);
      row.classList.toggle('best', n === best);
      valueRows.rows[n].classList.toggle('best', n === best);
    }

    const hard = keys[best].value;
    const meanValue = mean.mixed;
    const maxAbs = Math.max(1e-9, ...keys.flatMap((k) => k.value.map(Math.abs)));
    const distance = (a: number[], b: number[]) => Math.hypot(...a.map((x, d) => x - b[d]));
    const sum = weights.reduce((a, b) => a + b, 0);
    resultRows.replaceChildren(
      resultRow('mixed = Σ weight · v', `weights add up to ${formatNumber(sum, 6)}`, mixed, maxAbs, 'soft-lookup-mixed'),
      resultRow(`exact lookup: v of ${keyName(best)}`, 'the largest score', hard, maxAbs, 'soft-lookup-hard'),
      resultRow('plain mean of the values', 'q at the origin: every weight 1/N', meanValue, maxAbs, 'soft-lookup-mean'),
    );
    resultRows.dataset.sum = String(sum);
    limits.textContent =
      `The mix is ${formatNumber(distance(mixed, hard), 3)} from ${keyName(best)}'s value and ${formatNumber(distance(mixed, meanValue), 3)} from the mean ` +
      `(distances between the vectors). ${keyName(best)} has weight ${formatNumber(weights[best], 3)} at scale ${scaleText()}.`;
    if (!showProblems())
      setStatus(status, `Query at (${fmt(query.x)}, ${fmt(query.y)}): ${weights.map((w, n) => `${keyName(n)} ${formatNumber(w, 3)}`).join(', ')}.`);
  }

  function resultRow(title: string, note: string, vector: number[], maxAbs: number, testid: string): HTMLTableRowElement {
    return el('tr', { 'data-testid': testid, 'data-value': JSON.stringify(vector) },
      el('th', { scope: 'row' }, title, el('small', { class: 'row-note' }, note)),
      el('td', {}, valueBars(vector, maxAbs)));
  }

  function place(g: SVGGElement, p: Point): void {
    g.setAttribute('transform', `translate(${p.x} ${-p.y})`);
  }

  // ---- interaction
  function attachPointer(g: SVGGElement, get: () => Point, set: (p: Point) => void): void {
    g.addEventListener('pointerdown', (e) => {
      e.stopPropagation();
      e.preventDefault();
      g.focus();
      drag(e, set);
    });
    g.addEventListener('keydown', (e) => {
      const moves: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
      if (!(e.key in moves)) return;
      e.preventDefault();
      const [dx, dy] = moves[e.key], by = e.shiftKey ? bigStep : step, p = get();
      set({ x: clampToPlane(p.x + dx * by), y: clampToPlane(p.y + dy * by) });
      update();
    });
  }

  function toPlane(e: PointerEvent): Point {
    const matrix = svg.getScreenCTM();
    if (!matrix) return query;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(matrix.inverse());
    return { x: clampToPlane(p.x), y: clampToPlane(-p.y) };
  }

  function drag(start: PointerEvent, set: (p: Point) => void): void {
    svg.setPointerCapture(start.pointerId);
    set(toPlane(start));
    update();
    const move = (e: PointerEvent) => {
      if (e.pointerId !== start.pointerId) return;
      set(toPlane(e));
      update();
    };
    const end = (e: PointerEvent) => {
      if (e.pointerId !== start.pointerId) return;
      svg.removeEventListener('pointermove', move);
      svg.removeEventListener('pointerup', end);
      svg.removeEventListener('pointercancel', end);
    };
    svg.addEventListener('pointermove', move);
    svg.addEventListener('pointerup', end);
    svg.addEventListener('pointercancel', end);
  }

  attachPointer(queryNode.g, () => query, (p) => (query = p));
  // Pressing on the empty plane moves the query there (and keeps dragging it).
  background.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    queryNode.g.focus();
    drag(e, (p) => (query = p));
  });

  function removeKey(n: number): void {
    if (keys.length <= minKeys) return;
    keys.splice(n, 1);
    rebuildKeys();
    update();
  }

  scaleInput.addEventListener('input', () => {
    logScale = Number(scaleInput.value);
    update();
  });
  dimsSelect.addEventListener('change', () => {
    dims = Number(dimsSelect.value);
    for (const [n, key] of keys.entries())
      key.value = Array.from({ length: dims }, (_, d) => key.value[d] ?? (d === n % dims ? 1 : 0));
    rebuildKeys();
    update();
  });
  addButton.addEventListener('click', () => {
    if (keys.length >= maxKeys) return;
    const taken = (p: Point) => keys.some((k) => Math.hypot(k.at.x - p.x, k.at.y - p.y) < 0.3);
    const at = newKeySpots.find((p) => !taken(p)) ?? { x: 0, y: 0 };
    keys.push({ at: { ...at }, value: Array.from({ length: dims }, (_, d) => (d === keys.length % dims ? 1 : 0)) });
    rebuildKeys();
    update();
    keyNodes[keyNodes.length - 1].g.focus();
  });
  resetButton.addEventListener('click', () => {
    query = { ...defaultQuery };
    keys = defaultKeys.map((k) => ({ at: { ...k.at }, value: k.value.slice(0, dims) }));
    logScale = 0;
    rebuildKeys();
    update();
  });

  rebuildKeys();
  update();
}

/** One bar per number, growing right for positive and left for negative, with the number beside it. */
function valueBars(vector: number[], maxAbs: number): HTMLElement {
  return el('span', { class: 'value-bars' },
    ...vector.map((x) => {
      const fill = el('span', { class: x < 0 ? 'vbar-fill negative' : 'vbar-fill' });
      const share = Math.min(1, Math.abs(x) / maxAbs) * 50;
      fill.style.width = `${share}%`;
      fill.style.left = x < 0 ? `${50 - share}%` : '50%';
      return el('span', { class: 'vbar' }, el('span', { class: 'vbar-track', 'aria-hidden': 'true' }, fill), el('span', { class: 'vbar-number' }, formatNumber(x, 3)));
    }));
}
