// A log-log line chart in SVG for cost: a few series over powers of two on x,
// decades on y, lines told apart by dash pattern and a label at their end (not by
// colour alone), optional vertical markers and highlighted points. It is drawn at
// the width it is given, so text keeps its size from 360 px to desktop. Below
// legendBelow px the labels would sit on the lines (a label is a third of the plot
// wide there), so they move into a legend under the axis instead.
import { observeWidth, svgEl } from '../../lib/dom';
import { powerOfTen } from './lesson-kit';

export interface Series {
  name: string;
  points: [number, number][];   // (x, y), x ascending, y > 0
  className: string;            // line style, from lessons.css
}

export interface Marker {
  x: number;
  y?: number;                   // a dot on the marker line, when given
  label: string;
}

export interface ChartSpec {
  label: string;                // accessible description, with the numbers that matter
  xLabel: string;
  yLabel: string;
  xDomain: [number, number];
  series: Series[];
  markers: Marker[];
  dots: { x: number; y: number }[];
}


/** 131072 -> "128K". */
export function shortCount(x: number): string {
  if (x >= 1048576 && x % 1048576 === 0) return `${x / 1048576}M`;
  if (x >= 1024 && x % 1024 === 0) return `${x / 1024}K`;
  return String(Math.round(x));
}

const legendBelow = 520;
const legendRow = 17;

export class LogChart {
  readonly root: HTMLElement;
  private spec: ChartSpec | null = null;
  private width = 0;

  constructor() {
    this.root = document.createElement('div');
    this.root.className = 'log-chart';
    observeWidth(this.root, (width) => {
      this.width = width;
      this.draw();
    });
  }

  setData(spec: ChartSpec): void {
    this.spec = spec;
    this.draw();
  }

  private draw(): void {
    const spec = this.spec;
    // Until the ResizeObserver has reported a width there is nothing to size to (and
    // reading clientWidth would force a layout of the whole page mid-update).
    if (!spec || !this.width) return;
    const width = Math.max(260, Math.min(760, this.width));
    const markers = spec.markers.filter((marker) => marker.x >= spec.xDomain[0] && marker.x <= spec.xDomain[1]);
    const legend = width < legendBelow;
    const legendHeight = legend ? 6 + legendRow * (spec.series.length + markers.length) : 0;
    const plotHeight = Math.round(Math.max(230, Math.min(340, width * 0.55)));
    const height = plotHeight + legendHeight;
    const m = { left: 50, right: 14, top: 22, bottom: 40 + legendHeight };
    const plotW = width - m.left - m.right, plotH = height - m.top - m.bottom;

    const ys = spec.series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => y > 0);
    const lo = Math.floor(Math.log10(Math.min(...ys))), hi = Math.ceil(Math.log10(Math.max(...ys)));
    const [x0, x1] = spec.xDomain.map(Math.log2);
    const sx = (x: number) => m.left + ((Math.log2(x) - x0) / (x1 - x0)) * plotW;
    const sy = (y: number) => m.top + (1 - (Math.log10(y) - lo) / Math.max(1, hi - lo)) * plotH;

    const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': spec.label, class: 'log-chart-svg' });
    // Grid and ticks: every decade on y (every other when crowded), every power of two on x
    // (every other below 520 px).
    const yEvery = hi - lo > 7 ? 2 : 1;
    for (let e = lo; e <= hi; e += yEvery) {
      const y = sy(10 ** e);
      svg.append(svgEl('line', { x1: m.left, x2: width - m.right, y1: y, y2: y, class: 'chart-grid' }));
      svg.append(svgEl('text', { x: m.left - 5, y: y + 4, 'text-anchor': 'end', class: 'chart-tick' }, powerOfTen(e)));
    }
    const xEvery = width < 520 ? 2 : 1;
    for (let e = Math.ceil(x0), i = 0; e <= x1; e++, i++) {
      const x = sx(2 ** e);
      svg.append(svgEl('line', { x1: x, x2: x, y1: m.top, y2: m.top + plotH, class: 'chart-grid' }));
      if (i % xEvery === 0) svg.append(svgEl('text', { x, y: m.top + plotH + 14, 'text-anchor': 'middle', class: 'chart-tick' }, shortCount(2 ** e)));
    }
    svg.append(svgEl('rect', { x: m.left, y: m.top, width: plotW, height: plotH, class: 'chart-frame' }));
    svg.append(svgEl('text', { x: m.left + plotW / 2, y: plotHeight - 6, 'text-anchor': 'middle', class: 'chart-axis-title' }, spec.xLabel));
    svg.append(svgEl('text', { x: 4, y: 12, class: 'chart-axis-title' }, spec.yLabel));

    for (const marker of markers) {
      const x = sx(marker.x), right = x > m.left + plotW * 0.6;
      svg.append(svgEl('line', { x1: x, x2: x, y1: m.top, y2: m.top + plotH, class: 'chart-marker' }));
      // At the foot of the line: the series' own labels sit at the top right.
      if (!legend)
        svg.append(svgEl('text', { x: right ? x - 4 : x + 4, y: m.top + plotH - 6, 'text-anchor': right ? 'end' : 'start', class: 'chart-marker-label' }, marker.label));
      if (marker.y !== undefined) svg.append(svgEl('circle', { cx: x, cy: sy(marker.y), r: 4.5, class: 'chart-marker-dot' }));
    }
    for (const series of spec.series) {
      const d = series.points.map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`).join('');
      svg.append(svgEl('path', { d, class: `chart-line ${series.className}` }));
    }
    if (legend) {
      // One row per line and per marker under the axis title: a short stretch of its
      // stroke, then its label.
      let y = plotHeight + 6;
      const row = (sample: SVGElement, label: string, labelClass: string) => {
        svg.append(sample, svgEl('text', { x: m.left + 34, y: y + 4, class: labelClass }, label));
        y += legendRow;
      };
      for (const series of spec.series)
        row(svgEl('line', { x1: m.left, x2: m.left + 26, y1: y, y2: y, class: `chart-line chart-legend-line ${series.className}` }), series.name, `chart-line-label ${series.className}`);
      for (const marker of markers)
        row(svgEl('line', { x1: m.left + 13, x2: m.left + 13, y1: y - 7, y2: y + 7, class: 'chart-marker' }), marker.label, 'chart-marker-label');
    } else {
      // Labels at the right end of each line, pushed apart when they would overlap.
      const ends = spec.series.map((s) => ({ s, y: sy(s.points[s.points.length - 1][1]) })).sort((a, b) => a.y - b.y);
      let last = -Infinity;
      for (const end of ends) {
        const y = Math.max(end.y - 6, last + 13, m.top + 10);
        last = y;
        svg.append(svgEl('text', { x: m.left + plotW - 4, y, 'text-anchor': 'end', class: `chart-line-label ${end.s.className}` }, end.s.name));
      }
    }
    for (const dot of spec.dots) {
      if (dot.x < spec.xDomain[0] || dot.x > spec.xDomain[1]) continue;
      svg.append(svgEl('circle', { cx: sx(dot.x), cy: sy(dot.y), r: 3.5, class: 'chart-dot' }));
    }
    this.root.replaceChildren(svg);
  }
}
