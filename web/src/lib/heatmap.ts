// A heatmap of a [rows, cols] matrix drawn on a canvas, with
//   - masked cells drawn hatched, never as a colour that could read as "zero";
//   - the exact value, query and key on hover and on keyboard focus (arrow keys
//     move, Home/End jump, Enter selects the row), announced to screen readers;
//   - a colour legend, a "show as table" view, and PNG / SVG export, each button
//     named for the heatmap it acts on ("Save layer 0, head 1 as PNG");
//   - axis titles drawn whole: a heatmap of one or two rows or columns grows to fit them.
import { el, formatNumber, observeWidth, uid } from './dom';
import { colorChannels } from './color-table';
import { ColorScale, forbiddenFill, forbiddenHatch } from './colormap';
import { maskedRuns } from './masked-runs.mjs';
import { downloadCanvasPng, downloadSvg, xmlEscape } from './export';

export interface HeatmapData {
  rows: number;
  cols: number;
  value(row: number, col: number): number;
  /** False for cells the mask forbids. */
  allowed(row: number, col: number): boolean;
  rowLabel(row: number): string;
  colLabel(col: number): string;
  scale: ColorScale;
  /** Legend ends, e.g. [0, 1] for probabilities. */
  domain: [number, number];
  /** What one cell means, for hover and screen readers. */
  describe(row: number, col: number): string;
}

export interface HeatmapOptions {
  title: string;       // accessible name, table caption and export file name; see setTitle
  /** What the buttons call it ("layer 0, head 1": "Save layer 0, head 1 as PNG"); the title when not given. */
  name?: string;
  rowAxis: string;     // e.g. "query position"
  colAxis: string;     // e.g. "key position"
  onSelectRow?: (row: number) => void;
  maxCellPx?: number;
}

const margin = { left: 34, top: 30 };

// CSS colours as the scales write them ("#rrggbb" or "rgb(r, g, b)") to their channels,
// remembered (a table scale has 256 colours; a continuous one is cleared when it grows).
const parsed = new Map<string, [number, number, number]>();
function rgb(color: string): [number, number, number] {
  let channels = parsed.get(color);
  if (channels) return channels;
  channels = colorChannels(color) ?? [0, 0, 0];
  if (parsed.size > 4096) parsed.clear();
  parsed.set(color, channels);
  return channels;
}
// Room left of the row labels for the rotated row-axis title.
const axisTitleWidth = 18;
const labelFont = '10px system-ui, sans-serif';

// Each label's width in labelFont, measured once: a typed token redraws a widget's
// heatmaps with the same labels plus one (measuring them all again took 1.5 ms of a
// 10 ms keystroke for trained-model's four heatmaps).
const labelWidths = new Map<string, number>();
function labelWidth(ctx: CanvasRenderingContext2D, label: string): number {
  let width = labelWidths.get(label);
  if (width === undefined) {
    ctx.font = labelFont;
    width = ctx.measureText(label).width;
    if (labelWidths.size > 4096) labelWidths.clear();
    labelWidths.set(label, width);
  }
  return width;
}

export class Heatmap {
  readonly root: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly tooltip: HTMLElement;
  private readonly live: HTMLElement;
  private readonly legend: HTMLCanvasElement;
  private readonly legendLabels: HTMLElement;
  private readonly tableHost: HTMLElement;
  private data: HeatmapData | null = null;
  private cell = 16;
  private focus = { row: 0, col: 0 };
  private selectedRow: number | null = null;
  private title = '';
  private name = '';
  private readonly buttons: { table: HTMLButtonElement; png: HTMLButtonElement; svg: HTMLButtonElement };
  // The stage's width as last reported by a ResizeObserver (null until its first
  // report). Reading clientWidth in every draw instead forces a layout of the whole
  // page each time, which made a redraw of four heatmaps cost tens of milliseconds.
  private stageWidth: number | null = null;
  private hatch: CanvasPattern | string | null = null;
  private cells: HTMLCanvasElement | null = null;
  // Left margin: wide enough for the longest row label (token text), within limits.
  private left = margin.left;
  private marginFor: { data: HeatmapData | null; width: number | null } = { data: null, width: null };

  constructor(private readonly options: HeatmapOptions) {
    const liveId = uid('heatmap-live');
    this.canvas = el('canvas', {
      class: 'heatmap-canvas',
      tabindex: 0,
      role: 'application',
      'aria-roledescription': 'heatmap',
      'aria-describedby': liveId,
    });
    this.tooltip = el('div', { class: 'heatmap-tooltip', 'aria-hidden': 'true', hidden: true });
    this.live = el('p', { id: liveId, class: 'heatmap-readout', 'aria-live': 'polite' });
    this.legend = el('canvas', { class: 'heatmap-legend', width: 240, height: 12, 'aria-hidden': 'true' });
    this.legendLabels = el('div', { class: 'heatmap-legend-labels' });
    // A scrolling region: focusable so a keyboard can scroll it (and axe asks for it).
    this.tableHost = el('div', { class: 'heatmap-table', hidden: true, tabindex: 0, role: 'region', 'aria-label': 'Heatmap values as a table' });

    // Each button's name says which heatmap it acts on ("Show layer 0, head 1 as a table"): a page
    // has many heatmaps, and a list of buttons all called "PNG" tells a screen reader nothing.
    // The words beyond the visible label are visually hidden.
    const tableToggle = el('button', { type: 'button', class: 'small', 'aria-expanded': 'false' });
    tableToggle.addEventListener('click', () => {
      const open = this.tableHost.hidden;
      this.tableHost.hidden = !open;
      tableToggle.setAttribute('aria-expanded', String(open));
      this.nameButtons();
      if (open) this.renderTable();
    });
    const png = el('button', { type: 'button', class: 'small' });
    png.addEventListener('click', () => downloadCanvasPng(this.canvas, `${this.fileName()}.png`));
    const svg = el('button', { type: 'button', class: 'small' });
    svg.addEventListener('click', () => downloadSvg(this.toSvg(), `${this.fileName()}.svg`));
    this.buttons = { table: tableToggle, png, svg };

    this.root = el(
      'figure',
      { class: 'heatmap' },
      el('div', { class: 'heatmap-stage' }, this.canvas, this.tooltip),
      el(
        'div',
        { class: 'heatmap-footer' },
        el('div', { class: 'legend' }, this.legend, this.legendLabels),
        el('span', { class: 'legend-masked' }, el('span', { class: 'swatch-masked', 'aria-hidden': 'true' }), 'masked (not computed)'),
        el('span', { class: 'heatmap-actions' }, tableToggle, el('span', { class: 'export-label', 'aria-hidden': 'true' }, 'Save:'), png, svg),
      ),
      this.live,
      this.tableHost,
    );
    this.canvas.addEventListener('mousemove', (e) => this.onHover(e));
    this.canvas.addEventListener('mouseleave', () => (this.tooltip.hidden = true));
    this.canvas.addEventListener('click', (e) => {
      const hit = this.cellAt(e);
      if (hit) {
        this.focus = hit;
        this.select(hit.row);
      }
    });
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    this.canvas.addEventListener('focus', () => this.announce());
    this.setTitle(options.title, options.name);
    // Cells are sized to the width the heatmap gets: redraw when it changes.
    observeWidth(this.canvas.parentElement!, (width) => {
      this.stageWidth = width;
      this.draw();
    });
  }

  /** Renames the heatmap when what it shows changes (e.g. another layer or head); `name` is what its buttons call it. */
  setTitle(title: string, name = title): void {
    this.title = title;
    this.name = name;
    this.canvas.setAttribute('aria-label', `${title}. Arrow keys move between cells, Enter follows a row.`);
    this.nameButtons();
    if (!this.tableHost.hidden) this.renderTable();
  }

  /** Visible "Show as a table", "PNG", "SVG"; read out with the heatmap's name. */
  private nameButtons(): void {
    const hidden = (text: string) => el('span', { class: 'visually-hidden' }, text);
    const { table, png, svg } = this.buttons;
    if (this.tableHost.hidden) table.replaceChildren('Show', hidden(` ${this.name}`), ' as a table');
    else table.replaceChildren('Hide the table', hidden(` of ${this.name}`));
    png.replaceChildren(hidden(`Save ${this.name} as `), 'PNG');
    svg.replaceChildren(hidden(`Save ${this.name} as `), 'SVG');
  }

  /** Renames the axes, for a heatmap that shows another kind of matrix next (drawn with the next setData). */
  setAxes(rowAxis: string, colAxis: string): void {
    this.options.rowAxis = rowAxis;
    this.options.colAxis = colAxis;
  }

  /** New values; `highlight` (when given) also sets the highlighted row, drawn in the same pass. */
  setData(data: HeatmapData, highlight?: number | null): void {
    this.data = data;
    if (highlight !== undefined) this.selectedRow = highlight;
    this.focus.row = Math.min(this.focus.row, data.rows - 1);
    this.focus.col = Math.min(this.focus.col, data.cols - 1);
    if (this.selectedRow !== null && this.selectedRow >= data.rows) this.selectedRow = null;
    this.draw();
    this.drawLegend();
    if (!this.tableHost.hidden) this.renderTable();
  }

  /** Highlights one row (the "followed" query) without firing onSelectRow. */
  highlightRow(row: number | null): void {
    if (row === this.selectedRow) return;
    this.selectedRow = row;
    this.draw();
  }

  private fileName(): string {
    return this.title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  }

  private draw(): void {
    const data = this.data;
    // Until the ResizeObserver has reported the stage's width there is nothing to size
    // the cells by; its first report (before the next frame is painted) draws. Asking
    // for clientWidth here instead would force a layout of the page in the middle of
    // building it, which was the largest single cost of the chapter's first heatmap.
    if (!data || this.stageWidth === null) return;
    const stageWidth = this.stageWidth;
    const ctx = this.canvas.getContext('2d')!;
    // The row labels are measured once per data and width, not on every redraw (a
    // highlighted row or the focus moving redraws the same labels).
    if (this.marginFor.data !== data || this.marginFor.width !== stageWidth) {
      this.left = this.leftMargin(ctx, data, stageWidth || 320);
      this.marginFor = { data, width: stageWidth };
    }
    const available = Math.max(120, (stageWidth || 320) - this.left - 4);
    this.cell = Math.max(4, Math.min(this.options.maxCellPx ?? 28, Math.floor(available / data.cols)));
    // The axis titles are drawn whole: a heatmap of few rows or columns grows to hold them
    // (a one-token step would otherwise cut "key position" to "key p").
    const colTitle = `${this.options.colAxis} →`, rowTitle = `${this.options.rowAxis} →`;
    const titles = { col: labelWidth(ctx, colTitle), row: labelWidth(ctx, rowTitle) };
    const width = Math.max(this.left + data.cols * this.cell + 2, Math.ceil(this.left + titles.col + 2));
    const height = Math.max(margin.top + data.rows * this.cell + 2, Math.ceil(margin.top + titles.row + 2));
    const ratio = window.devicePixelRatio || 1;
    // Resizing a canvas reallocates its pixels and invalidates layout: only when the size changes.
    if (this.canvas.width !== Math.round(width * ratio) || this.canvas.height !== Math.round(height * ratio)) {
      this.canvas.width = Math.round(width * ratio);
      this.canvas.height = Math.round(height * ratio);
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);

    // The cells: one pixel each in an image, scaled up in one drawImage without
    // smoothing; then the hatching of the masked cells, one path filled once. (A
    // fillRect per cell, three for a masked one, cost 3 to 9 ms for a 40 x 40 heatmap.)
    this.hatch ??= this.hatchPattern(ctx);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.cellImage(data), this.left, margin.top, data.cols * this.cell, data.rows * this.cell);
    // One rectangle per run of masked cells in a row, not one per cell: filling a 32-token
    // causal triangle took 3.5 to 4.2 ms so, against 4.9 to 9.5 with a rectangle per cell.
    ctx.beginPath();
    for (const [r, start, end] of maskedRuns(data.rows, data.cols, (r, c) => data.allowed(r, c)))
      ctx.rect(this.left + start * this.cell, margin.top + r * this.cell, (end - start) * this.cell, this.cell);
    ctx.fillStyle = this.hatch;
    ctx.fill();
    // Axis labels: every label when cells are wide enough, else every few.
    ctx.fillStyle = '#333';
    ctx.font = labelFont;
    ctx.textAlign = 'center';
    const every = Math.max(1, Math.ceil(14 / this.cell));
    for (let c = 0; c < data.cols; c += every) ctx.fillText(data.colLabel(c), this.left + (c + 0.5) * this.cell, margin.top - 6, this.cell * every);
    ctx.textAlign = 'right';
    // maxWidth squeezes labels longer than the margin allows between the axis title and the cells.
    for (let r = 0; r < data.rows; r += every) ctx.fillText(data.rowLabel(r), this.left - 4, margin.top + (r + 0.5) * this.cell + 3, this.left - 4 - axisTitleWidth);
    ctx.textAlign = 'left';
    ctx.fillText(colTitle, this.left, 10);
    ctx.save();
    ctx.translate(9, margin.top);
    ctx.rotate(Math.PI / 2);
    ctx.fillText(rowTitle, 0, 0);
    ctx.restore();

    if (this.selectedRow !== null) {
      ctx.strokeStyle = '#ff6d00';
      ctx.lineWidth = 2;
      ctx.strokeRect(this.left + 1, margin.top + this.selectedRow * this.cell + 1, data.cols * this.cell - 2, this.cell - 2);
    }
    if (document.activeElement === this.canvas) {
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.strokeRect(this.left + this.focus.col * this.cell + 1, margin.top + this.focus.row * this.cell + 1, this.cell - 2, this.cell - 2);
    }
  }

  /** Every cell's colour as one pixel (masked cells in the masked fill), on a canvas of cols x rows. */
  private cellImage(data: HeatmapData): HTMLCanvasElement {
    const image = (this.cells ??= document.createElement('canvas'));
    if (image.width !== data.cols || image.height !== data.rows) {
      image.width = data.cols;
      image.height = data.rows;
    }
    const context = image.getContext('2d')!;
    const pixels = context.createImageData(data.cols, data.rows);
    const masked = rgb(forbiddenFill);
    for (let r = 0, at = 0; r < data.rows; r++)
      for (let c = 0; c < data.cols; c++, at += 4) {
        const [red, green, blue] = data.allowed(r, c) ? rgb(data.scale(data.value(r, c))) : masked;
        pixels.data[at] = red;
        pixels.data[at + 1] = green;
        pixels.data[at + 2] = blue;
        pixels.data[at + 3] = 255;
      }
    context.putImageData(pixels, 0, 0);
    return image;
  }

  /** The left margin for these row labels: the default, or wider for long ones, up to a quarter of the width. */
  private leftMargin(ctx: CanvasRenderingContext2D, data: HeatmapData, stageWidth: number): number {
    let widest = 0;
    for (let r = 0; r < data.rows; r++) widest = Math.max(widest, labelWidth(ctx, data.rowLabel(r)));
    return Math.round(Math.min(Math.max(margin.left, axisTitleWidth + widest + 4), Math.max(margin.left, stageWidth / 4)));
  }

  private hatchPattern(ctx: CanvasRenderingContext2D): CanvasPattern | string {
    const tile = document.createElement('canvas');
    tile.width = tile.height = 6;
    const t = tile.getContext('2d')!;
    t.strokeStyle = forbiddenHatch;
    t.lineWidth = 1;
    t.beginPath();
    t.moveTo(0, 6);
    t.lineTo(6, 0);
    t.stroke();
    return ctx.createPattern(tile, 'repeat') ?? forbiddenHatch;
  }

  private drawLegend(): void {
    const data = this.data;
    if (!data) return;
    const ctx = this.legend.getContext('2d')!;
    const [lo, hi] = data.domain;
    // 33 stops follow viridis and the diverging scale closely, at a fraction of a per-pixel fill's cost.
    const gradient = ctx.createLinearGradient(0, 0, this.legend.width, 0);
    for (let i = 0; i <= 32; i++) gradient.addColorStop(i / 32, data.scale(lo + ((hi - lo) * i) / 32));
    ctx.fillStyle = gradient;
    ctx.fillRect(0, 0, this.legend.width, this.legend.height);
    this.legendLabels.replaceChildren(
      el('span', {}, formatNumber(lo, 2)),
      el('span', {}, formatNumber((lo + hi) / 2, 2)),
      el('span', {}, formatNumber(hi, 2)),
    );
  }

  private cellAt(e: MouseEvent): { row: number; col: number } | null {
    if (!this.data) return null;
    const rect = this.canvas.getBoundingClientRect();
    const col = Math.floor((e.clientX - rect.left - this.left) / this.cell);
    const row = Math.floor((e.clientY - rect.top - margin.top) / this.cell);
    if (row < 0 || col < 0 || row >= this.data.rows || col >= this.data.cols) return null;
    return { row, col };
  }

  private onHover(e: MouseEvent): void {
    const hit = this.cellAt(e);
    if (!hit || !this.data) {
      this.tooltip.hidden = true;
      return;
    }
    this.tooltip.textContent = this.data.describe(hit.row, hit.col);
    this.tooltip.hidden = false;
    this.placeTooltip(e.clientX, e.clientY);
  }

  /**
   * Beside the pointer, below and to the right of it, within what shows of the stage:
   * its box, scrolled (it scrolls sideways) and cut to the viewport. Above the pointer
   * where there is no room below (the last rows), to its left where there is none to the
   * right, and pushed inside where neither fits.
   */
  private placeTooltip(clientX: number, clientY: number): void {
    const gap = 12;
    const stage = this.canvas.parentElement!;
    // Measured at the stage's top left corner, where nothing squeezes it.
    this.tooltip.style.left = '0px';
    this.tooltip.style.top = '0px';
    const tip = this.tooltip.getBoundingClientRect();
    const box = stage.getBoundingClientRect();
    const inner = { left: box.left + stage.clientLeft, top: box.top + stage.clientTop };
    const viewport = document.documentElement;
    const room = {
      left: Math.max(inner.left, 0),
      top: Math.max(inner.top, 0),
      right: Math.min(inner.left + stage.clientWidth, viewport.clientWidth),
      bottom: Math.min(inner.top + stage.clientHeight, viewport.clientHeight),
    };
    const place = (pointer: number, size: number, from: number, to: number) => {
      let at = pointer + gap;
      if (at + size > to) at = pointer - gap - size;
      return Math.max(from, Math.min(at, to - size));
    };
    const x = place(clientX, tip.width, room.left, room.right);
    const y = place(clientY, tip.height, room.top, room.bottom);
    // Client coordinates -> the stage's (an absolute box is placed from its padding box, and scrolls with it).
    this.tooltip.style.left = `${x - inner.left + stage.scrollLeft}px`;
    this.tooltip.style.top = `${y - inner.top + stage.scrollTop}px`;
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.data) return;
    const { rows, cols } = this.data;
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key in moves) {
      const [dr, dc] = moves[e.key];
      this.focus.row = Math.min(rows - 1, Math.max(0, this.focus.row + dr));
      this.focus.col = Math.min(cols - 1, Math.max(0, this.focus.col + dc));
    } else if (e.key === 'Home') {
      this.focus.col = 0;
    } else if (e.key === 'End') {
      this.focus.col = cols - 1;
    } else if (e.key === 'Enter' || e.key === ' ') {
      this.select(this.focus.row);
    } else {
      return;
    }
    e.preventDefault();
    this.draw();
    this.announce();
  }

  private select(row: number): void {
    this.selectedRow = row;
    this.options.onSelectRow?.(row);
    this.draw();
    this.announce();
  }

  private announce(): void {
    if (!this.data) return;
    this.live.textContent = this.data.describe(this.focus.row, this.focus.col);
    this.draw();
  }

  private renderTable(): void {
    const data = this.data;
    if (!data) return;
    const head = el('tr', {}, el('th', { scope: 'col' }, `${this.options.rowAxis} \\ ${this.options.colAxis}`));
    for (let c = 0; c < data.cols; c++) head.append(el('th', { scope: 'col' }, data.colLabel(c)));
    const body = el('tbody');
    for (let r = 0; r < data.rows; r++) {
      const tr = el('tr', {}, el('th', { scope: 'row' }, data.rowLabel(r)));
      for (let c = 0; c < data.cols; c++)
        tr.append(el('td', data.allowed(r, c) ? {} : { class: 'masked' }, data.allowed(r, c) ? formatNumber(data.value(r, c)) : '–'));
      body.append(tr);
    }
    this.tableHost.replaceChildren(el('table', {}, el('caption', {}, this.title), el('thead', {}, head), body));
  }

  private toSvg(): string {
    const data = this.data;
    if (!data) return '';
    const c = 20, left = this.left, w = left + data.cols * c, h = margin.top + data.rows * c;
    const parts = [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="9">`,
      `<title>${xmlEscape(this.title)}</title>`,
      `<defs><pattern id="masked" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="${forbiddenFill}"/><path d="M0 6L6 0" stroke="${forbiddenHatch}"/></pattern></defs>`,
    ];
    for (let r = 0; r < data.rows; r++) {
      parts.push(`<text x="${left - 4}" y="${margin.top + r * c + 13}" text-anchor="end">${xmlEscape(data.rowLabel(r))}</text>`);
      for (let col = 0; col < data.cols; col++) {
        const fill = data.allowed(r, col) ? data.scale(data.value(r, col)) : 'url(#masked)';
        parts.push(`<rect x="${left + col * c}" y="${margin.top + r * c}" width="${c}" height="${c}" fill="${fill}"><title>${xmlEscape(data.describe(r, col))}</title></rect>`);
      }
    }
    for (let col = 0; col < data.cols; col++)
      parts.push(`<text x="${left + col * c + c / 2}" y="${margin.top - 6}" text-anchor="middle">${xmlEscape(data.colLabel(col))}</text>`);
    parts.push('</svg>');
    return parts.join('\n');
  }
}
