// The mask gallery's two pictures: the mask cell by cell with the tile
// borders over it (only up to 256 x 256), and the tile map, one square per
// Br x Bc tile, with a PNG download and a text version.
import type { MaskSpec, TileResult } from '../../lib/core';
import { el } from '../../lib/dom';
import { groupDigits } from '../../lib/words';
import { downloadCanvasPng } from '../../lib/export';
import { stateNames, swatch } from './mask-kinds';
import { GridGeometry, StateGrid, tileStateStyles } from '../shared/state-grid';

/** What the pictures show. */
export interface MaskPicture {
  spec: MaskSpec;
  /** The chosen entry of the list (for the PNG's name) and its label. */
  kind: string;
  label: string;
  tq: number;
  tk: number;
  tiles: TileResult;
  /** The 1 x 1 tiling (state 2 = visible), or null when T or S is too large for it. */
  cells: TileResult | null;
}

// The cell-level picture needs a few pixels a cell: only up to this many rows and columns.
export const cellLimit = 256;

const tileLineColor = '#e8590c';

const stateMeaning = [
  'no query in it may see any of its keys, so the kernel never loads this K/V block for these queries',
  'some of its scores are masked, so the kernel computes the block and then applies the mask element by element',
  'every score in it is visible, so the kernel computes the block with no mask at all',
];
const fmt = groupDigits;

export class MaskFigure {
  readonly root: HTMLElement;
  private shown: MaskPicture | null = null;
  private readonly cellGrid: StateGrid;
  private readonly tileGrid: StateGrid;
  private readonly cellPanel: HTMLElement;
  private readonly tileTitle = el('p', { class: 'mask-panel-title' });
  // Focusable, so a keyboard can scroll a wide map.
  private readonly tileText = el('pre', { class: 'mask-tile-text', 'data-testid': 'mask-gallery-tile-text', tabindex: 0, role: 'region', 'aria-label': 'Tile map as text' });
  private readonly tileTextBox = el('details', { class: 'mask-tile-text-box' }, el('summary', {}, 'Tile map as text'), this.tileText);

  constructor() {
    this.cellGrid = new StateGrid({
      label: 'The mask cell by cell: rows are queries, columns keys',
      styles: tileStateStyles,
      maxHeight: 420,
      maxCellPx: 24,
      idleText: 'Point at a cell, or focus the picture and use the arrow keys, to read one query–key pair.',
      describe: (t, s, value) => {
        const { spec, tq, tk } = this.shown!;
        const q = t + spec.S - spec.T;
        return `Query row ${t} (position ${q}), key ${s}: ${value === 2 ? 'visible' : 'masked'}. It lies in tile row ${Math.floor(t / tq)}, tile column ${Math.floor(s / tk)}.`;
      },
      overlay: (ctx, g) => this.drawTileLines(ctx, g),
    });
    this.tileGrid = new StateGrid({
      label: 'The tile map: one square per Br × Bc tile, skipped, partial or full',
      styles: tileStateStyles,
      maxHeight: 560,
      maxCellPx: 40,
      idleText: 'Point at a tile, or focus the map and use the arrow keys, to read one tile.',
      describe: (r, c, value) => this.describeTile(r, c, value),
    });
    this.cellPanel = el(
      'div',
      { class: 'mask-panel', 'data-testid': 'mask-gallery-cells' },
      el('p', { class: 'mask-panel-title' }, 'Cell by cell'),
      this.cellGrid.root,
      el(
        'p',
        { class: 'mask-caption' },
        swatch(2), ' visible   ', swatch(0), ' masked   ',
        el('span', { class: 'mask-tile-line', 'aria-hidden': 'true' }), ' tile borders',
      ),
    );
    const pngButton = el('button', { type: 'button', class: 'small', 'data-testid': 'mask-gallery-png' }, 'Save tile map as PNG');
    pngButton.addEventListener('click', () => {
      if (!this.shown) return;
      const { spec, kind, tq, tk } = this.shown;
      downloadCanvasPng(this.tileGrid.canvas, `tile-map-${kind}-T${spec.T}-S${spec.S}-${tq}x${tk}.png`);
    });
    this.tileTextBox.addEventListener('toggle', () => this.tileTextBox.open && this.writeTileText());
    const tilePanel = el('div', { class: 'mask-panel', 'data-testid': 'mask-gallery-tiles' }, this.tileTitle, this.tileGrid.root, el('div', { class: 'mask-actions' }, pngButton), this.tileTextBox);
    this.root = el('div', { class: 'mask-views' }, this.cellPanel, tilePanel);
  }

  /** Draws `picture`; returns the milliseconds the drawing took. */
  show(picture: MaskPicture): number {
    this.shown = picture;
    const { tiles, cells, tq, tk } = picture;
    let drawMs = this.tileGrid.setData(tiles.rows, tiles.cols, tiles.states);
    this.cellPanel.hidden = cells === null;
    if (cells) drawMs += this.cellGrid.setData(cells.rows, cells.cols, cells.states);
    this.tileTitle.textContent = `Tile map: ${fmt(tiles.rows)} × ${fmt(tiles.cols)} tiles of Br × Bc = ${tq} × ${tk}`;
    this.tileGrid.setLabel(`Tile map of the ${picture.label.toLowerCase()} mask, ${fmt(tiles.rows)} by ${fmt(tiles.cols)} tiles of ${tq} by ${tk}`);
    this.tileTextBox.hidden = tiles.rows > 64 || tiles.cols > 64;
    if (this.tileTextBox.open) this.writeTileText();
    return drawMs;
  }

  private drawTileLines(ctx: CanvasRenderingContext2D, g: GridGeometry): void {
    if (!this.shown) return;
    const { tq, tk } = this.shown;
    const w = g.cols * g.pxX, h = g.rows * g.pxY;
    const line = Math.max(1, Math.round(Math.min(g.pxX, g.pxY) / 5));
    ctx.fillStyle = tileLineColor;
    for (let c = tk; c < g.cols; c += tk) ctx.fillRect(c * g.pxX - Math.floor(line / 2), 0, line, h);
    for (let r = tq; r < g.rows; r += tq) ctx.fillRect(0, r * g.pxY - Math.floor(line / 2), w, line);
  }

  private describeTile(r: number, c: number, value: number): string {
    const { spec, tq, tk } = this.shown!;
    const t0 = r * tq, t1 = Math.min(spec.T, t0 + tq) - 1;
    const s0 = c * tk, s1 = Math.min(spec.S, s0 + tk) - 1;
    const h = spec.S - spec.T;
    const overhang = t1 - t0 + 1 < tq || s1 - s0 + 1 < tk ? ' This edge tile hangs past the matrix; only its cells inside count.' : '';
    return (
      `Tile row ${r}, column ${c}: query rows ${t0}–${t1}` + (h ? ` (positions ${t0 + h}–${t1 + h})` : '') +
      `, keys ${s0}–${s1}. ${stateNames[value][0].toUpperCase()}${stateNames[value].slice(1)}: ${stateMeaning[value]}.${overhang}`
    );
  }

  private writeTileText(): void {
    if (!this.shown || this.tileTextBox.hidden) return;
    const t = this.shown.tiles;
    const marks = ['·', 'P', 'F'];
    const lines = ['· skipped   P partial   F full'];
    for (let r = 0; r < t.rows; r++) lines.push(Array.from(t.states.subarray(r * t.cols, (r + 1) * t.cols), (s) => marks[s]).join(' '));
    this.tileText.textContent = lines.join('\n');
  }
}
