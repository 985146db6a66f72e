// The mask gallery's counts: skipped, partial and full tiles, each next to
// what it means for a FlashAttention kernel, the total, and the mask's density.
import type { MaskSpec, TileResult } from '../../lib/core';
import { el } from '../../lib/dom';
import { fmt, stateNames, swatch } from './mask-kinds';

const count = (id: string) => el('span', { class: 'mask-count', 'data-testid': id }, '–');

function stateCard(state: number, node: HTMLElement, meaning: string): HTMLElement {
  return el(
    'div',
    { class: `mask-card mask-card-${stateNames[state]}` },
    el('p', { class: 'mask-card-head' }, swatch(state), el('span', { class: 'mask-card-name' }, stateNames[state][0].toUpperCase() + stateNames[state].slice(1)), node),
    el('p', { class: 'mask-card-text' }, meaning),
  );
}

export class MaskCounts {
  readonly root: HTMLElement;
  private readonly skipped = count('mask-gallery-skipped');
  private readonly partial = count('mask-gallery-partial');
  private readonly full = count('mask-gallery-full');
  private readonly total = count('mask-gallery-total');
  private readonly skippedPct = el('strong', { 'data-testid': 'mask-gallery-skipped-pct' }, '–');
  private readonly visible = el('span', { 'data-testid': 'mask-gallery-visible' }, '–');
  private readonly cells = el('span', { 'data-testid': 'mask-gallery-cells-total' }, '–');
  private readonly density = el('span', { 'data-testid': 'mask-gallery-density' }, '–');
  private readonly shape = el('span', { 'data-testid': 'mask-gallery-grid' }, '–');

  constructor() {
    this.root = el(
      'div',
      { class: 'mask-counts', 'data-testid': 'mask-gallery-counts' },
      stateCard(0, this.skipped, 'No query in the tile may see any key in it. A block-sparse FlashAttention kernel skips it outright: it never loads that K/V block for those queries and computes none of its scores.'),
      stateCard(1, this.partial, 'Some scores in the tile are masked. The kernel computes the whole Br × Bc block, then applies the mask element by element (masked scores become −∞) before the online softmax.'),
      stateCard(2, this.full, 'Every score in the tile is visible. The kernel computes the block with no mask at all, its fastest path.'),
      el(
        'div',
        { class: 'mask-card mask-card-total' },
        el('p', { class: 'mask-card-head' }, el('span', { class: 'mask-card-name' }, 'Total'), this.total),
        el('p', { class: 'mask-card-text' }, this.shape, ' tiles. Work skipped (skipped ÷ total): ', this.skippedPct, '.'),
        el('p', { class: 'mask-card-text' }, 'Visible cells: ', this.visible, ' of ', this.cells, ', a density of ', this.density, '.'),
      ),
    );
  }

  show(spec: MaskSpec, tiles: TileResult): void {
    this.skipped.textContent = fmt(tiles.skipped);
    this.partial.textContent = fmt(tiles.partial);
    this.full.textContent = fmt(tiles.full);
    this.total.textContent = fmt(tiles.rows * tiles.cols);
    this.shape.textContent = `${fmt(tiles.rows)} × ${fmt(tiles.cols)}`;
    this.skippedPct.textContent = `${(100 * tiles.skipped_fraction).toFixed(2)}%`;
    this.visible.textContent = fmt(tiles.visible_cells);
    this.cells.textContent = fmt(spec.T * spec.S);
    this.density.textContent = `${((100 * tiles.visible_cells) / (spec.T * spec.S)).toFixed(2)}%`;
  }
}
