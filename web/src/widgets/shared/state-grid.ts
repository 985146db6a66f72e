// A grid of small integer states (a mask's cells, a kernel's tiles) drawn into
// one ImageData: one pass over the canvas pixels, so a 1024 x 1024 tile map
// costs a few milliseconds. Shared by the mask gallery and the KV-cache
// stepper.
//   - each state has a fill and a texture (solid, hatched, dotted), so states
//     differ in lightness and pattern as well as hue;
//   - the exact meaning of a cell on hover and on keyboard focus (arrow keys,
//     Page Up/Down, Home/End), written to a live readout;
//   - cells keep the matrix's proportions until they are too thin to see.
import './state-grid.css';
import { el, observeWidth, uid } from '../../lib/dom';

export interface StateStyle {
  fill: string;                        // #rrggbb
  texture: 'solid' | 'hatch' | 'dots';
  ink?: string;                        // #rrggbb of the texture's lines or dots
}

/**
 * A tile's three states, 0 skipped, 1 partial, 2 full, as the mask gallery and the flash
 * kernel's tile figure draw them; skipped tiles look like masked cells elsewhere on the
 * page: light grey, hatched.
 */
export const tileStateStyles: StateStyle[] = [
  { fill: '#e8e8ec', texture: 'hatch', ink: '#8a8a96' },
  { fill: '#f2a03d', texture: 'dots', ink: '#7a3f00' },
  { fill: '#3b4cc0', texture: 'solid' },
];

export interface StateGridOptions {
  label: string;                       // accessible name of the canvas
  styles: StateStyle[];                // indexed by state
  describe(row: number, col: number, state: number): string;
  maxHeight: number;                   // CSS px the grid may take
  maxCellPx: number;                   // CSS px a cell may grow to
  /** Lines drawn over the cells, e.g. tile borders over a cell-level mask. */
  overlay?(ctx: CanvasRenderingContext2D, geometry: GridGeometry): void;
  idleText?: string;
}

export interface GridGeometry {
  rows: number;
  cols: number;
  pxX: number;  // canvas pixels per cell, across and down
  pxY: number;
}

/** '#rrggbb' as a little-endian RGBA word for a Uint32Array over ImageData. */
function rgba(hex: string): number {
  const v = parseInt(hex.slice(1), 16);
  return (0xff << 24) | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff);
}

export class StateGrid {
  readonly root: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly stage: HTMLElement;
  private readonly marker: HTMLElement;
  private readonly readout: HTMLElement;
  private rows = 0;
  private cols = 0;
  private states: Uint8Array = new Uint8Array(0);
  private focus = { row: 0, col: 0 };
  private width: number | null = null;
  private image: ImageData | null = null;
  private readonly fills: number[];
  private readonly inks: number[];

  constructor(private readonly options: StateGridOptions) {
    const readoutId = uid('grid-readout');
    this.canvas = el('canvas', {
      class: 'state-grid-canvas',
      tabindex: 0,
      role: 'application',
      'aria-roledescription': 'grid picture',
      'aria-describedby': readoutId,
    });
    this.marker = el('div', { class: 'state-grid-focus', hidden: true, 'aria-hidden': 'true' });
    this.stage = el('div', { class: 'state-grid-stage' }, this.canvas, this.marker);
    this.readout = el('p', { id: readoutId, class: 'state-grid-readout', 'aria-live': 'polite' }, options.idleText ?? '');
    this.root = el('div', { class: 'state-grid' }, this.stage, this.readout);
    this.fills = options.styles.map((s) => rgba(s.fill));
    this.inks = options.styles.map((s) => rgba(s.ink ?? s.fill));
    this.setLabel(options.label);

    this.canvas.addEventListener('mousemove', (e) => {
      const hit = this.cellAt(e);
      if (hit) this.show(hit.row, hit.col, false);
    });
    this.canvas.addEventListener('click', (e) => {
      const hit = this.cellAt(e);
      if (hit) {
        this.focus = hit;
        this.show(hit.row, hit.col, true);
      }
    });
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    this.canvas.addEventListener('focus', () => this.show(this.focus.row, this.focus.col, true));
    this.canvas.addEventListener('blur', () => (this.marker.hidden = true));
    // Cells are sized to the width the grid gets: redraw when it changes.
    observeWidth(this.root, (width) => {
      if (width === 0 || width === this.width) return;  // hidden: keep the last drawing
      this.width = width;
      this.draw();
    }, Math.floor);
  }

  setLabel(label: string): void {
    this.canvas.setAttribute('aria-label', `${label}. Arrow keys move from cell to cell; the text below reads the cell out.`);
  }

  /** Shows `states` (rows * cols, row-major). Returns the milliseconds the drawing took. */
  setData(rows: number, cols: number, states: Uint8Array): number {
    const start = performance.now();
    this.rows = rows;
    this.cols = cols;
    this.states = states;
    this.focus.row = Math.min(this.focus.row, rows - 1);
    this.focus.col = Math.min(this.focus.col, cols - 1);
    this.draw();
    if (document.activeElement === this.canvas) this.show(this.focus.row, this.focus.col, true);
    else this.readout.textContent = this.options.idleText ?? '';
    return performance.now() - start;
  }

  private geometry(): GridGeometry & { cssW: number; cssH: number } {
    const { rows, cols } = this;
    const available = Math.max(64, this.width ?? this.root.clientWidth ?? 320);
    const { maxHeight, maxCellPx } = this.options;
    // CSS px per cell: as wide as fits and square, unless that leaves the whole
    // picture under 32 px tall (a 1 x 1024 strip of tiles): then rows grow.
    const sx = Math.min(available / cols, maxHeight / rows, maxCellPx);
    const sy = rows * sx >= 32 ? sx : Math.min(maxCellPx, maxHeight / rows, Math.max(sx, 32 / rows));
    const ratio = window.devicePixelRatio || 1;
    // At a pixel or more per cell, whole device pixels per cell (crisp edges);
    // below, one pixel per cell and the browser scales the picture down.
    const pxX = sx * ratio >= 1 ? Math.floor(sx * ratio) : 1;
    const pxY = sy * ratio >= 1 ? Math.floor(sy * ratio) : 1;
    const cssW = sx * ratio >= 1 ? (cols * pxX) / ratio : cols * sx;
    const cssH = sy * ratio >= 1 ? (rows * pxY) / ratio : rows * sy;
    return { rows, cols, pxX, pxY, cssW, cssH };
  }

  private draw(): void {
    const { rows, cols, states } = this;
    if (!rows || !cols) return;
    const g = this.geometry();
    const w = cols * g.pxX, h = rows * g.pxY;
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
      this.image = null;
    }
    this.canvas.style.width = `${g.cssW}px`;
    this.canvas.style.height = `${g.cssH}px`;
    // Upscaled cells stay sharp; a downscaled map is averaged so thin bands do not vanish.
    this.canvas.classList.toggle('pixelated', g.pxX > 1 || g.pxY > 1);
    const ctx = this.canvas.getContext('2d')!;
    this.image ??= ctx.createImageData(w, h);
    const out = new Uint32Array(this.image.data.buffer);
    const { fills, inks } = this;

    if (g.pxX === 1 && g.pxY === 1) {
      for (let i = 0; i < rows * cols; i++) out[i] = fills[states[i]];
    } else {
      const textures = this.options.styles.map((s) => ['solid', 'hatch', 'dots'].indexOf(s.texture));
      // Textures need room: hatching from 4 device pixels a cell, a white seam between cells from 6.
      const textured = Math.min(g.pxX, g.pxY) >= 4;
      const seam = Math.min(g.pxX, g.pxY) >= 6 ? 0xffffffff : 0;
      const row = new Uint32Array(w);
      for (let r = 0; r < rows; r++) {
        const base = r * cols;
        for (let yy = 0; yy < g.pxY; yy++) {
          const y = r * g.pxY + yy;
          const seamRow = seam && yy === g.pxY - 1;
          for (let c = 0, x = 0; c < cols; c++) {
            const s = states[base + c];
            const fill = fills[s], ink = inks[s], texture = textured ? textures[s] : 0;
            for (let xx = 0; xx < g.pxX; xx++, x++) {
              if (seamRow || (seam && xx === g.pxX - 1)) row[x] = seam;
              else if (texture === 1) row[x] = (x + y) % 6 === 0 ? ink : fill;
              else if (texture === 2) row[x] = x % 4 === 1 && y % 4 === 1 ? ink : fill;
              else row[x] = fill;
            }
          }
          out.set(row, y * w);
        }
      }
    }
    ctx.putImageData(this.image, 0, 0);
    this.options.overlay?.(ctx, g);
    this.placeMarker();
  }

  private cellAt(e: MouseEvent): { row: number; col: number } | null {
    const rect = this.canvas.getBoundingClientRect();
    if (!this.rows || rect.width === 0 || rect.height === 0) return null;
    const col = Math.floor(((e.clientX - rect.left) / rect.width) * this.cols);
    const row = Math.floor(((e.clientY - rect.top) / rect.height) * this.rows);
    if (row < 0 || col < 0 || row >= this.rows || col >= this.cols) return null;
    return { row, col };
  }

  private show(row: number, col: number, focused: boolean): void {
    if (!this.rows) return;
    this.readout.textContent = this.options.describe(row, col, this.states[row * this.cols + col]);
    if (focused) this.placeMarker();
  }

  private placeMarker(): void {
    const focused = document.activeElement === this.canvas && this.rows > 0;
    this.marker.hidden = !focused;
    if (!focused) return;
    const { row, col } = this.focus;
    const w = parseFloat(this.canvas.style.width), h = parseFloat(this.canvas.style.height);
    // At least 6 px across, so the focused cell shows on a map with a thousand columns.
    const cw = Math.max(6, w / this.cols), ch = Math.max(6, h / this.rows);
    this.marker.style.left = `${Math.min(w - cw, (col * w) / this.cols)}px`;
    this.marker.style.top = `${Math.min(h - ch, (row * h) / this.rows)}px`;
    this.marker.style.width = `${cw}px`;
    this.marker.style.height = `${ch}px`;
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.rows) return;
    const page = Math.max(1, Math.round(this.rows / 8));
    const moves: Record<string, [number, number]> = {
      ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-page, 0], PageDown: [page, 0],
    };
    if (e.key in moves) {
      const [dr, dc] = moves[e.key];
      this.focus.row = Math.min(this.rows - 1, Math.max(0, this.focus.row + dr));
      this.focus.col = Math.min(this.cols - 1, Math.max(0, this.focus.col + dc));
    } else if (e.key === 'Home') {
      this.focus.col = 0;
    } else if (e.key === 'End') {
      this.focus.col = this.cols - 1;
    } else {
      return;
    }
    e.preventDefault();
    this.show(this.focus.row, this.focus.col, true);
  }
}
