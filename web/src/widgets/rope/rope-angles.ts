// RoPE, part a: the angle each channel pair turns at each position (core
// ropeAngles), and each pair's vector at a chosen position as a clock hand
// (core ropeRotate). The heatmap has 4 pairs by 32 positions: on a narrow screen
// 32 columns leave cells of 8 px, so there it turns on its side (positions down,
// pairs across) and keeps rows of a readable height.
import type { Core } from '../../lib/core';
import { diverging, sequential } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import { el, formatNumber, labelled, numberInput, observeWidth, select, svgEl } from '../../lib/dom';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import type { UrlState } from '../../lib/url-state';
import { headDim, pairs, positionCount, positions, theta, twoPi } from './rope-setup';

export class RopeAngles {
  readonly root: HTMLElement;
  readonly show: HTMLSelectElement;
  readonly clockInput: HTMLInputElement;
  private readonly clockOutput = el('output', { class: 'scale-output' });
  private readonly angleMap = new Heatmap({ title: 'RoPE angle per channel pair and position', rowAxis: 'pair', colAxis: 'position', maxCellPx: 28 });
  /** The same angles with positions down and pairs across, shown instead below narrowWidth. */
  private readonly angleMapByPosition = new Heatmap({ title: 'RoPE angle per position and channel pair', rowAxis: 'position', colAxis: 'pair', maxCellPx: 16 });
  private readonly clocks = el('div', { class: 'rope-clocks', 'data-testid': 'rope-clocks' });
  private readonly note = el('p', { class: 'lesson-caption' });
  private readonly angles: number[][];  // [P][pairs]
  private readonly unit = Array.from({ length: headDim }, (_, c) => (c < pairs ? 1 : 0)); // (1, 0) in every half-split pair

  constructor(private readonly core: Core, state: UrlState) {
    this.show = select([['cos', 'cos(angle)'], ['mod', 'angle mod 2π']], state.get('show') === 'mod' ? 'mod' : 'cos');
    this.show.dataset.testid = 'rope-show';
    this.clockInput = numberInput('range', 0, positionCount - 1, 1, state.getNumber('p', 5, 0, positionCount - 1));
    this.clockInput.dataset.testid = 'rope-clock-position';
    this.angleMap.root.dataset.testid = 'rope-angles';
    this.angleMapByPosition.root.dataset.testid = 'rope-angles-by-position';
    this.angleMapByPosition.root.hidden = true;
    const clockControl = labelled('Clock position p', this.clockInput);
    this.clockInput.after(this.clockOutput);
    this.clockOutput.setAttribute('for', this.clockInput.id);
    this.root = el('section', { class: 'lesson-part', 'aria-labelledby': 'rope-part-a' },
      el('h3', { class: 'lesson-subtitle', id: 'rope-part-a' }, 'a. How far each pair turns'),
      el('div', { class: 'controls' }, labelled('Colour shows', this.show), clockControl),
      el('div', { class: 'no-mask' }, this.angleMap.root, this.angleMapByPosition.root),
      this.clocks,
      this.note);
    this.angles = core.ropeAngles({ head_dim: headDim, theta, positions }).angles;
    // 32 columns of at least 12 px, beside the row labels, need about this much.
    const narrowWidth = 460;
    observeWidth(this.root, (width) => {
      const narrow = width > 0 && width < narrowWidth;
      this.angleMap.root.hidden = narrow;
      this.angleMapByPosition.root.hidden = !narrow;
    });
  }

  renderAngles(): void {
    const { angles } = this;
    const mode = this.show.value as 'cos' | 'mod';
    const value = (i: number, p: number) => (mode === 'cos' ? Math.cos(angles[p][i]) : angles[p][i] % twoPi);
    const data: HeatmapData = {
      rows: pairs,
      cols: positionCount,
      value,
      allowed: () => true,
      rowLabel: (i) => String(i),
      colLabel: (p) => String(p),
      scale: mode === 'cos' ? tabulated(diverging(1), -1, 1) : sequential(0, twoPi),
      domain: mode === 'cos' ? [-1, 1] : [0, twoPi],
      describe: (i, p) => {
        const a = angles[p][i];
        return `pair ${i} (channels ${i} and ${i + pairs}), position ${p}: angle ${p}·${theta}^(−${i}/${pairs}) = ${formatNumber(a, 6)} rad; ` +
          `mod 2π = ${formatNumber(a % twoPi, 4)} rad (${formatNumber(((a % twoPi) * 180) / Math.PI, 1)}°); cos = ${formatNumber(Math.cos(a), 4)}`;
      },
    };
    const shownAs = mode === 'cos' ? 'cos(angle)' : 'angle mod 2π';
    this.angleMap.setTitle(`RoPE angle per channel pair and position, shown as ${shownAs}`);
    this.angleMap.setData(data);
    this.angleMapByPosition.setTitle(`RoPE angle per position and channel pair, shown as ${shownAs}`);
    this.angleMapByPosition.setData({
      ...data,
      rows: positionCount,
      cols: pairs,
      value: (p, i) => data.value(i, p),
      rowLabel: (p) => String(p),
      colLabel: (i) => String(i),
      describe: (p, i) => data.describe(i, p),
    });
  }

  renderClocks(): void {
    const { angles } = this;
    const p = Number(this.clockInput.value);
    this.clockOutput.textContent = `p = ${p}`;
    const rotated = this.core.ropeRotate({ vector: this.unit, positions: [p], theta, pairing: 'half_split' }).rotated[0];
    this.clocks.replaceChildren(
      ...Array.from({ length: pairs }, (_, i) => {
        const x = rotated[i], y = rotated[i + pairs], a = angles[p][i];
        return clock(i, x, y, a, p);
      }),
    );
    this.note.textContent =
      `Pair 0 turns 1 radian per position and goes round every ${formatNumber(twoPi, 2)} positions; pair ${pairs - 1} turns ${formatNumber(angles[1][pairs - 1], 4)} rad per position, ` +
      `so over these ${positionCount} positions it moves only ${formatNumber(angles[positionCount - 1][pairs - 1], 3)} rad. ` +
      `Each clock's hand is the core rotating (1, 0) in that pair to position ${p}; the dashed hand is position 0.`;
  }
}

/** Pair i's vector at position p as a clock hand, with position 0 dashed and the turned arc. */
function clock(i: number, x: number, y: number, angle: number, p: number): HTMLElement {
  const r = 34, c = 40;
  const svg = svgEl('svg', { viewBox: '0 0 80 80', width: 68, height: 68, class: 'rope-clock', role: 'img',
    'aria-label': `pair ${i} at position ${p}: (1, 0) turned by ${formatNumber(angle, 4)} rad to (${formatNumber(x, 3)}, ${formatNumber(y, 3)})` });
  const turned = angle % (2 * Math.PI);
  const large = turned > Math.PI ? 1 : 0;
  const arcR = 14;
  svg.append(
    svgEl('circle', { cx: c, cy: c, r, class: 'clock-face' }),
    svgEl('line', { x1: c, y1: c, x2: c + r, y2: c, class: 'clock-start' }),
  );
  if (turned > 1e-9)
    svg.append(svgEl('path', { class: 'clock-arc', d: `M${c + arcR} ${c} A${arcR} ${arcR} 0 ${large} 0 ${c + arcR * Math.cos(turned)} ${c - arcR * Math.sin(turned)}` }));
  svg.append(
    svgEl('line', { x1: c, y1: c, x2: c + r * x, y2: c - r * y, class: 'clock-hand' }),
    svgEl('circle', { cx: c + r * x, cy: c - r * y, r: 3, class: 'clock-tip' }),
  );
  return el('figure', { class: 'rope-clock-box' }, svg as unknown as HTMLElement,
    el('figcaption', {}, el('strong', {}, `pair ${i}`), el('br'), `ch ${i}, ${i + 4}`, el('br'), `${formatNumber(angle, 3)} rad`, el('br'), `${formatNumber(angle / (2 * Math.PI), 4)} turns`));
}
