// One followed query row of one head: the weight it puts on every source
// position (a bar chart), and, when the run carries value vectors, what each
// source's value vector adds to the head's output:
//   output[t] = sum_s p[t, s] * v[g(h), s]      p: [S], v[g(h)]: [S, dh]
// Shared by the attention explorer and the trace viewer.
import { diverging, forbiddenFill, forbiddenHatch } from '../../lib/colormap';
import { tabulated, wantsLightText } from '../../lib/color-table';
import { el, formatNumber, svgEl, uid } from '../../lib/dom';

export interface FollowedRow {
  layer: number;
  head: number;
  kvHead: number;
  query: number;              // t, the receiving position
  weights: number[];          // p[t, s] for s = 0 .. S-1 (exactly 0 for s > t)
  sourceLabels: string[];     // per source position, e.g. "id 3" or a token's text
  /** Present when the run kept what the head mixed (the live explorer, not a trace file). */
  mixing?: {
    values: number[][];       // v of KV head g(h): [S, dh]
    output: number[];         // the core's head output at t: [dh]
  };
}

// ---------------------------------------------------------------- weights

const chart = { width: 360, height: 170, left: 34, right: 6, top: 14, bottom: 34 };

/** The row's weights as bars over key positions; keys the mask removes are hatched. */
export function weightChart(row: FollowedRow): SVGSVGElement {
  const { width, height, left, right, top, bottom } = chart;
  const S = row.weights.length;
  const plotW = width - left - right, plotH = height - top - bottom;
  const slot = plotW / S;
  const y = (p: number) => top + plotH * (1 - p);
  // The y axis stays [0, 1] for every row, so bar heights compare across rows and heads.
  const best = row.weights.reduce((b, p, s) => (p > row.weights[b] ? s : b), 0);
  const root = svgEl('svg', {
    class: 'weight-chart',
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label':
      `Weights of query ${row.query} over keys 0 to ${row.query}; the largest is ${formatNumber(row.weights[best])} on key ${best}.` +
      (row.query < S - 1 ? ` Keys ${row.query + 1} to ${S - 1} are masked.` : ''),
  });

  const patternId = uid('masked-bars');
  const pattern = svgEl('pattern', { id: patternId, width: 6, height: 6, patternUnits: 'userSpaceOnUse' });
  pattern.append(svgEl('rect', { width: 6, height: 6, fill: forbiddenFill }), svgEl('path', { d: 'M0 6L6 0', stroke: forbiddenHatch }));
  const defs = svgEl('defs', {});
  defs.append(pattern);
  root.append(defs);

  for (const tick of [0, 0.5, 1]) {
    root.append(
      svgEl('line', { x1: left, x2: width - right, y1: y(tick), y2: y(tick), class: tick === 0 ? 'axis' : 'grid' }),
      svgEl('text', { x: left - 4, y: y(tick) + 3, 'text-anchor': 'end' }, String(tick)),
    );
  }
  const labelEvery = Math.max(1, Math.ceil(14 / slot));
  for (let s = 0; s < S; s++) {
    const x = left + s * slot;
    if (s > row.query) {
      const masked = svgEl('rect', { x, y: top, width: slot, height: plotH, fill: `url(#${patternId})`, opacity: 0.55 });
      masked.append(svgEl('title', {}, `key ${s}: masked, it comes after query ${row.query} (weight 0)`));
      root.append(masked);
    } else {
      const p = row.weights[s];
      const bar = svgEl('rect', { x: x + slot * 0.15, y: y(p), width: slot * 0.7, height: plotH * p, class: 'bar' });
      bar.append(svgEl('title', {}, `key ${s} (${row.sourceLabels[s]}): p = ${formatNumber(p)}`));
      root.append(bar);
      if (slot >= 26) root.append(svgEl('text', { x: x + slot / 2, y: y(p) - 3, 'text-anchor': 'middle', class: 'value' }, p.toFixed(2)));
    }
    if (s % labelEvery === 0) root.append(svgEl('text', { x: x + slot / 2, y: top + plotH + 12, 'text-anchor': 'middle' }, String(s)));
  }
  root.append(
    svgEl('text', { x: left + plotW / 2, y: height - 4, 'text-anchor': 'middle', class: 'axis-title' }, 'key position'),
    svgEl('text', { x: 10, y: top + plotH / 2, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 10 ${top + plotH / 2})` }, 'weight'),
  );
  return root;
}

/** The readable keys of the row with their weights, for when no value vectors are known. */
export function weightTable(row: FollowedRow): HTMLTableElement {
  const body = el('tbody');
  for (let s = 0; s <= row.query; s++)
    body.append(el('tr', {}, el('th', { scope: 'row' }, String(s)), el('td', {}, row.sourceLabels[s]), el('td', {}, formatNumber(row.weights[s]))));
  return el(
    'table',
    { class: 'data follow-table' },
    el('caption', {}, `Query ${row.query}: weight on each key it may read`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'key'), el('th', { scope: 'col' }, 'token'), el('th', { scope: 'col' }, `p[${row.query}, s]`))),
    body,
  );
}

// ---------------------------------------------------------------- contributions

/** sum_s weights[s] * values[s]: [dh]. Summed in key order, as the core does. */
export function mixValues(weights: number[], values: number[][], upTo: number): number[] {
  const out = new Array<number>(values[0].length).fill(0);
  for (let s = 0; s <= upTo; s++) for (let d = 0; d < out.length; d++) out[d] += weights[s] * values[s][d];
  return out;
}

/**
 * One row per readable key: its weight and p[t, s] * v[s] for every channel;
 * then the sum computed here, the head output the core returned, and their gap.
 */
export function contributionTable(row: FollowedRow, mixing: NonNullable<FollowedRow['mixing']>): HTMLTableElement {
  const t = row.query;
  const dh = mixing.output.length;
  const parts = Array.from({ length: t + 1 }, (_, s) => mixing.values[s].map((v) => row.weights[s] * v));
  const sum = mixValues(row.weights, mixing.values, t);
  const gap = sum.map((value, d) => Math.abs(value - mixing.output[d]));
  const limit = Math.max(1e-12, ...parts.flat().map(Math.abs), ...mixing.output.map(Math.abs));
  const tint = tabulated(diverging(limit), -limit, limit);

  const channelHeads = Array.from({ length: dh }, (_, d) => el('th', { scope: 'col' }, `ch ${d}`));
  const head = el(
    'thead',
    {},
    el('tr', {}, el('td', { colspan: 3 }), el('th', { scope: 'colgroup', colspan: dh }, `p[${t}, s] × v[${row.kvHead}, s]: what key s adds, per channel`)),
    el('tr', {}, el('th', { scope: 'col' }, 'key s'), el('th', { scope: 'col' }, 'token'), el('th', { scope: 'col' }, `p[${t}, s]`), ...channelHeads),
  );
  const body = el('tbody');
  parts.forEach((part, s) => {
    const cells = part.map((value, d) => {
      const cell = el('td', { title: `${formatNumber(row.weights[s])} × ${formatNumber(mixing.values[s][d])} = ${formatNumber(value)}` }, formatNumber(value));
      cell.style.background = tint(value);
      if (wantsLightText(tint(value))) cell.classList.add('on-dark');
      return cell;
    });
    body.append(el('tr', {}, el('th', { scope: 'row' }, String(s)), el('td', {}, row.sourceLabels[s]), el('td', {}, formatNumber(row.weights[s])), ...cells));
  });
  const totalRow = (label: string, values: string[], cls: string) =>
    el('tr', { class: cls }, el('th', { scope: 'row', colspan: 3 }, label), ...values.map((v) => el('td', {}, v)));
  const foot = el(
    'tfoot',
    {},
    totalRow('sum over keys (added up here)', sum.map((v) => formatNumber(v)), 'sum'),
    totalRow(`head ${row.head} output (from the core)`, mixing.output.map((v) => formatNumber(v)), 'core'),
    totalRow('|difference|', gap.map((v) => (v === 0 ? '0' : v.toExponential(1))), 'gap'),
  );
  return el(
    'table',
    { class: 'data contributions' },
    el('caption', {}, `Layer ${row.layer}, head ${row.head}, query ${t}: each key's share of the head output`),
    head,
    body,
    foot,
  );
}

/** The largest |sum - core output| over channels, for the sentence under the table. */
export function largestGap(row: FollowedRow, mixing: NonNullable<FollowedRow['mixing']>): number {
  const sum = mixValues(row.weights, mixing.values, row.query);
  return Math.max(...sum.map((value, d) => Math.abs(value - mixing.output[d])));
}
