// The attention-sink plot of a probe trace. For every layer, the mean weight
// the second half of the queries put on position 0 (sink_stats [L][Hq]): one dot
// per query head, heads 0 .. Hq-1 left to right inside the layer's column, the
// layer's mean over heads as a line with square marks, and what an even spread
// over the keys would give as a dashed reference. Heads far above the reference
// treat the first token as a sink.
//
// Hover over a dot, or focus the plot and use the keys, to read one head; a click
// or Enter picks it (the trace viewer shows it in the heatmaps). The numbers are
// also in a table under the plot. Drawn in SVG at the width it is given.
import './sink-plot.css';
import { el, formatNumber, observeWidth, svgEl, uid } from '../../lib/dom';
import { count } from '../../lib/words';

export interface SinkData {
  stats: number[][];                             // [L][Hq]: sink_stats
  layerMean: number[];                           // [L]: mean over the heads of each layer
  baseline: number | null;                       // even spread (probe.sinks.uniform_baseline); null when not recorded
  queries: { from: number; to: number } | null;  // the queries sink_stats averages, when recorded
}

export interface SinkPlotOptions {
  /** data-testid prefix: "trace-viewer" gives trace-viewer-sink-plot, trace-viewer-sink-baseline, ... */
  testPrefix: string;
  /** A head was picked by click or Enter. */
  onSelect(layer: number, head: number): void;
}

interface HeadRef {
  layer: number;
  head: number;
}

/** Where everything goes at one drawn width. */
interface Frame {
  width: number;
  height: number;
  left: number;
  top: number;
  plotW: number;
  plotH: number;
  band: number;                  // width of one layer's column
  dotRadius: number;
  yTop: number;                  // the value at the top of the y axis
  x(layer: number, head: number): number;
  y(value: number): number;
}


const margin = { left: 46, right: 14, top: 24, bottom: 40 };
// Closest a pointer must come to a dot's centre to read it, in px.
const hitRadius = 14;

// The y axis ends at the first of these tops that holds every value (and the
// reference), so small sinks are not squashed against 0, with ticks every `step`.
const yAxes = [
  { top: 0.1, step: 0.02 },
  { top: 0.2, step: 0.05 },
  { top: 0.5, step: 0.1 },
  { top: 1, step: 0.2 },
];

function yAxisFor(data: SinkData): { top: number; step: number } {
  let highest = data.baseline ?? 0;
  for (const heads of data.stats) for (const p of heads) highest = Math.max(highest, p);
  return yAxes.find((axis) => highest <= axis.top) ?? yAxes[yAxes.length - 1];
}

function frameFor(availableWidth: number, data: SinkData): Frame {
  const width = Math.max(280, Math.min(760, availableWidth));
  const height = Math.round(Math.max(220, Math.min(300, width * 0.42)));
  const plotW = width - margin.left - margin.right, plotH = height - margin.top - margin.bottom;
  const L = data.stats.length, H = data.stats[0].length;
  const band = plotW / L;
  const spread = band * 0.6; // the heads of a layer share the middle 60% of its column
  const yTop = yAxisFor(data).top;
  return {
    width, height, plotW, plotH, band, yTop,
    left: margin.left,
    top: margin.top,
    dotRadius: Math.max(1.8, Math.min(4, spread / H)),
    x: (layer, head) => margin.left + (layer + 0.5) * band + (H > 1 ? (head / (H - 1) - 0.5) * spread : 0),
    y: (value) => margin.top + (1 - Math.min(value, yTop) / yTop) * plotH,
  };
}

/** "0.056" for ordinary shares, an exponent for tiny ones. */
function share(value: number): string {
  return formatNumber(value, 3);
}

export class SinkPlot {
  readonly root: HTMLElement;
  private readonly plot: SVGSVGElement;
  private readonly readout: HTMLElement;
  private readonly legend = el('ul', { class: 'sink-legend' });
  private readonly tableHost: HTMLElement;
  private readonly pointerRing = svgEl('circle', { class: 'sink-ring pointer', r: 0, visibility: 'hidden' });
  private readonly selectedRing = svgEl('circle', { class: 'sink-ring selected', r: 0, visibility: 'hidden' });
  private data: SinkData | null = null;
  private frame: Frame | null = null;
  private width = 0;
  private focus: HeadRef = { layer: 0, head: 0 };
  private pointer: HeadRef | null = null;       // the head the ring and readout are on
  private selected: HeadRef | null = null;      // the head shown in the heatmaps

  constructor(private readonly options: SinkPlotOptions) {
    const id = options.testPrefix;
    const readoutId = uid('sink-readout');
    this.plot = svgEl('svg', {
      class: 'sink-plot-svg',
      tabindex: 0,
      role: 'application',
      'aria-roledescription': 'strip plot',
      'aria-describedby': readoutId,
      'data-testid': `${id}-sink-svg`,
    });
    this.readout = el('p', { id: readoutId, class: 'sink-readout', 'aria-live': 'polite', 'data-testid': `${id}-sink-readout` });
    this.tableHost = el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': 'Attention sinks as a table', 'data-testid': `${id}-sink-table` });
    this.root = el(
      'figure',
      { class: 'sink-plot', 'data-testid': `${id}-sink-plot` },
      this.plot,
      this.legend,
      this.readout,
      el('details', { class: 'sink-table-details' }, el('summary', {}, 'The plot as a table'), this.tableHost),
    );
    this.plot.addEventListener('pointermove', (e) => this.point(this.headAt(e)));
    this.plot.addEventListener('pointerleave', () => this.point(document.activeElement === this.plot ? this.focus : null));
    this.plot.addEventListener('click', (e) => {
      const hit = this.headAt(e);
      if (hit) this.pick(hit);
    });
    this.plot.addEventListener('keydown', (e) => this.onKey(e));
    this.plot.addEventListener('focus', () => this.point(this.focus));
    this.plot.addEventListener('blur', () => this.point(null));
    observeWidth(this.root, (width) => {
      this.width = width;
      this.draw();
    });
  }

  show(data: SinkData): void {
    this.data = data;
    this.focus = this.clamp(this.focus);
    this.selected = this.selected && this.clamp(this.selected);
    this.pointer = null;
    this.plot.setAttribute('aria-label', describePlot(data));
    this.legend.replaceChildren(...legendItems(data));
    this.tableHost.replaceChildren(sinkTable(data));
    this.readout.textContent = 'Hover over a dot, or focus the plot and use the arrow keys, to read one head; click it or press Enter to show it in the heatmaps.';
    this.draw();
  }

  /** Rings the head the heatmaps show (the reader may have picked it there). */
  select(layer: number, head: number): void {
    if (!this.data) return;
    this.selected = this.clamp({ layer, head });
    this.focus = this.selected;
    this.placeRings();
  }

  private clamp(ref: HeadRef): HeadRef {
    const stats = this.data!.stats;
    const layer = Math.min(stats.length - 1, Math.max(0, ref.layer));
    return { layer, head: Math.min(stats[layer].length - 1, Math.max(0, ref.head)) };
  }

  // ---------------------------------------------------------------- drawing

  private draw(): void {
    const data = this.data;
    // Until the ResizeObserver reports a width (the section may still be hidden) there is nothing to size to.
    if (!data || !this.width) return;
    const f = frameFor(this.width, data);
    this.frame = f;
    this.plot.setAttribute('width', String(f.width));
    this.plot.setAttribute('height', String(f.height));
    this.plot.setAttribute('viewBox', `0 0 ${f.width} ${f.height}`);
    this.plot.replaceChildren(
      ...yAxis(f, yAxisFor(data).step),
      ...layerAxis(f, data.stats.length),
      ...(data.baseline === null ? [] : baselineLine(f, data.baseline, this.options.testPrefix)),
      ...headDots(f, data.stats),
      ...meanLine(f, data.layerMean, this.options.testPrefix),
      this.selectedRing,
      this.pointerRing,
    );
    this.placeRings();
  }

  private placeRings(): void {
    this.placeRing(this.selectedRing, this.selected);
    this.placeRing(this.pointerRing, this.pointer);
  }

  private placeRing(ring: SVGCircleElement, ref: HeadRef | null): void {
    const f = this.frame, data = this.data;
    if (!f || !data || !ref) {
      ring.setAttribute('visibility', 'hidden');
      return;
    }
    ring.setAttribute('cx', f.x(ref.layer, ref.head).toFixed(1));
    ring.setAttribute('cy', f.y(data.stats[ref.layer][ref.head]).toFixed(1));
    ring.setAttribute('r', (f.dotRadius + 3).toFixed(1));
    ring.setAttribute('visibility', 'visible');
  }

  // ---------------------------------------------------------------- reading one head

  /** The dot nearest the pointer, within hitRadius, or null. */
  private headAt(e: MouseEvent): HeadRef | null {
    const f = this.frame, data = this.data;
    if (!f || !data) return null;
    const rect = this.plot.getBoundingClientRect();
    const x = ((e.clientX - rect.left) * f.width) / rect.width, y = ((e.clientY - rect.top) * f.height) / rect.height;
    const column = Math.floor((x - f.left) / f.band);
    let best: HeadRef | null = null, bestDistance = hitRadius * hitRadius;
    for (let layer = Math.max(0, column - 1); layer <= Math.min(data.stats.length - 1, column + 1); layer++)
      for (let head = 0; head < data.stats[layer].length; head++) {
        const distance = (f.x(layer, head) - x) ** 2 + (f.y(data.stats[layer][head]) - y) ** 2;
        if (distance < bestDistance) [best, bestDistance] = [{ layer, head }, distance];
      }
    return best;
  }

  /** Puts the black ring and the readout on one head (null hides the ring, keeping the last readout). */
  private point(ref: HeadRef | null): void {
    this.pointer = ref;
    this.placeRing(this.pointerRing, ref);
    if (ref && this.data) this.readout.textContent = describeHead(this.data, ref, this.selected);
  }

  private pick(ref: HeadRef): void {
    this.focus = ref;
    this.selected = ref;
    this.options.onSelect(ref.layer, ref.head);
    this.point(ref);
    this.placeRings();
  }

  // Left/Right: the neighbouring dot (heads run left to right, then on into the next layer).
  // Up/Down: the next higher or lower dot of the same layer. PageUp/PageDown: the same head
  // one layer on or back. Home/End: the first and the last head. Enter or Space picks.
  private onKey(e: KeyboardEvent): void {
    const data = this.data;
    if (!data) return;
    const L = data.stats.length, H = data.stats[0].length;
    const index = this.focus.layer * H + this.focus.head;
    const at = (i: number): HeadRef => {
      const clamped = Math.min(L * H - 1, Math.max(0, i));
      return { layer: Math.floor(clamped / H), head: clamped % H };
    };
    let next: HeadRef;
    if (e.key === 'ArrowRight') next = at(index + 1);
    else if (e.key === 'ArrowLeft') next = at(index - 1);
    else if (e.key === 'ArrowUp') next = verticalNeighbour(data.stats, this.focus, +1);
    else if (e.key === 'ArrowDown') next = verticalNeighbour(data.stats, this.focus, -1);
    else if (e.key === 'PageUp') next = this.clamp({ layer: this.focus.layer + 1, head: this.focus.head });
    else if (e.key === 'PageDown') next = this.clamp({ layer: this.focus.layer - 1, head: this.focus.head });
    else if (e.key === 'Home') next = at(0);
    else if (e.key === 'End') next = at(L * H - 1);
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.pick(this.focus);
      return;
    } else return;
    e.preventDefault();
    this.focus = next;
    this.point(next);
  }
}

/** The head of the same layer whose value is the next above (direction +1) or below (-1) this one's; itself at the end. */
function verticalNeighbour(stats: number[][], from: HeadRef, direction: 1 | -1): HeadRef {
  const heads = stats[from.layer];
  // Heads in the order a reader sees them from bottom to top; ties keep head order.
  const order = heads.map((p, head) => ({ p, head })).sort((a, b) => a.p - b.p || a.head - b.head);
  const at = order.findIndex((entry) => entry.head === from.head);
  const next = order[Math.min(order.length - 1, Math.max(0, at + direction))];
  return { layer: from.layer, head: next.head };
}

// ---------------------------------------------------------------- pieces of the SVG

function yAxis(f: Frame, step: number): SVGElement[] {
  const parts: SVGElement[] = [];
  const ticks = Math.round(f.yTop / step);
  for (let i = 0; i <= ticks; i++) {
    const value = i * step, y = f.y(value);
    parts.push(
      svgEl('line', { x1: f.left, x2: f.left + f.plotW, y1: y, y2: y, class: 'sink-grid' }),
      svgEl('text', { x: f.left - 5, y: y + 4, 'text-anchor': 'end', class: 'sink-tick' }, String(Number(value.toFixed(2)))),
    );
  }
  parts.push(
    svgEl('rect', { x: f.left, y: f.top, width: f.plotW, height: f.plotH, class: 'sink-frame' }),
    svgEl('text', { x: 4, y: 13, class: 'sink-axis-title' }, 'mean weight on position 0'),
  );
  return parts;
}

function layerAxis(f: Frame, layers: number): SVGElement[] {
  const parts: SVGElement[] = [];
  // Every layer's number when columns are wide enough, else every 2nd, 5th, ...
  const every = [1, 2, 5, 10].find((n) => f.band * n >= 18) ?? 20;
  for (let layer = 0; layer < layers; layer++) {
    const x = f.left + (layer + 0.5) * f.band;
    if (layer > 0) {
      const edge = f.left + layer * f.band;
      parts.push(svgEl('line', { x1: edge, x2: edge, y1: f.top, y2: f.top + f.plotH, class: 'sink-grid' }));
    }
    if (layer % every === 0) parts.push(svgEl('text', { x, y: f.top + f.plotH + 14, 'text-anchor': 'middle', class: 'sink-tick' }, String(layer)));
  }
  parts.push(svgEl('text', { x: f.left + f.plotW / 2, y: f.height - 6, 'text-anchor': 'middle', class: 'sink-axis-title' }, 'layer'));
  return parts;
}

function baselineLine(f: Frame, baseline: number, testPrefix: string): SVGElement[] {
  const y = f.y(baseline);
  return [
    svgEl('line', { x1: f.left, x2: f.left + f.plotW, y1: y, y2: y, class: 'sink-baseline', 'data-testid': `${testPrefix}-sink-baseline`, 'data-value': String(baseline) }),
    svgEl('text', { x: f.left + f.plotW - 4, y: y - 5, 'text-anchor': 'end', class: 'sink-baseline-label' }, `even spread ${share(baseline)}`),
  ];
}

function headDots(f: Frame, stats: number[][]): SVGElement[] {
  return stats.flatMap((heads, layer) =>
    heads.map((p, head) =>
      svgEl('circle', {
        cx: f.x(layer, head).toFixed(1),
        cy: f.y(p).toFixed(1),
        r: f.dotRadius,
        class: 'sink-dot',
        'data-layer': layer,
        'data-head': head,
        'data-value': String(p),
      }),
    ),
  );
}

function meanLine(f: Frame, layerMean: number[], testPrefix: string): SVGElement[] {
  const centre = (layer: number) => f.left + (layer + 0.5) * f.band;
  const d = layerMean.map((p, layer) => `${layer ? 'L' : 'M'}${centre(layer).toFixed(1)} ${f.y(p).toFixed(1)}`).join('');
  const side = 7;
  return [
    svgEl('path', { d, class: 'sink-mean', 'data-testid': `${testPrefix}-sink-mean`, 'data-values': JSON.stringify(layerMean) }),
    ...layerMean.map((p, layer) =>
      svgEl('rect', { x: (centre(layer) - side / 2).toFixed(1), y: (f.y(p) - side / 2).toFixed(1), width: side, height: side, class: 'sink-mean-mark' }),
    ),
  ];
}

// ---------------------------------------------------------------- words and the table

function queriesText(data: SinkData): string {
  return data.queries ? `queries ${data.queries.from} to ${data.queries.to}` : 'the second half of the queries';
}

function describeHead(data: SinkData, ref: HeadRef, selected: HeadRef | null): string {
  const p = data.stats[ref.layer][ref.head];
  const shown = selected && selected.layer === ref.layer && selected.head === ref.head ? ' Shown in the heatmaps.' : '';
  return (
    `Layer ${ref.layer}, head ${ref.head}: ${queriesText(data)} put ${share(p)} of their weight on position 0 on average ` +
    `(layer mean ${share(data.layerMean[ref.layer])}` +
    (data.baseline === null ? ').' : `; an even spread gives ${share(data.baseline)}, so this is ${(p / data.baseline).toFixed(1)} times that).`) +
    shown
  );
}

/** The plot's accessible name: what it shows and the numbers that matter. */
function describePlot(data: SinkData): string {
  const L = data.stats.length, H = data.stats[0].length;
  const low = data.layerMean.indexOf(Math.min(...data.layerMean)), high = data.layerMean.indexOf(Math.max(...data.layerMean));
  const above = data.baseline === null ? 0 : data.stats.flat().filter((p) => p > data.baseline!).length;
  return (
    `Attention sinks, ${count(L, 'layer')} by ${count(H, 'query head')}: the mean weight ${queriesText(data)} put on position 0. ` +
    `Layer means run from ${share(data.layerMean[low])} (layer ${low}) to ${share(data.layerMean[high])} (layer ${high})` +
    (data.baseline === null ? '. ' : `; an even spread would give ${share(data.baseline)}, and ${above} of the ${count(L * H, 'head')} ${above === 1 ? 'is' : 'are'} above it. `) +
    'Arrow keys move between heads, Page Up and Page Down between layers, Enter shows the head in the heatmaps. The table below lists every value.'
  );
}

function swatch(...shapes: SVGElement[]): SVGSVGElement {
  const icon = svgEl('svg', { viewBox: '0 0 22 12', width: 22, height: 12, 'aria-hidden': 'true' });
  icon.append(...shapes);
  return icon;
}

function legendItems(data: SinkData): HTMLElement[] {
  const items = [
    el('li', {}, swatch(svgEl('circle', { cx: 11, cy: 6, r: 3.5, class: 'sink-dot' })), 'one query head (heads left to right in each layer)'),
    el('li', {}, swatch(svgEl('line', { x1: 0, x2: 22, y1: 6, y2: 6, class: 'sink-mean' }), svgEl('rect', { x: 7.5, y: 2.5, width: 7, height: 7, class: 'sink-mean-mark' })), 'mean over the layer’s heads'),
  ];
  if (data.baseline !== null)
    items.push(el('li', {}, swatch(svgEl('line', { x1: 0, x2: 22, y1: 6, y2: 6, class: 'sink-baseline' })), `even spread over the keys (${share(data.baseline)})`));
  items.push(el('li', {}, swatch(svgEl('circle', { cx: 11, cy: 6, r: 4.5, class: 'sink-ring selected' })), 'the head shown in the heatmaps'));
  return items;
}

function sinkTable(data: SinkData): HTMLTableElement {
  const H = data.stats[0].length;
  const head = el('tr', {}, el('th', { scope: 'col' }, 'layer'), el('th', { scope: 'col' }, 'mean'));
  for (let h = 0; h < H; h++) head.append(el('th', { scope: 'col' }, `head ${h}`));
  const body = el('tbody');
  data.stats.forEach((heads, layer) => {
    const row = el('tr', {}, el('th', { scope: 'row' }, String(layer)), el('td', {}, share(data.layerMean[layer])));
    for (const p of heads) row.append(el('td', {}, share(p)));
    body.append(row);
  });
  return el(
    'table',
    { class: 'data sink-table' },
    el(
      'caption',
      {},
      `Mean weight ${queriesText(data)} put on position 0, per layer and query head` +
        (data.baseline === null ? '.' : `; an even spread would give ${share(data.baseline)}.`),
    ),
    el('thead', {}, head),
    body,
  );
}
