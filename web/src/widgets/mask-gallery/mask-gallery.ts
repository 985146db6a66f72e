// The mask gallery: masks used in real systems, cell by cell and as the
// FlashAttention tiles they let a kernel skip. Every count comes from the wasm
// core's maskTiles(spec, Br, Bc) (core/masks.hpp):
//   states: Uint8Array [rows * cols], 0 skipped, 1 partial, 2 full
//   rows = ceil(T / Br) tiles down, cols = ceil(S / Bc) tiles across
// The cell-level picture is the same call with 1 x 1 tiles (state 2 = visible).
//
// Controls (data-testid): mask-gallery-kind, mask-gallery-T, mask-gallery-S, mask-gallery-tile-q (Br) and mask-gallery-tile-k (Bc),
// two selects so a kernel's unequal tiles (Br = 128, Bc = 64) can be shown, and
// mask-gallery-window, mask-gallery-sinks, mask-gallery-prefix, mask-gallery-chunk, mask-gallery-docs, shown only for the masks
// that use them. The host gets data-updated-ms (core + drawing of the last
// update) and data-spec (the spec of the picture on show).
import './mask-gallery.css';
import type { TileResult } from '../../lib/core';
import { el, setStatus } from '../../lib/dom';
import { stillShowing } from '../../lib/fields';
import { count } from '../../lib/words';
import type { WidgetContext } from '../../lib/widget';
import { MaskControls } from './mask-controls';
import { MaskCounts } from './mask-counts';
import { cellLimit, MaskFigure, MaskPicture } from './mask-figure';
import { fmt, kinds } from './mask-kinds';

export function mountMaskGallery(root: HTMLElement, context: WidgetContext): void {
  const { core, state } = context;
  const host = root.closest<HTMLElement>('[data-widget]') ?? root;
  const controls = new MaskControls(() => update(true));
  const figure = new MaskFigure();
  const counts = new MaskCounts();
  const kindNote = el('p', { class: 'mask-note', 'data-testid': 'mask-gallery-note' });
  const status = el('p', { class: 'status', 'data-testid': 'mask-gallery-status' });
  const timing = el('p', { class: 'mask-time', 'data-testid': 'mask-gallery-time' });
  root.append(
    controls.root,
    kindNote,
    el('div', { class: 'mask-status-row' }, status, timing),
    figure.root,
    counts.root,
    el(
      'p',
      { class: 'mask-caption' },
      'Tiles on the bottom or right edge that hang past T or S are judged by their cells inside the matrix only; a kernel still keeps the padding out of the result, with a bounds check rather than the mask.',
    ),
  );
  // What the pictures show now; bad input leaves it in place.
  let shown: MaskPicture | null = null;

  // One update: core, then both pictures and the numbers.
  function update(save: boolean): void {
    controls.reset();
    const read = controls.readSpec();
    // What stays on show while `inputs` are invalid: their values in the picture, or the picture as a whole.
    const keep = (inputs: HTMLElement[]) => {
      if (!shown) return '';
      const values = controls.shownValues(inputs, shown);
      return values.length
        ? stillShowing(values)
        : ` Still showing the last valid mask (${shown.label}, T = ${fmt(shown.spec.T)}, S = ${fmt(shown.spec.S)}).`;
    };
    if ('error' in read) {
      for (const input of read.input) input.setAttribute('aria-invalid', 'true');
      setStatus(status, read.error + keep(read.input), 'error');
      return;
    }
    const { spec } = read;
    const tq = Number(controls.tileQ.value), tk = Number(controls.tileK.value);
    const start = performance.now();
    let tiles: TileResult, cells: TileResult | null = null;
    try {
      tiles = core.maskTiles(spec, tq, tk);
      if (spec.T <= cellLimit && spec.S <= cellLimit) cells = core.maskTiles(spec, 1, 1);
    } catch (error) {
      const message = error instanceof Error ? error.message.replace(/^invalid mask: /, '') : String(error);
      const culprits = controls.culprits(message);
      for (const input of culprits) input.setAttribute('aria-invalid', 'true');
      setStatus(status, `The core cannot build this mask: ${message}.${keep(culprits)}`, 'error');
      return;
    }
    const coreMs = performance.now() - start;
    const kind = kinds[controls.kind.value];
    shown = { spec, kind: controls.kind.value, label: kind.label, tq, tk, tiles, cells };
    const drawMs = figure.show(shown);
    counts.show(spec, tiles);
    kindNote.textContent = kind.note(spec);

    const ms = performance.now() - start;
    host.dataset.updatedMs = ms.toFixed(2);
    host.dataset.spec = JSON.stringify({ ...spec, tile_q: tq, tile_k: tk });
    timing.textContent = `Updated in ${ms.toFixed(1)} ms (core ${coreMs.toFixed(1)} ms, drawing ${drawMs.toFixed(1)} ms)`;
    setStatus(
      status,
      `T = ${count(spec.T, 'query', 'queries')}, S = ${count(spec.S, 'key')}.` +
        (cells ? '' : ` The cell-by-cell picture appears when T and S are at most ${fmt(cellLimit)}.`),
    );
    if (save) controls.save(state);
  }

  controls.restore(state);
  update(false);
}
