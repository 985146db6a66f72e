// RoPE, part c: which channels pair up under half_split and interleaved
// (found by asking the core's ropeRotate), and what running the tiny model's own
// (half_split) weights with interleaved pairing does to a head's probabilities.
import type { Core, RopePairing } from '../../lib/core';
import { diverging, sequential } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import { el, formatNumber, svgEl } from '../../lib/dom';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import { HeadChoice, headDim, Run, theta } from './rope-setup';

type Pairing = RopePairing;

export class RopePairings {
  readonly root: HTMLElement;
  private readonly ownMap = new Heatmap({ title: 'Probabilities, half split (the model\'s own)', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  private readonly swappedMap = new Heatmap({ title: 'Probabilities, interleaved (mismatched)', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  private readonly diffMap = new Heatmap({ title: 'Interleaved minus half split', rowAxis: 'query', colAxis: 'key', maxCellPx: 28 });
  private readonly readout = el('p', { class: 'lesson-readout', 'data-testid': 'rope-pairing-readout' });

  constructor(core: Core) {
    const diagram = el('div', { class: 'pairing-diagrams', 'data-testid': 'rope-pairing-diagram' });
    this.ownMap.root.dataset.testid = 'rope-own';
    this.swappedMap.root.dataset.testid = 'rope-swapped';
    this.diffMap.root.dataset.testid = 'rope-difference';
    this.root = el('section', { class: 'lesson-part', 'aria-labelledby': 'rope-part-c' },
      el('h3', { class: 'lesson-subtitle', id: 'rope-part-c' }, 'c. Half split or interleaved'),
      diagram,
      el('div', { class: 'panels compare-three' },
        el('div', {}, el('p', { class: 'panel-label' }, 'half split (the model\'s own)'), this.ownMap.root),
        el('div', {}, el('p', { class: 'panel-label' }, 'interleaved (mismatched)'), this.swappedMap.root),
        el('div', {}, el('p', { class: 'panel-label' }, 'interleaved − half split'), this.diffMap.root)),
      this.readout);
    // Which channel turns with which, found by asking the core: rotate the unit vector e_c
    // to position 1 and see which other channel it leaks into.
    const partners = (pairing: Pairing) =>
      Array.from({ length: headDim }, (_, c) => {
        const e = Array.from({ length: headDim }, (_, d) => (d === c ? 1 : 0));
        const r = core.ropeRotate({ vector: e, positions: [1], theta, pairing }).rotated[0];
        return r.findIndex((x, d) => d !== c && Math.abs(x) > 1e-12);
      });
    diagram.replaceChildren(...(['half_split', 'interleaved'] as Pairing[]).map((p) => pairingFigure(p, partners(p))));
  }

  render(r: Run, choice: HeadChoice): void {
    const L = choice.layer, h = choice.head, kv = choice.kvHead, T = r.ids.length;
    const { ownMap, swappedMap, diffMap, readout } = this;
    const own = r.own.layers![L].probabilities[0][h], swapped = r.swapped.layers![L].probabilities[0][h]; // [T][T]
    const causal = (row: number, col: number) => col <= row;
    const rowMax: number[] = [];
    let largest = { value: 0, row: 0, col: 0 };
    for (let row = 0; row < T; row++) {
      let m = 0;
      for (let col = 0; col <= row; col++) {
        const d = swapped[row][col] - own[row][col];
        m = Math.max(m, Math.abs(d));
        if (Math.abs(d) > Math.abs(largest.value)) largest = { value: d, row, col };
      }
      rowMax.push(m);
    }
    const probability = (p: number[][], name: string): HeatmapData => ({
      rows: T, cols: T, value: (a, b) => p[a][b], allowed: causal,
      rowLabel: String, colLabel: String, scale: sequential(0, 1), domain: [0, 1],
      describe: (a, b) => (causal(a, b) ? `${name}, query ${a} → key ${b}: p = ${formatNumber(p[a][b])}` : `query ${a} → key ${b}: masked (key after the query)`),
    });
    const limit = Math.abs(largest.value) || 1e-9;
    ownMap.setTitle(`Layer ${L}, head ${h}: probabilities with half split pairing (the model's own)`);
    ownMap.setData(probability(own, 'half split'));
    swappedMap.setTitle(`Layer ${L}, head ${h}: probabilities with interleaved pairing (mismatched)`);
    swappedMap.setData(probability(swapped, 'interleaved'));
    diffMap.setTitle(`Layer ${L}, head ${h}: interleaved minus half split`);
    diffMap.setData({
      rows: T, cols: T, value: (a, b) => swapped[a][b] - own[a][b], allowed: causal,
      rowLabel: String, colLabel: String, scale: tabulated(diverging(limit), -limit, limit), domain: [-limit, limit],
      describe: (a, b) => causal(a, b)
        ? `query ${a} → key ${b}: ${formatNumber(swapped[a][b])} − ${formatNumber(own[a][b])} = ${signed(swapped[a][b] - own[a][b])}`
        : `query ${a} → key ${b}: masked in both`,
    });

    // Position 0 is not rotated at all, so its q and k after RoPE agree exactly.
    const qr0 = maxAbsDiff(r.own.layers![L].q_rope[0][h][0], r.swapped.layers![L].q_rope[0][h][0]);
    const kr0 = maxAbsDiff(r.own.layers![L].k_rope[0][kv][0], r.swapped.layers![L].k_rope[0][kv][0]);
    const qr1 = maxAbsDiff(r.own.layers![L].q_rope[0][h][1], r.swapped.layers![L].q_rope[0][h][1]);
    readout.dataset.rowMax = JSON.stringify(rowMax);
    readout.dataset.max = String(Math.abs(largest.value));
    const exact = (x: number) => (x === 0 ? 'exactly 0' : formatNumber(x));
    readout.textContent =
      `Largest |difference| = ${formatNumber(Math.abs(largest.value))} (query ${largest.row}, key ${largest.col}). ` +
      `Row 0 differs by ${exact(rowMax[0])}: at position 0 every angle is 0, so neither pairing rotates anything ` +
      `(q and k after RoPE at position 0 differ by ${exact(Math.max(qr0, kr0))}; at position 1 q already differs by ${formatNumber(qr1)}). ` +
      `From row 1 on the mismatched pairing turns the wrong channels together and the weights move, by up to ${formatNumber(Math.max(...rowMax.slice(1)))} in a row. ` +
      `Blue cells (positive) gained weight under the mismatch, red cells (negative) lost it.`;
  }
}

/** Channels 0..7 as boxes, each pair joined by a labelled arc. */
function pairingFigure(pairing: Pairing, partner: number[]): HTMLElement {
  const box = 30, gap = 6, left = 6, top = 58, width = left * 2 + headDim * box + (headDim - 1) * gap;
  const cx = (ch: number) => left + ch * (box + gap) + box / 2;
  const pairList: [number, number][] = [];
  for (let ch = 0; ch < headDim; ch++) if (partner[ch] > ch) pairList.push([ch, partner[ch]]);
  const title = pairing === 'half_split' ? 'half split: Hugging Face Llama, this model' : 'interleaved: Meta\'s original code';
  const svg = svgEl('svg', { viewBox: `0 0 ${width} ${top + box + 6}`, class: 'pairing-svg', role: 'img',
    'aria-label': `${title}. Pairs: ${pairList.map(([a, b]) => `(${a}, ${b})`).join(', ')}` });
  for (const [n, [a, b]] of pairList.entries()) {
    // Half-split arcs all span four boxes: stagger their heights so they stay apart.
    const x1 = cx(a), x2 = cx(b), height = pairing === 'half_split' ? 18 + 10 * n : 22;
    svg.append(svgEl('path', { d: `M${x1} ${top} C${x1} ${top - height} ${x2} ${top - height} ${x2} ${top}`, class: `pair-arc pair-arc-${n}` }));
    svg.append(svgEl('text', { x: (x1 + x2) / 2, y: top - height * 0.75 - 2, 'text-anchor': 'middle', class: 'pair-arc-label' }, `${n}`));
  }
  for (let ch = 0; ch < headDim; ch++) {
    const x = left + ch * (box + gap);
    svg.append(svgEl('rect', { x, y: top, width: box, height: box, rx: 3, class: 'channel-box' }));
    svg.append(svgEl('text', { x: x + box / 2, y: top + box / 2 + 4, 'text-anchor': 'middle', class: 'channel-label' }, String(ch)));
  }
  return el('figure', { class: 'pairing-figure' }, svg as unknown as HTMLElement,
    el('figcaption', {}, el('strong', {}, title), el('br'), `pairs ${pairList.map(([a, b]) => `(${a}, ${b})`).join(' ')}; arc labels number the pairs, pair i turns by p·θ^(−i/4)`));
}

function maxAbsDiff(a: number[], b: number[]): number {
  return a.reduce((m, x, d) => Math.max(m, Math.abs(x - b[d])), 0);
}

function signed(x: number): string {
  return (x > 0 ? '+' : '') + formatNumber(x);
}
