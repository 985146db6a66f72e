// Multi-head attention on the Shakespeare model, computed by the core as the reader
// types: layer 0's attention sublayer (lib/first-layer-core.ts, from the first screen's
// slice and a second one with v_proj and o_proj), shown as the formula writes it.
//
//   split     the shapes: q [Hq, T, dh], k and v [Hkv, T, dh] (grouped: each KV head
//             serves Hq / Hkv query heads)
//   heads     each query head's probabilities [T, T], one heatmap per head
//   concat    one position's head outputs side by side [Hq * dh], then @ W_O -> [D]
//   causality the same sublayer on the text with its last character changed: every
//             earlier position's output compared bit for bit, the last one's difference
//
// URL state: multi-head.text, multi-head.last (the replacement character), multi-head.at
// (the position whose concatenation is shown).
import './multi-head.css';
import { diverging, sequential } from '../../lib/colormap';
import { el, formatNumber, labelled, setStatus, svgEl } from '../../lib/dom';
import { markInvalid } from '../../lib/fields';
import { FirstLayerAttentionModel, FirstLayerError, FirstLayerSublayer, openFirstLayerAttention } from '../../lib/first-layer-core';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import type { UrlState } from '../../lib/url-state';
import { markUpdated } from '../shared/lesson-kit';
import { namedText, tokenLabel } from '../shared/token-text';

const defaultText = 'To be, or not to be: that is';
const cellPx = 12, groupGapPx = 4;  // a number's cell in the strips, and the gap between heads
const defaultLast = 'x';

/** Position t's label: "BOS" or its character, visible. */
const label = (s: FirstLayerSublayer, t: number) => (t === 0 ? 'BOS' : tokenLabel(s.characters[t - 1]));
const named = (s: FirstLayerSublayer, t: number) => (t === 0 ? '"BOS"' : namedText(s.characters[t - 1]));

/** Head h's probabilities as a heatmap's data. */
function headData(s: FirstLayerSublayer, h: number): HeatmapData {
  const T = s.T;
  const p = (r: number, c: number) => s.probabilities[(h * T + r) * T + c];
  return {
    rows: T,
    cols: T,
    value: p,
    allowed: (r, c) => c <= r,
    rowLabel: (r) => label(s, r),
    colLabel: (c) => label(s, c),
    scale: sequential(0, 1),
    domain: [0, 1],
    describe: (r, c) =>
      c <= r
        ? `head ${h}: query ${r} (${named(s, r)}) → key ${c} (${named(s, c)}): p = ${formatNumber(p(r, c))}`
        : `head ${h}: key ${c} comes after query ${r} (masked)`,
  };
}

/** The largest |a - b| over each position's D numbers, and whether they are the same bits. */
function positionChanges(a: Float32Array, b: Float32Array, T: number, D: number): { largest: number; same: boolean }[] {
  const out = [];
  for (let t = 0; t < T; t += 1) {
    let largest = 0, same = true;
    for (let i = t * D; i < (t + 1) * D; i += 1) {
      if (!Object.is(a[i], b[i])) same = false;  // -0 and 0 differ in their bits
      largest = Math.max(largest, Math.abs(a[i] - b[i]));
    }
    out.push({ largest, same });
  }
  return out;
}

/** A strip of cells, one per number, coloured by value (fill set on each cell: complete without a stylesheet). */
function strip(values: ArrayLike<number>, limit: number, groups: number, title: string): SVGSVGElement {
  const n = values.length, cell = cellPx, gap = groupGapPx;
  const per = n / groups;
  const width = n * cell + (groups - 1) * gap;
  const svg = svgEl('svg', { class: 'multi-head-strip', viewBox: `0 0 ${width} ${cell * 2}`, width, height: cell * 2, role: 'img', 'aria-label': title });
  const scale = diverging(limit);
  for (let i = 0; i < n; i += 1) {
    const x = i * cell + Math.floor(i / per) * gap;
    const rect = svgEl('rect', { x, y: 0, width: cell - 1, height: cell * 2, fill: scale(values[i]), stroke: 'none' });
    rect.append(svgEl('title', {}, `${i}: ${formatNumber(values[i], 3)}`));
    svg.append(rect);
  }
  return svg;
}

function largestMagnitude(values: ArrayLike<number>): number {
  let largest = 0;
  for (let i = 0; i < values.length; i += 1) largest = Math.max(largest, Math.abs(values[i]));
  return largest;
}

export async function mountMultiHead(root: HTMLElement, { state }: { state: UrlState }): Promise<void> {
  const model: FirstLayerAttentionModel = await openFirstLayerAttention();
  const { heads, kvHeads, headDim: dh, width: D } = model;
  const group = heads / kvHeads;

  const textInput = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', 'data-testid': 'multi-head-text' });
  textInput.value = state.get('text') ?? defaultText;
  const lastInput = el('input', { type: 'text', spellcheck: 'false', autocomplete: 'off', size: 3, 'data-testid': 'multi-head-last' });
  lastInput.value = state.get('last') ?? defaultLast;
  const atInput = el('input', { type: 'number', min: 0, step: 1, 'data-testid': 'multi-head-at' });
  const status = el('p', { class: 'status', 'data-testid': 'multi-head-status' });
  const timing = el('p', { class: 'update-time', 'data-testid': 'multi-head-timing' });
  const shapes = el('p', { class: 'multi-head-shapes', 'data-testid': 'multi-head-shapes' });
  const maps = Array.from({ length: heads }, (_, h) =>
    new Heatmap({ title: `Head ${h}`, rowAxis: 'query (character)', colAxis: 'key (character)', maxCellPx: 14, onSelectRow: (row) => follow(row) }));
  const headCaptions = maps.map((_, h) => el('p', { class: 'panel-label' }, `head ${h} · reads KV head ${Math.floor(h / group)}`));
  const concatTitle = el('h3', { class: 'view-subtitle', 'data-testid': 'multi-head-concat-title' });
  const concatHost = el('div', { class: 'multi-head-concat', 'data-testid': 'multi-head-concat' });
  const checkTitle = el('h3', { class: 'view-subtitle' }, 'The causality check, live');
  const checkCells = el('div', { class: 'multi-head-check-cells', 'data-testid': 'multi-head-check-cells' });
  const verdict = el('p', { class: 'multi-head-verdict', 'data-testid': 'multi-head-verdict', 'aria-live': 'polite' });

  root.append(
    el('div', { class: 'controls' },
      labelled('Text (edit it)', textInput, `at most ${model.maxCharacters} characters of the plays`),
      labelled('Follow position', atInput, 'its heads, concatenated, and W_O')),
    el('div', { class: 'status-row' }, status, timing),
    shapes,
    el('div', { class: 'multi-head-grid' }, ...maps.map((m, h) => el('div', { class: 'multi-head-panel' }, headCaptions[h], m.root))),
    concatTitle, concatHost,
    checkTitle,
    el('div', { class: 'controls' }, labelled('Change the last character to', lastInput, 'one character; the rest stays')),
    checkCells, verdict,
  );

  let shown: FirstLayerSublayer | null = null;
  let at: number | null = state.get('at') === null ? null : Number(state.get('at'));

  /** One position's heads side by side, and what W_O makes of them. */
  function drawConcat(s: FirstLayerSublayer): void {
    const t = at !== null && Number.isInteger(at) && at >= 0 && at < s.T ? at : s.T - 1;
    atInput.max = String(s.T - 1);
    atInput.value = String(t);
    for (const m of maps) m.highlightRow(t);
    const merged = s.merged.subarray(t * heads * dh, (t + 1) * heads * dh);
    const update = s.update.subarray(t * D, (t + 1) * D);
    const limit = Math.max(largestMagnitude(merged), largestMagnitude(update));
    // For tests: the numbers drawn, exactly.
    Object.assign(concatHost.dataset, { position: String(t), merged: JSON.stringify(Array.from(merged)), update: JSON.stringify(Array.from(update)) });
    concatTitle.textContent = `Position ${t}, ${named(s, t)}: ${heads} heads of ${dh} numbers, concatenated, then W_O`;
    const segments = el('div', { class: 'multi-head-segments', 'aria-hidden': 'true' },
      ...Array.from({ length: heads }, (_, h) => el('span', { style: `width:${dh * cellPx + (h < heads - 1 ? groupGapPx : 0)}px` }, `head ${h}`)));
    concatHost.replaceChildren(
      el('p', { class: 'multi-head-row-label' }, `concat(head 0, …, head ${heads - 1})  [${heads * dh}]`),
      el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'The concatenated heads' }, segments,
        strip(merged, limit, heads, `Position ${t}'s ${heads} head outputs side by side, ${heads * dh} numbers from ${formatNumber(Math.min(...merged), 3)} to ${formatNumber(Math.max(...merged), 3)}`)),
      el('p', { class: 'multi-head-row-label' }, `× W_O [${heads * dh}, ${D}]  =  what attention adds to position ${t}'s residual stream  [${D}]`),
      el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'The output projection' },
        strip(update, limit, 1, `Position ${t}'s attention output, ${D} numbers from ${formatNumber(Math.min(...update), 3)} to ${formatNumber(Math.max(...update), 3)}`)),
      el('p', { class: 'lesson-caption' }, `Colours run from red (−${formatNumber(limit, 2)}) through white (0) to blue (+${formatNumber(limit, 2)}); point at a cell for its value.`),
    );
  }

  /** The sublayer again with the last character replaced: earlier outputs the same bits, the last one not. */
  function drawCheck(s: FirstLayerSublayer): void {
    const replacement = [...lastInput.value];
    const last = s.characters[s.characters.length - 1];
    const problem = replacement.length !== 1 ? 'Type exactly one character to put in place of the last one.'
      : last === undefined ? 'The text is empty: there is no last character to change.'
        : replacement[0] === last ? `The text already ends in ${namedText(last)}: choose another character.` : null;
    markInvalid([lastInput], problem !== null && replacement.length !== 1);
    if (problem !== null) {
      checkCells.replaceChildren();
      verdict.dataset.holds = '';
      setStatus(verdict, problem, replacement.length !== 1 ? 'error' : 'info');
      return;
    }
    let other: FirstLayerSublayer;
    try {
      other = model.sublayer([...s.characters.slice(0, -1), replacement[0]].join(''));
    } catch (error) {
      markInvalid([lastInput]);
      checkCells.replaceChildren();
      verdict.dataset.holds = '';
      setStatus(verdict, error instanceof FirstLayerError ? error.message : String(error), 'error');
      return;
    }
    const changes = positionChanges(s.update, other.update, s.T, D);
    const earlier = changes.slice(0, -1), final = changes[changes.length - 1];
    const firstChanged = earlier.findIndex((c) => !c.same);
    const holds = firstChanged < 0 && !final.same;
    checkCells.replaceChildren(...changes.map((c, t) => el('span', {
      class: `check-cell ${c.same ? 'same' : 'changed'}`,
      title: `position ${t} (${named(s, t)}): ${c.same ? 'the same bits' : `changed, largest difference ${formatNumber(c.largest, 3)}`}`,
    }, c.same ? '=' : '≠')));
    verdict.dataset.holds = String(holds);
    verdict.dataset.firstChanged = String(firstChanged);
    verdict.dataset.lastChange = String(final.largest);
    const was = namedText(last), now = namedText(replacement[0]);
    setStatus(verdict, holds
      ? `Causality holds. With ${was} changed to ${now}, positions 0 to ${s.T - 2} (BOS and every earlier character) give exactly the same ${D} numbers, bit for bit; position ${s.T - 1}, the last, changed by up to ${formatNumber(final.largest, 3)}.`
      : firstChanged >= 0
        ? `Causality is broken: position ${firstChanged} changed by ${formatNumber(earlier[firstChanged].largest, 3)} when only the last character did.`
        : `Position ${s.T - 1}, the last, did not change either: the new character made no difference to its output.`);
  }

  function follow(row: number): void {
    at = row;
    state.set({ at: row });
    if (shown) drawConcat(shown);
  }

  function update(): void {
    const started = performance.now();
    let s: FirstLayerSublayer;
    try {
      s = model.sublayer(textInput.value);
    } catch (error) {
      markInvalid([textInput]);
      setStatus(status, `${error instanceof FirstLayerError ? error.message : String(error)}${shown ? ' Still showing the last text the model could read.' : ''}`, 'error');
      return;
    }
    markInvalid([textInput], false);
    shown = s;
    state.set({ text: textInput.value === defaultText ? null : textInput.value });
    setStatus(status, `${s.T} positions: BOS and ${s.characters.length} characters.`);
    shapes.textContent =
      `Split into heads: x [${s.T}, ${D}] → q [${heads} heads, ${s.T}, ${dh}], k and v [${kvHeads} KV heads, ${s.T}, ${dh}]; ` +
      `${Array.from({ length: kvHeads }, (_, g) => `heads ${Array.from({ length: group }, (_, i) => g * group + i).join(' and ')} read KV head ${g}`).join(', ')} ` +
      `(grouped-query attention).`;
    maps.forEach((m, h) => {
      m.setData(headData(s, h));
      // For tests: the exact matrix on screen, to compare with the whole checkpoint's forward.
      m.root.dataset.probabilities = JSON.stringify(Array.from({ length: s.T }, (_, r) =>
        Array.from(s.probabilities.subarray((h * s.T + r) * s.T, (h * s.T + r + 1) * s.T))));
    });
    drawConcat(s);
    drawCheck(s);
    markUpdated(root, timing, performance.now() - started);
  }

  textInput.addEventListener('input', update);
  lastInput.addEventListener('input', () => {
    state.set({ last: lastInput.value === defaultLast ? null : lastInput.value });
    if (shown) drawCheck(shown);
  });
  atInput.addEventListener('input', () => {
    const t = Number(atInput.value);
    if (!shown || !Number.isInteger(t) || t < 0 || t >= shown.T) {
      markInvalid([atInput]);
      return;
    }
    markInvalid([atInput], false);
    follow(t);
  });
  update();
}
