// live-training's loss plot: loss per character against training steps, both axes linear.
// The training loss is one number per step and noisy (each step sees another
// batch), so it is drawn as the mean over equal runs of steps, at most `bins` of
// them; the held-out loss is measured now and then on fixed windows and drawn as
// points joined by a line. A dashed line marks ln V, the loss of a uniform guess
// over the V characters: where every run starts. Lines differ by dash and marks,
// not by colour alone. Drawn in SVG at the width it is given.
import { formatNumber, observeWidth, svgEl } from '../../lib/dom';
import { count, groupDigits } from '../../lib/words';

export interface LossData {
  losses: ArrayLike<number>;         // the training loss of every step so far, step i + 1 at [i]
  heldout: [number, number][];       // (steps done, held-out loss)
  baseline: number | null;           // ln V, when a run has started
}

const bins = 240;

/** 1, 2 or 5 times a power of ten, at least x. */
function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(x, 1)));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x) ?? 10 * p;
}


/** Means over equal runs of steps: (the run's last step, mean loss). */
export function binnedLosses(losses: ArrayLike<number>, count = bins): [number, number][] {
  const n = losses.length;
  const width = Math.max(1, Math.ceil(n / count));
  const points: [number, number][] = [];
  for (let start = 0; start < n; start += width) {
    const end = Math.min(n, start + width);
    let sum = 0;
    for (let i = start; i < end; i++) sum += losses[i];
    points.push([end, sum / (end - start)]);
  }
  return points;
}

export class LossChart {
  readonly root: HTMLElement;
  private data: LossData = { losses: [], heldout: [], baseline: null };
  private width = 0;

  constructor(testId: string) {
    this.root = document.createElement('div');
    this.root.className = 'loss-chart';
    this.root.dataset.testid = testId;
    observeWidth(this.root, (width) => {
      this.width = width;
      this.draw();
    });
  }

  setData(data: LossData): void {
    this.data = data;
    this.draw();
  }

  private draw(): void {
    const { losses, heldout, baseline } = this.data;
    const train = binnedLosses(losses);
    // For tests and screen readers: what is drawn, in numbers.
    const root = this.root;
    root.dataset.trainSteps = String(losses.length);
    root.dataset.heldoutPoints = String(heldout.length);
    root.dataset.firstTrain = losses.length ? String(losses[0]) : '';
    root.dataset.lastTrain = train.length ? String(train[train.length - 1][1]) : '';
    if (!this.width) return;

    const width = Math.max(260, Math.min(760, this.width));
    const height = Math.round(Math.max(200, Math.min(300, width * 0.45)));
    const m = { left: 44, right: 14, top: 16, bottom: 38 };
    const plotW = width - m.left - m.right, plotH = height - m.top - m.bottom;
    const steps = niceCeil(Math.max(100, losses.length, ...heldout.map(([s]) => s)));
    const values = [...train.map(([, y]) => y), ...heldout.map(([, y]) => y), ...(baseline === null ? [] : [baseline])];
    const lo = values.length ? Math.max(0, Math.floor(Math.min(...values) * 2) / 2) : 1;
    const hi = values.length ? Math.ceil(Math.max(...values) * 2) / 2 : 5;
    const top = Math.max(hi, lo + 0.5);
    const sx = (x: number) => m.left + (x / steps) * plotW;
    const sy = (y: number) => m.top + (1 - (y - lo) / (top - lo)) * plotH;

    const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': this.describe(train), class: 'loss-chart-svg' });
    const yStep = top - lo > 3 ? 1 : 0.5;
    for (let y = lo; y <= top + 1e-9; y += yStep) {
      svg.append(svgEl('line', { x1: m.left, x2: m.left + plotW, y1: sy(y), y2: sy(y), class: 'loss-grid' }));
      svg.append(svgEl('text', { x: m.left - 5, y: sy(y) + 4, 'text-anchor': 'end', class: 'loss-tick' }, y.toFixed(1)));
    }
    const xTicks = width < 480 ? 2 : 5;
    for (let i = 0; i <= xTicks; i++) {
      const x = (steps * i) / xTicks;
      svg.append(svgEl('line', { x1: sx(x), x2: sx(x), y1: m.top, y2: m.top + plotH, class: 'loss-grid' }));
      svg.append(svgEl('text', { x: sx(x), y: m.top + plotH + 14, 'text-anchor': 'middle', class: 'loss-tick' }, groupDigits(x)));
    }
    svg.append(svgEl('rect', { x: m.left, y: m.top, width: plotW, height: plotH, class: 'loss-frame' }));
    svg.append(svgEl('text', { x: m.left + plotW / 2, y: height - 6, 'text-anchor': 'middle', class: 'loss-axis-title' }, 'training steps'));
    svg.append(svgEl('text', { x: 4, y: 11, class: 'loss-axis-title' }, 'nats per character'));

    if (baseline !== null) {
      svg.append(svgEl('line', { x1: m.left, x2: m.left + plotW, y1: sy(baseline), y2: sy(baseline), class: 'loss-baseline' }));
      svg.append(svgEl('text', { x: m.left + plotW - 4, y: sy(baseline) - 4, 'text-anchor': 'end', class: 'loss-label' }, `uniform guess, ln V = ${baseline.toFixed(2)}`));
    }
    const path = (points: [number, number][]) => points.map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`).join('');
    if (train.length) svg.append(svgEl('path', { d: path(train), class: 'loss-line loss-train', 'data-series': 'train' }));
    if (heldout.length) {
      svg.append(svgEl('path', { d: path(heldout), class: 'loss-line loss-heldout', 'data-series': 'heldout' }));
      // Marks on the measurements while they are few enough to tell apart; then the line alone.
      if (heldout.length <= 80) for (const [x, y] of heldout) svg.append(svgEl('circle', { cx: sx(x), cy: sy(y), r: 2.5, class: 'loss-dot' }));
    }
    // Names at the curves' right ends, pushed apart when they would overlap.
    const ends: { y: number; text: string; cls: string }[] = [];
    if (train.length) ends.push({ y: sy(train[train.length - 1][1]), text: 'train', cls: 'loss-train-label' });
    if (heldout.length) ends.push({ y: sy(heldout[heldout.length - 1][1]), text: 'held-out', cls: 'loss-heldout-label' });
    ends.sort((a, b) => a.y - b.y);
    let last = -Infinity;
    for (const end of ends) {
      const y = Math.max(end.y - 6, last + 13, m.top + 10);
      last = y;
      const x = Math.min(m.left + plotW - 4, sx(Math.max(losses.length, heldout.at(-1)?.[0] ?? 0)) + 4);
      const anchor = x > m.left + plotW * 0.8 ? 'end' : 'start';
      svg.append(svgEl('text', { x: anchor === 'end' ? x - 8 : x, y, 'text-anchor': anchor, class: `loss-label ${end.cls}` }, end.text));
    }
    root.replaceChildren(svg);
  }

  private describe(train: [number, number][]): string {
    const { losses, heldout, baseline } = this.data;
    if (!losses.length && !heldout.length) return 'Loss per character against training steps: no steps yet.';
    const parts = [`Loss per character against training steps, ${count(losses.length, 'step')} so far.`];
    if (train.length) parts.push(`Training loss ${formatNumber(losses[0], 2)} at step 1, ${formatNumber(train[train.length - 1][1], 2)} lately.`);
    if (heldout.length) parts.push(`Held-out loss ${formatNumber(heldout[0][1], 2)} at step ${groupDigits(heldout[0][0])}, ${formatNumber(heldout[heldout.length - 1][1], 2)} at step ${groupDigits(heldout[heldout.length - 1][0])}.`);
    if (baseline !== null) parts.push(`A uniform guess scores ${formatNumber(baseline, 2)}.`);
    return parts.join(' ');
  }
}
