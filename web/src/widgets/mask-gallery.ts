// W3, the mask gallery: masks used in real systems, cell by cell and as the
// FlashAttention tiles they let a kernel skip. Every count comes from the wasm
// core's maskTiles(spec, Br, Bc) (core/masks.hpp):
//   states: Uint8Array [rows * cols], 0 skipped, 1 partial, 2 full
//   rows = ceil(T / Br) tiles down, cols = ceil(S / Bc) tiles across
// The cell-level picture is the same call with 1 x 1 tiles (state 2 = visible).
//
// Controls (data-testid): w3-kind, w3-T, w3-S, w3-tile-q (Br) and w3-tile-k (Bc),
// two selects so a kernel's unequal tiles (Br = 128, Bc = 64) can be shown, and
// w3-window, w3-sinks, w3-prefix, w3-chunk, w3-docs, shown only for the masks
// that use them. The host gets data-updated-ms (core + drawing of the last
// update) and data-spec (the spec of the picture on show).
import './mask-gallery.css';
import { CoreError, RawCore } from '../lib/core';
import { el, labelled, numberInput, select, setStatus } from '../lib/dom';
import { downloadCanvasPng } from '../lib/export';
import type { WidgetContext } from '../lib/widget';
import { GridGeometry, StateGrid, StateStyle } from './state-grid';

type Param = 'window' | 'sinks' | 'prefix' | 'chunk' | 'docs';

interface MaskSpec {
  kind: string;
  T: number;
  S: number;
  window?: number;
  sinks?: number;
  prefix?: number;
  chunk?: number;
  document_lengths?: number[];
}

interface TileResult {
  rows: number;
  cols: number;
  skipped: number;
  partial: number;
  full: number;
  visible_cells: number;
  skipped_fraction: number;
  states: Uint8Array;
}

interface Kind {
  label: string;
  core: string;           // the core's MaskKind name
  uses: Param[];
  note(spec: MaskSpec): string;
}

const fmt = (n: number) => n.toLocaleString('en-US');

const kinds: Record<string, Kind> = {
  full: {
    label: 'Full (no mask)', core: 'full', uses: [],
    note: (m) => `Every query sees all ${fmt(m.S)} keys, as in an encoder or in cross-attention. No tile can be skipped.`,
  },
  causal: {
    label: 'Causal', core: 'causal', uses: [],
    note: (m) =>
      m.T === m.S
        ? 'Each query sees its own position and every earlier one: the lower triangle.'
        : `Each query sees its own position and every earlier one. With T < S the queries sit at positions ${fmt(m.S - m.T)} to ${fmt(m.S - 1)}, so the diagonal moves right by S − T = ${fmt(m.S - m.T)}.`,
  },
  causal_offset: {
    label: 'Causal with a KV cache (T < S)', core: 'causal', uses: [],
    note: (m) =>
      m.T === m.S
        ? 'With T = S nothing is cached yet and this is the plain causal mask. Make T smaller than S to add a history.'
        : `${fmt(m.T)} new queries after ${fmt(m.S - m.T)} cached keys. They sit at positions ${fmt(m.S - m.T)} to ${fmt(m.S - 1)}, so the diagonal moves right by S − T = ${fmt(m.S - m.T)}; with T = 1 (decoding) the single row sees every key.`,
  },
  sliding_window: {
    label: 'Sliding window', core: 'sliding_window', uses: ['window'],
    note: (m) => `Each query sees the last ${fmt(m.window!)} keys up to its own position. Mistral, Gemma and gpt-oss use windows like this in some or all layers.`,
  },
  sink_window: {
    label: 'Sink tokens + window', core: 'sink_window', uses: ['sinks', 'window'],
    note: (m) => `The first ${fmt(m.sinks!)} keys (the attention sinks) stay visible to every later query, besides its window of ${fmt(m.window!)}. StreamingLLM keeps them so that the model does not collapse when older keys are dropped.`,
  },
  prefix_lm: {
    label: 'Prefix-LM', core: 'prefix_lm', uses: ['prefix'],
    note: (m) => `Every query sees the first ${fmt(m.prefix!)} keys, the prefix, in both directions; after the prefix, attention is causal.`,
  },
  document: {
    label: 'Document masking (packed sequences)', core: 'document', uses: ['docs'],
    note: (m) => `${m.document_lengths!.length} documents packed into one sequence of ${fmt(m.S)}. A query sees the earlier keys of its own document only, never another document's.`,
  },
  chunked: {
    label: 'Chunked local attention', core: 'chunked', uses: ['chunk'],
    note: (m) => `The sequence is cut into chunks of ${fmt(m.chunk!)} positions; a query sees the earlier keys of its own chunk only (the local-attention layers of Llama 4 work this way).`,
  },
};

const maxLength = 16384;
const tileSizes = ['16', '32', '64', '128'];
// The cell-level picture needs a few pixels a cell: only up to this many rows and columns.
const cellLimit = 256;

// Skipped tiles look like masked cells elsewhere on the page: light grey, hatched.
const skippedStyle: StateStyle = { fill: '#e8e8ec', texture: 'hatch', ink: '#8a8a96' };
const partialStyle: StateStyle = { fill: '#f2a03d', texture: 'dots', ink: '#7a3f00' };
const fullStyle: StateStyle = { fill: '#3b4cc0', texture: 'solid' };
const tileLineColor = '#e8590c';

const stateNames = ['skipped', 'partial', 'full'];
const stateMeaning = [
  'no query in it may see any of its keys, so the kernel never loads this K/V block for these queries',
  'some of its scores are masked, so the kernel computes the block and then applies the mask element by element',
  'every score in it is visible, so the kernel computes the block with no mask at all',
];

/** "300, 500, 224" into lengths, or what is wrong with the text. */
function parseLengths(text: string): number[] | string {
  const parts = text.split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) return 'Type the document lengths, e.g. 300,500,224.';
  if (parts.length > 4096) return 'At most 4,096 documents.';
  const lengths: number[] = [];
  for (const part of parts) {
    if (!/^\d+$/.test(part) || Number(part) < 1) return `"${part}" is not a document length: lengths are whole numbers of at least 1.`;
    lengths.push(Number(part));
  }
  return lengths;
}

/** Three documents of about 30%, 45% and 25% of S (fewer when S is tiny). */
function splitLengths(S: number): number[] {
  if (S < 3) return [S];
  const a = Math.max(1, Math.round(S * 0.3)), b = Math.max(1, Math.round(S * 0.45));
  return [a, b, S - a - b];
}

function maskTiles(core: RawCore, spec: MaskSpec, tileQ: number, tileK: number): TileResult {
  const fn = core.maskTiles as (spec: string, tq: number, tk: number) => TileResult | { error: string };
  if (typeof fn !== 'function') throw new CoreError('the wasm core has no function maskTiles');
  const result = fn.call(core, JSON.stringify(spec), tileQ, tileK);
  if ('error' in result) throw new CoreError(result.error);
  return result;
}

function swatch(state: number): HTMLElement {
  return el('span', { class: `mask-swatch mask-swatch-${stateNames[state]}`, 'aria-hidden': 'true' });
}

export function mountMaskGallery(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const host = root.closest<HTMLElement>('[data-widget]') ?? root;

  // ---- controls
  const kindSelect = select(Object.entries(kinds).map(([value, k]) => [value, k.label]), 'causal');
  const T = numberInput('number', 1, maxLength, 1, 128);
  const S = numberInput('number', 1, maxLength, 1, 128);
  const tileQ = select(tileSizes.map((t) => [t, t]), '16');
  const tileK = select(tileSizes.map((t) => [t, t]), '16');
  const windowInput = numberInput('number', 1, maxLength, 1, 32);
  const sinks = numberInput('number', 0, maxLength, 1, 4);
  const prefix = numberInput('number', 0, maxLength, 1, 48);
  const chunk = numberInput('number', 1, maxLength, 1, 32);
  const docs = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'mask-docs', value: '40,56,32' });
  const testIds: [HTMLElement, string][] = [
    [kindSelect, 'w3-kind'], [T, 'w3-T'], [S, 'w3-S'], [tileQ, 'w3-tile-q'], [tileK, 'w3-tile-k'],
    [windowInput, 'w3-window'], [sinks, 'w3-sinks'], [prefix, 'w3-prefix'], [chunk, 'w3-chunk'], [docs, 'w3-docs'],
  ];
  for (const [node, id] of testIds) node.dataset.testid = id;

  const paramControls: Record<Param, HTMLElement> = {
    window: labelled('Window', windowInput, 'keys a query sees, itself included'),
    sinks: labelled('Sink tokens', sinks, 'first keys every query keeps'),
    prefix: labelled('Prefix length', prefix, 'keys seen in both directions'),
    chunk: labelled('Chunk size', chunk, 'positions per chunk'),
    docs: labelled('Document lengths', docs, 'comma-separated, adding up to S'),
  };
  const docsHint = paramControls.docs.querySelector<HTMLElement>('.hint')!;

  const kindNote = el('p', { class: 'mask-note', 'data-testid': 'w3-note' });
  const status = el('p', { class: 'status', 'data-testid': 'w3-status' });
  const timing = el('p', { class: 'mask-time', 'data-testid': 'w3-time' });

  // ---- pictures
  // What the pictures show now; bad input leaves it in place.
  let shown: { spec: MaskSpec; label: string; tq: number; tk: number; tiles: TileResult } | null = null;
  const cellGrid = new StateGrid({
    label: 'The mask cell by cell: rows are queries, columns keys',
    styles: [skippedStyle, partialStyle, fullStyle],
    maxHeight: 420,
    maxCellPx: 24,
    idleText: 'Point at a cell, or focus the picture and use the arrow keys, to read one query–key pair.',
    describe: (t, s, value) => {
      const { spec, tq, tk } = shown!;
      const q = t + spec.S - spec.T;
      return `Query row ${t} (position ${q}), key ${s}: ${value === 2 ? 'visible' : 'masked'}. It lies in tile row ${Math.floor(t / tq)}, tile column ${Math.floor(s / tk)}.`;
    },
    overlay: (ctx, g) => drawTileLines(ctx, g),
  });
  const tileGrid = new StateGrid({
    label: 'The tile map: one square per Br × Bc tile, skipped, partial or full',
    styles: [skippedStyle, partialStyle, fullStyle],
    maxHeight: 560,
    maxCellPx: 40,
    idleText: 'Point at a tile, or focus the map and use the arrow keys, to read one tile.',
    describe: (r, c, value) => describeTile(r, c, value),
  });

  function drawTileLines(ctx: CanvasRenderingContext2D, g: GridGeometry): void {
    if (!shown) return;
    const { tq, tk } = shown;
    const w = g.cols * g.pxX, h = g.rows * g.pxY;
    const line = Math.max(1, Math.round(Math.min(g.pxX, g.pxY) / 5));
    ctx.fillStyle = tileLineColor;
    for (let c = tk; c < g.cols; c += tk) ctx.fillRect(c * g.pxX - Math.floor(line / 2), 0, line, h);
    for (let r = tq; r < g.rows; r += tq) ctx.fillRect(0, r * g.pxY - Math.floor(line / 2), w, line);
  }

  function describeTile(r: number, c: number, value: number): string {
    const { spec, tq, tk } = shown!;
    const t0 = r * tq, t1 = Math.min(spec.T, t0 + tq) - 1;
    const s0 = c * tk, s1 = Math.min(spec.S, s0 + tk) - 1;
    const h = spec.S - spec.T;
    const overhang = t1 - t0 + 1 < tq || s1 - s0 + 1 < tk ? ' This edge tile hangs past the matrix; only its cells inside count.' : '';
    return (
      `Tile row ${r}, column ${c}: query rows ${t0}–${t1}` + (h ? ` (positions ${t0 + h}–${t1 + h})` : '') +
      `, keys ${s0}–${s1}. ${stateNames[value][0].toUpperCase()}${stateNames[value].slice(1)}: ${stateMeaning[value]}.${overhang}`
    );
  }

  const cellPanel = el(
    'div',
    { class: 'mask-panel', 'data-testid': 'w3-cells' },
    el('p', { class: 'mask-panel-title' }, 'Cell by cell'),
    cellGrid.root,
    el(
      'p',
      { class: 'mask-caption' },
      swatch(2), ' visible   ', swatch(0), ' masked   ',
      el('span', { class: 'mask-tile-line', 'aria-hidden': 'true' }), ' tile borders',
    ),
  );
  const pngButton = el('button', { type: 'button', class: 'small', 'data-testid': 'w3-png' }, 'Save tile map as PNG');
  pngButton.addEventListener('click', () => {
    if (!shown) return;
    const { spec, tq, tk } = shown;
    downloadCanvasPng(tileGrid.canvas, `tile-map-${kindSelect.value}-T${spec.T}-S${spec.S}-${tq}x${tk}.png`);
  });
  const tileTitle = el('p', { class: 'mask-panel-title' });
  // Focusable, so a keyboard can scroll a wide map.
  const tileText = el('pre', { class: 'mask-tile-text', 'data-testid': 'w3-tile-text', tabindex: 0, role: 'region', 'aria-label': 'Tile map as text' });
  const tileTextBox = el('details', { class: 'mask-tile-text-box' }, el('summary', {}, 'Tile map as text'), tileText);
  tileTextBox.addEventListener('toggle', () => tileTextBox.open && writeTileText());
  const tilePanel = el('div', { class: 'mask-panel', 'data-testid': 'w3-tiles' }, tileTitle, tileGrid.root, el('div', { class: 'mask-actions' }, pngButton), tileTextBox);

  // ---- counts, each next to what it means for the kernel
  const count = (id: string) => el('span', { class: 'mask-count', 'data-testid': id }, '–');
  const skippedCount = count('w3-skipped'), partialCount = count('w3-partial'), fullCount = count('w3-full');
  const totalCount = count('w3-total');
  const skippedPct = el('strong', { 'data-testid': 'w3-skipped-pct' }, '–');
  const visible = el('span', { 'data-testid': 'w3-visible' }, '–');
  const cells = el('span', { 'data-testid': 'w3-cells-total' }, '–');
  const density = el('span', { 'data-testid': 'w3-density' }, '–');
  const tileShape = el('span', { 'data-testid': 'w3-grid' }, '–');
  const stateCard = (state: number, node: HTMLElement, meaning: string) =>
    el(
      'div',
      { class: `mask-card mask-card-${stateNames[state]}` },
      el('p', { class: 'mask-card-head' }, swatch(state), el('span', { class: 'mask-card-name' }, stateNames[state][0].toUpperCase() + stateNames[state].slice(1)), node),
      el('p', { class: 'mask-card-text' }, meaning),
    );
  const counts = el(
    'div',
    { class: 'mask-counts', 'data-testid': 'w3-counts' },
    stateCard(0, skippedCount, 'No query in the tile may see any key in it. A block-sparse FlashAttention kernel skips it outright: it never loads that K/V block for those queries and computes none of its scores.'),
    stateCard(1, partialCount, 'Some scores in the tile are masked. The kernel computes the whole Br × Bc block, then applies the mask element by element (masked scores become −∞) before the online softmax.'),
    stateCard(2, fullCount, 'Every score in the tile is visible. The kernel computes the block with no mask at all, its fastest path.'),
    el(
      'div',
      { class: 'mask-card mask-card-total' },
      el('p', { class: 'mask-card-head' }, el('span', { class: 'mask-card-name' }, 'Total'), totalCount),
      el('p', { class: 'mask-card-text' }, tileShape, ' tiles. Work skipped (skipped ÷ total): ', skippedPct, '.'),
      el('p', { class: 'mask-card-text' }, 'Visible cells: ', visible, ' of ', cells, ', a density of ', density, '.'),
    ),
  );
  const edgeNote = el(
    'p',
    { class: 'mask-caption' },
    'Tiles on the bottom or right edge that hang past T or S are judged by their cells inside the matrix only; a kernel still keeps the padding out of the result, with a bounds check rather than the mask.',
  );

  const controls = el(
    'div',
    { class: 'controls mask-controls' },
    labelled('Mask', kindSelect),
    labelled('Queries T', T, `1 to ${fmt(maxLength)}`),
    labelled('Keys S', S, `T to ${fmt(maxLength)}`),
    labelled('Tile rows Br', tileQ, 'queries per tile'),
    labelled('Tile columns Bc', tileK, 'keys per tile'),
    ...Object.values(paramControls),
  );
  root.append(
    controls,
    kindNote,
    el('div', { class: 'mask-status-row' }, status, timing),
    el('div', { class: 'mask-views' }, cellPanel, tilePanel),
    counts,
    edgeNote,
  );

  // ---- reading the inputs
  const numberFields: { input: HTMLInputElement; key: 'T' | 'S' | Param; name: string; min: number; max: number }[] = [
    { input: T, key: 'T', name: 'T', min: 1, max: maxLength },
    { input: S, key: 'S', name: 'S', min: 1, max: maxLength },
    { input: windowInput, key: 'window', name: 'The window', min: 1, max: maxLength },
    { input: sinks, key: 'sinks', name: 'The number of sink tokens', min: 0, max: maxLength },
    { input: prefix, key: 'prefix', name: 'The prefix length', min: 0, max: maxLength },
    { input: chunk, key: 'chunk', name: 'The chunk size', min: 1, max: maxLength },
  ];

  function readNumber(input: HTMLInputElement, name: string, min: number, max: number): number | string {
    const text = input.value.trim();
    const value = Number(text);
    if (text === '' || !Number.isInteger(value) || value < min || value > max)
      return `${name} must be a whole number from ${fmt(min)} to ${fmt(max)}${text === '' ? '' : `, not "${text}"`}.`;
    return value;
  }

  /** The spec the inputs describe, or the first problem with them and its input. */
  function readSpec(): { spec: MaskSpec } | { error: string; input: HTMLElement[] } {
    const kind = kinds[kindSelect.value];
    const spec: MaskSpec = { kind: kind.core, T: 0, S: 0 };
    for (const { input, key, name, min, max } of numberFields) {
      if (key !== 'T' && key !== 'S' && !kind.uses.includes(key)) continue;
      const value = readNumber(input, name, min, max);
      if (typeof value === 'string') return { error: value, input: [input] };
      (spec as unknown as Record<string, number>)[key] = value;
    }
    if (kind.uses.includes('docs')) {
      const lengths = parseLengths(docs.value);
      if (typeof lengths === 'string') return { error: lengths, input: [docs] };
      spec.document_lengths = lengths;
    }
    return { spec };
  }

  /** Which inputs a core message is about, so they can be marked invalid. */
  function culprits(message: string): HTMLElement[] {
    if (/document/.test(message)) return [docs];
    if (/prefix/.test(message)) return [prefix];
    if (/window/.test(message)) return [windowInput];
    if (/sink/.test(message)) return [sinks];
    if (/chunk/.test(message)) return [chunk];
    return [T, S];
  }

  function showParams(): void {
    const kind = kinds[kindSelect.value];
    for (const [param, control] of Object.entries(paramControls) as [Param, HTMLElement][]) control.hidden = !kind.uses.includes(param);
  }

  function updateDocsHint(): void {
    const lengths = parseLengths(docs.value);
    const sum = typeof lengths === 'string' ? null : lengths.reduce((a, b) => a + b, 0);
    docsHint.textContent = sum === null ? 'comma-separated, adding up to S' : `comma-separated; they add up to ${fmt(sum)}, S is ${S.value || '?'}`;
  }

  // ---- one update: core, then both pictures and the numbers
  function update(save: boolean): void {
    for (const [node] of testIds) node.removeAttribute('aria-invalid');
    updateDocsHint();
    const read = readSpec();
    const keep = shown ? ` Still showing the last valid mask (${shown.label}, T = ${fmt(shown.spec.T)}, S = ${fmt(shown.spec.S)}).` : '';
    if ('error' in read) {
      for (const input of read.input) input.setAttribute('aria-invalid', 'true');
      setStatus(status, read.error + keep, 'error');
      return;
    }
    const { spec } = read;
    const tq = Number(tileQ.value), tk = Number(tileK.value);
    const start = performance.now();
    let tiles: TileResult, cellMask: TileResult | null = null;
    try {
      tiles = maskTiles(core, spec, tq, tk);
      if (spec.T <= cellLimit && spec.S <= cellLimit) cellMask = maskTiles(core, spec, 1, 1);
    } catch (error) {
      const message = error instanceof Error ? error.message.replace(/^invalid mask: /, '') : String(error);
      for (const input of culprits(message)) input.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core cannot build this mask: ${message}.${keep}`, 'error');
      return;
    }
    const coreMs = performance.now() - start;
    shown = { spec, label: kinds[kindSelect.value].label, tq, tk, tiles };

    let drawMs = tileGrid.setData(tiles.rows, tiles.cols, tiles.states);
    cellPanel.hidden = cellMask === null;
    if (cellMask) drawMs += cellGrid.setData(cellMask.rows, cellMask.cols, cellMask.states);
    tileTitle.textContent = `Tile map: ${fmt(tiles.rows)} × ${fmt(tiles.cols)} tiles of Br × Bc = ${tq} × ${tk}`;
    tileGrid.setLabel(`Tile map of the ${kinds[kindSelect.value].label.toLowerCase()} mask, ${tiles.rows} by ${tiles.cols} tiles of ${tq} by ${tk}`);

    const total = tiles.rows * tiles.cols;
    skippedCount.textContent = fmt(tiles.skipped);
    partialCount.textContent = fmt(tiles.partial);
    fullCount.textContent = fmt(tiles.full);
    totalCount.textContent = fmt(total);
    tileShape.textContent = `${fmt(tiles.rows)} × ${fmt(tiles.cols)}`;
    skippedPct.textContent = `${(100 * tiles.skipped_fraction).toFixed(2)}%`;
    visible.textContent = fmt(tiles.visible_cells);
    cells.textContent = fmt(spec.T * spec.S);
    density.textContent = `${((100 * tiles.visible_cells) / (spec.T * spec.S)).toFixed(2)}%`;
    kindNote.textContent = kinds[kindSelect.value].note(spec);
    tileTextBox.hidden = tiles.rows > 64 || tiles.cols > 64;
    if (tileTextBox.open) writeTileText();

    const ms = performance.now() - start;
    host.dataset.updatedMs = ms.toFixed(2);
    host.dataset.spec = JSON.stringify({ ...spec, tile_q: tq, tile_k: tk });
    timing.textContent = `Updated in ${ms.toFixed(1)} ms (core ${coreMs.toFixed(1)} ms, drawing ${drawMs.toFixed(1)} ms)`;
    setStatus(
      status,
      cellMask
        ? `T = ${fmt(spec.T)} queries, S = ${fmt(spec.S)} keys.`
        : `T = ${fmt(spec.T)} queries, S = ${fmt(spec.S)} keys. The cell-by-cell picture appears when T and S are at most ${cellLimit}.`,
    );
    if (save) saveState();
  }

  function writeTileText(): void {
    if (!shown || tileTextBox.hidden) return;
    const t = shown.tiles;
    const marks = ['·', 'P', 'F'];
    const lines = ['· skipped   P partial   F full'];
    for (let r = 0; r < t.rows; r++) lines.push(Array.from(t.states.subarray(r * t.cols, (r + 1) * t.cols), (s) => marks[s]).join(' '));
    tileText.textContent = lines.join('\n');
  }

  // ---- the URL (written at most every 250 ms; replaceState is not free)
  let saveTimer: number | null = null;
  function saveState(): void {
    if (saveTimer !== null) return;
    saveTimer = window.setTimeout(() => {
      saveTimer = null;
      const kind = kinds[kindSelect.value];
      state.set({
        kind: kindSelect.value, T: T.value, S: S.value, bq: tileQ.value, bk: tileK.value,
        window: kind.uses.includes('window') ? windowInput.value : null,
        sinks: kind.uses.includes('sinks') ? sinks.value : null,
        prefix: kind.uses.includes('prefix') ? prefix.value : null,
        chunk: kind.uses.includes('chunk') ? chunk.value : null,
        docs: kind.uses.includes('docs') ? docs.value : null,
      });
    }, 250);
  }

  function restore(): void {
    const kind = state.get('kind');
    if (kind && kind in kinds) kindSelect.value = kind;
    const pairs: [HTMLInputElement | HTMLSelectElement, string][] = [
      [T, 'T'], [S, 'S'], [windowInput, 'window'], [sinks, 'sinks'], [prefix, 'prefix'], [chunk, 'chunk'], [docs, 'docs'],
    ];
    // Values go into the inputs as they are; a bad one shows its message like typed input.
    for (const [input, name] of pairs) {
      const value = state.get(name);
      if (value !== null) input.value = value;
    }
    for (const [input, name] of [[tileQ, 'bq'], [tileK, 'bk']] as const) {
      const value = state.get(name);
      if (value !== null && tileSizes.includes(value)) input.value = value;
    }
  }

  // ---- wiring
  kindSelect.addEventListener('change', () => {
    const s = Number(S.value), t = Number(T.value);
    // Give the chosen mask a sensible start: a history for the cached case, lengths that fit S for documents.
    if (kindSelect.value === 'causal_offset' && Number.isInteger(s) && s > 1 && t >= s) T.value = String(Math.max(1, Math.floor(s / 4)));
    if (kindSelect.value === 'document' && Number.isInteger(s) && s >= 1) {
      const lengths = parseLengths(docs.value);
      if (typeof lengths === 'string' || lengths.reduce((a, b) => a + b, 0) !== s) docs.value = splitLengths(s).join(',');
    }
    showParams();
    update(true);
  });
  for (const input of [T, S, windowInput, sinks, prefix, chunk, docs]) input.addEventListener('input', () => update(true));
  for (const input of [tileQ, tileK]) input.addEventListener('change', () => update(true));

  restore();
  showParams();
  update(false);
}
