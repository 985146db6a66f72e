// The first diverging tensor drawn three ways side by side: yours, ours and yours
// minus ours. The report itself carries the slice to draw (core/diff's block: the
// [T, columns] block holding the first diverging value, as the core read it from your
// file and as its float64 forward computed it): for a [B, T, D] or [B, T, V] tensor
// the diverging sequence, for a [B, H, T, dh] or [B, H, T, S] tensor the diverging
// head of the diverging sequence. The row of the diverging position is outlined.
import { diverging, sequential } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import type { Divergence } from '../../lib/trace-viewer-core';
import { el, formatNumber } from '../../lib/dom';
import { Heatmap, HeatmapData } from '../../lib/heatmap';

type Grid = number[][]; // [T][columns]

/** The largest |x| over the cells `counts` admits, or a tiny positive number when all are 0. */
function largest(grids: Grid[], counts: (r: number, c: number) => boolean): number {
  let limit = 0;
  for (const grid of grids)
    grid.forEach((row, r) => row.forEach((x, c) => {
      if (counts(r, c) && Number.isFinite(x)) limit = Math.max(limit, Math.abs(x));
    }));
  return limit || 1e-9;
}

export class DiffTensors {
  readonly root: HTMLElement;
  private readonly caption = el('p', { class: 'view-caption' });
  private readonly note = el('p', { class: 'view-caption', 'data-testid': 'trace-viewer-diff-draw-note' });
  private readonly labels = [el('p', { class: 'panel-label' }), el('p', { class: 'panel-label' }), el('p', { class: 'panel-label' })];
  private readonly maps: Heatmap[];
  private readonly panels: HTMLElement[];

  constructor() {
    this.maps = ['yours', 'ours', 'difference'].map((name) => {
      const map = new Heatmap({ title: name, rowAxis: 'position', colAxis: 'channel' });
      map.root.dataset.testid = `trace-viewer-diff-${name}`;
      return map;
    });
    this.panels = this.maps.map((map, i) => el('div', {}, this.labels[i], map.root));
    this.root = el(
      'section',
      { class: 'diff-tensors', 'data-testid': 'trace-viewer-diff-tensors' },
      el('h3', { class: 'view-subtitle' }, 'The first diverging tensor'),
      this.caption,
      el('div', { class: 'panels compare-panels' }, ...this.panels),
      this.note,
    );
  }

  /** Draws divergence `d` (none: hides the part) of a file in `precision`. */
  show(d: Divergence | null, precision: string): void {
    if (!d?.block) {
      this.root.hidden = true;
      return;
    }
    const { theirs: yours, ours } = d.block;
    const sequence = d.sequence as number, position = d.position as number;
    const head = typeof d.head === 'number' ? d.head : null;
    const axis = d.axes[d.axes.length - 1], column = d[axis] as number;
    const kvHead = /\.(k|v|k_rope)$/.test(d.tensor);
    const slice = `sequence ${sequence}${head === null ? '' : `, ${kvHead ? 'KV head' : 'head'} ${head}`}`;
    // Scores are compared only where the mask lets a query read the key.
    const compared = (r: number, c: number) => !(d.tensor.endsWith('.scores') && c > r);
    const where = (r: number, c: number) => `position ${r}, ${axis} ${c}`;
    const valueData = (grid: Grid, who: string, scale: HeatmapData['scale'], domain: [number, number]): HeatmapData => ({
      rows: grid.length, cols: grid[0].length, value: (r, c) => grid[r][c], allowed: (r, c) => compared(r, c) && Number.isFinite(grid[r][c]),
      rowLabel: String, colLabel: String, scale, domain,
      describe: (r, c) => `${who}, ${where(r, c)}: ` +
        (!compared(r, c) ? 'masked (the key comes after the query), not compared' : Number.isFinite(grid[r][c]) ? formatNumber(grid[r][c]) : `${grid[r][c]}, not a finite number`),
    });

    this.root.hidden = false;
    this.root.dataset.tensor = d.tensor;
    this.root.dataset.sequence = String(sequence);
    this.root.dataset.head = head === null ? '' : String(head);
    this.caption.textContent =
      `${d.tensor}, ${slice}: each row a position, each column a ${axis}. The outlined row is position ${position}, ` +
      `where the first diverging value lies (${axis} ${column}). Yours as the core read it from your file, ours from the ` +
      'float64 forward the check holds yours to.';
    const probabilities = d.tensor.endsWith('.probs');
    const limit = largest([yours, ours], compared);
    const scale = probabilities ? sequential(0, 1) : tabulated(diverging(limit), -limit, limit);
    const domain: [number, number] = probabilities ? [0, 1] : [-limit, limit];
    const difference = yours.map((row, r) => row.map((x, c) => x - ours[r][c]));
    const spread = largest([difference], compared);
    this.draw(0, yours, `yours (${precision}, from your file)`, d.tensor, slice, position, axis, valueData(yours, 'yours', scale, domain));
    this.draw(1, ours, 'ours (the core, float64)', d.tensor, slice, position, axis, valueData(ours, 'ours', scale, domain));
    this.draw(2, difference, 'yours − ours', d.tensor, slice, position, axis, {
      ...valueData(difference, 'yours − ours', tabulated(diverging(spread), -spread, spread), [-spread, spread]),
      describe: (r, c) => `${where(r, c)}: ` + (!compared(r, c)
        ? 'masked (the key comes after the query), not compared'
        : `yours − ours = ${formatNumber(difference[r][c])} (${formatNumber(yours[r][c])} − ${formatNumber(ours[r][c])})`),
    });
    this.note.textContent = 'In the difference, blue cells are where yours is above ours, red where it is below. Hover or focus a cell for its numbers.';
  }

  private draw(i: number, grid: Grid, title: string, tensor: string, slice: string, position: number, axis: string, data: HeatmapData): void {
    this.panels[i].hidden = false;
    this.labels[i].textContent = title[0].toUpperCase() + title.slice(1);
    this.maps[i].root.dataset.values = JSON.stringify(grid);
    this.maps[i].setTitle(`${tensor}, ${slice}: ${title}`);
    this.maps[i].setAxes('position', axis);
    this.maps[i].setData(data, position);
  }
}
