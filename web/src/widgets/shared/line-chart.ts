// The page's one line chart, in SVG: a few series over a linear or logarithmic axis
// each way, lines told apart by dash pattern and a label at their end (not by colour
// alone), optional vertical markers, horizontal rules and highlighted points. It is
// drawn at the width it is given, so text keeps its size from 360 px to desktop.
// Users: the cost widget (log-log FLOPs against length, cost/cost.ts), the loss curves
// of live training and the Shakespeare model (loss-curve.ts), and the StreamingLLM
// figure's loss per position (streaming/streaming.ts).
import './line-chart.css';
import { observeWidth, svgEl } from '../../lib/dom';

export interface Tick {
  at: number;
  label?: string;               // a grid line without a label when absent
}

export interface Axis {
  title: string;
  domain: [number, number];
  log?: boolean;                // positions by the logarithm of the value
  /** The ticks for a plot this many pixels wide (x) or high (y). */
  ticks: (pixels: number) => Tick[];
}

export interface Series {
  name: string;                 // the label at its end (or in the legend)
  points: [number, number][];   // (x, y), x ascending
  className: string;            // its line style (line-chart.css), given to its line and its label
  id?: string;                  // data-series of its path, for tests
}

export interface Marker {
  x: number;
  y?: number;                   // a dot on the marker line, when given
  label: string;
}

export interface Rule {
  y: number;
  label: string;
}

export interface ChartSpec {
  label: string;                // accessible description, with the numbers that matter
  x: Axis;
  y: Axis;
  series: Series[];
  markers?: Marker[];           // vertical lines
  rules?: Rule[];               // horizontal lines
  dots?: { x: number; y: number; r?: number; className?: string }[];
}

/** The chart's size at a width: the plot's height and the margins around it. */
export interface ChartLayout {
  height: (width: number) => number;
  margin: { left: number; right: number; top: number; bottom: number };
  /** Below this width the end labels would sit on the lines: they move into a legend under the axis. */
  legendBelow: number;
}

const legendRow = 17;

export class LineChart {
  readonly root: HTMLElement;
  private spec: ChartSpec | null = null;
  private width = 0;

  constructor(private readonly layout: ChartLayout) {
    this.root = document.createElement('div');
    this.root.className = 'line-chart';
    observeWidth(this.root, (width) => {
      this.width = width;
      this.draw();
    });
  }

  setData(spec: ChartSpec): void {
    this.spec = spec;
    this.draw();
  }

  /** Draws nothing until the next setData. */
  clear(): void {
    this.spec = null;
    this.root.replaceChildren();
  }

  private draw(): void {
    const spec = this.spec;
    // Until the ResizeObserver has reported a width there is nothing to size to (and
    // reading clientWidth would force a layout of the whole page mid-update).
    if (!spec || !this.width) return;
    const width = Math.max(260, Math.min(760, this.width));
    const markers = (spec.markers ?? []).filter((marker) => marker.x >= spec.x.domain[0] && marker.x <= spec.x.domain[1]);
    const legend = width < this.layout.legendBelow;
    const legendHeight = legend ? 6 + legendRow * spec.series.length : 0;
    const plotHeight = this.layout.height(width);
    const height = plotHeight + legendHeight;
    const m = { ...this.layout.margin, bottom: this.layout.margin.bottom + legendHeight };
    const plotW = width - m.left - m.right, plotH = height - m.top - m.bottom;
    const scale = (axis: Axis, from: number, length: number, flip: boolean) => {
      const f = axis.log ? Math.log : (v: number) => v;
      const [a, b] = axis.domain.map(f);
      return (v: number) => from + (flip ? 1 - (f(v) - a) / (b - a) : (f(v) - a) / (b - a)) * length;
    };
    const sx = scale(spec.x, m.left, plotW, false), sy = scale(spec.y, m.top, plotH, true);

    const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': spec.label, class: 'line-chart-svg' });
    for (const tick of spec.y.ticks(plotH)) {
      const y = sy(tick.at);
      svg.append(svgEl('line', { x1: m.left, x2: width - m.right, y1: y, y2: y, class: 'chart-grid' }));
      if (tick.label !== undefined) svg.append(svgEl('text', { x: m.left - 5, y: y + 4, 'text-anchor': 'end', class: 'chart-tick' }, tick.label));
    }
    for (const tick of spec.x.ticks(plotW)) {
      const x = sx(tick.at);
      svg.append(svgEl('line', { x1: x, x2: x, y1: m.top, y2: m.top + plotH, class: 'chart-grid' }));
      // A label at the plot's right edge ends there, so that the chart's edge does not cut it.
      const anchor = x >= width - m.right - 1 ? 'end' : 'middle';
      if (tick.label !== undefined) svg.append(svgEl('text', { x, y: m.top + plotH + 14, 'text-anchor': anchor, class: 'chart-tick' }, tick.label));
    }
    // fill none here as well as in line-chart.css: an SVG shape fills black by default.
    svg.append(svgEl('rect', { x: m.left, y: m.top, width: plotW, height: plotH, fill: 'none', class: 'chart-frame' }));
    svg.append(svgEl('text', { x: m.left + plotW / 2, y: plotHeight - 6, 'text-anchor': 'middle', class: 'chart-axis-title' }, spec.x.title));
    // Above the frame, from its left edge: clear of the y axis's tick labels, which end left of it.
    svg.append(svgEl('text', { x: m.left, y: m.top - 5, class: 'chart-axis-title' }, spec.y.title));

    for (const rule of spec.rules ?? []) {
      svg.append(svgEl('line', { x1: m.left, x2: m.left + plotW, y1: sy(rule.y), y2: sy(rule.y), class: 'chart-rule' }));
      svg.append(svgEl('text', { x: m.left + plotW - 4, y: sy(rule.y) - 4, 'text-anchor': 'end', class: 'chart-rule-label' }, rule.label));
    }
    // Each marker's label beside its line, at the foot of the plot (the series' own labels
    // sit at their ends), one row up for each marker to its left, so that markers a few
    // pixels apart (or hugging the axis) keep labels of their own.
    [...markers].sort((a, b) => a.x - b.x).forEach((marker, row) => {
      // Right of its line, or left of it where the label (at about 6.8 px a character of
      // its 11 px bold type) would run past the chart's edge.
      const x = sx(marker.x), right = x > m.left + plotW * 0.6 || x + 4 + marker.label.length * 6.8 > width - 2;
      svg.append(svgEl('line', { x1: x, x2: x, y1: m.top, y2: m.top + plotH, class: 'chart-marker' }));
      svg.append(svgEl('text', {
        x: right ? x - 4 : x + 4, y: m.top + plotH - 6 - 14 * row, 'text-anchor': right ? 'end' : 'start',
        class: 'chart-marker-label', 'data-marker': String(marker.x),
      }, marker.label));
      if (marker.y !== undefined) svg.append(svgEl('circle', { cx: x, cy: sy(marker.y), r: 4.5, class: 'chart-marker-dot' }));
    });
    const drawn = spec.series.filter((s) => s.points.length > 0);
    for (const series of drawn) {
      const d = series.points.map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`).join('');
      svg.append(svgEl('path', { d, fill: 'none', class: `chart-line ${series.className}`, ...(series.id ? { 'data-series': series.id } : {}) }));
    }
    if (legend) {
      // One row per line under the axis title: a short stretch of its stroke, then its label.
      let y = plotHeight + 6;
      const row = (sample: SVGElement, label: string, labelClass: string) => {
        svg.append(sample, svgEl('text', { x: m.left + 34, y: y + 4, class: labelClass }, label));
        y += legendRow;
      };
      for (const series of spec.series)
        row(svgEl('line', { x1: m.left, x2: m.left + 26, y1: y, y2: y, class: `chart-line chart-legend-line ${series.className}` }), series.name, `chart-line-label ${series.className}`);
    } else {
      // Labels just past the end of each line (inside the plot), pushed apart when they would overlap.
      const ends = drawn.map((s) => ({ s, end: s.points[s.points.length - 1] })).sort((a, b) => sy(a.end[1]) - sy(b.end[1]));
      let last = -Infinity;
      for (const { s, end } of ends) {
        const y = Math.max(sy(end[1]) - 6, last + 13, m.top + 10);
        last = y;
        const x = Math.min(m.left + plotW - 4, sx(end[0]) + 4);
        const anchor = x > m.left + plotW * 0.8 ? 'end' : 'start';
        svg.append(svgEl('text', { x, y, 'text-anchor': anchor, class: `chart-line-label ${s.className}` }, s.name));
      }
    }
    for (const dot of spec.dots ?? []) {
      if (dot.x < spec.x.domain[0] || dot.x > spec.x.domain[1]) continue;
      svg.append(svgEl('circle', { cx: sx(dot.x), cy: sy(dot.y), r: dot.r ?? 3.5, class: dot.className ? `chart-dot ${dot.className}` : 'chart-dot' }));
    }
    this.root.replaceChildren(svg);
  }
}
