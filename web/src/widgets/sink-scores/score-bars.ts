// The sink-scores figure's picture: one bar per head, grouped by layer, on a scale from 0
// to 1 of the weight a head gives one position, with a horizontal line at each mark (0.3,
// the experiment's "passed"; 0.5, the mark every score on the page uses). Drawn in SVG at the width it is given, so its text keeps its size
// from 360 px to desktop; each bar holds its score (data-score) and says it on hover.
import './score-bars.css';
import { observeWidth, svgEl } from '../../lib/dom';

export interface BarGroup {
  label: string;                // under the group: "layer 2"
  bars: { label: string; value: number }[];  // under each bar, when there is room: "h3"
}

export interface BarMark {
  at: number;                   // on the 0..1 scale
  label: string;
}

const height = 150;
const margin = { left: 30, right: 8, top: 10, bottom: 34 };
const groupGap = 14;

/** A bar figure of `groups`, redrawn as its width changes; `label` describes it for a screen reader. */
export function scoreBars(groups: BarGroup[], marks: BarMark[], label: string, testId: string): HTMLElement {
  const root = document.createElement('div');
  root.className = 'score-bars';
  root.dataset.testid = testId;
  observeWidth(root, (width) => root.replaceChildren(draw(groups, marks, label, Math.max(260, Math.min(760, width)))));
  return root;
}

function draw(groups: BarGroup[], marks: BarMark[], label: string, width: number): SVGSVGElement {
  const plotW = width - margin.left - margin.right, plotH = height - margin.top - margin.bottom;
  const y = (v: number) => margin.top + (1 - Math.min(1, Math.max(0, v))) * plotH;
  const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, class: 'score-bars-svg' });
  for (const at of [0, 1]) {
    svg.append(svgEl('line', { x1: margin.left, x2: width - margin.right, y1: y(at), y2: y(at), class: 'score-axis' }));
    svg.append(svgEl('text', { x: margin.left - 4, y: y(at) + 4, 'text-anchor': 'end', class: 'score-tick' }, String(at)));
  }
  const count = groups.reduce((n, g) => n + g.bars.length, 0);
  const slot = (plotW - groupGap * (groups.length - 1)) / Math.max(1, count);
  const barW = Math.max(2, Math.min(28, slot * 0.72));
  let x = margin.left;
  for (const group of groups) {
    const start = x;
    for (const bar of group.bars) {
      const cx = x + slot / 2, top = y(bar.value);
      const rect = svgEl('rect', {
        x: cx - barW / 2, y: top, width: barW, height: Math.max(0.5, y(0) - top),
        class: `score-bar${bar.value >= 0.5 ? ' score-bar-strong' : bar.value >= 0.3 ? ' score-bar-passed' : ''}`,
        'data-score': String(bar.value),
      });
      rect.append(svgEl('title', {}, `${group.label}, ${bar.label}: ${bar.value.toFixed(3)}`));
      svg.append(rect);
      if (slot >= 15) svg.append(svgEl('text', { x: cx, y: y(0) + 12, 'text-anchor': 'middle', class: 'score-bar-label' }, bar.label));
      x += slot;
    }
    svg.append(svgEl('text', { x: (start + x) / 2, y: height - 6, 'text-anchor': 'middle', class: 'score-group-label' }, group.label));
    x += groupGap;
  }
  // The marks last, over the bars, each labelled at the right end of its line.
  for (const mark of marks) {
    svg.append(svgEl('line', { x1: margin.left, x2: width - margin.right, y1: y(mark.at), y2: y(mark.at), class: 'score-mark' }));
    svg.append(svgEl('text', { x: width - margin.right - 2, y: y(mark.at) - 3, 'text-anchor': 'end', class: 'score-mark-label' }, mark.label));
  }
  return svg;
}
