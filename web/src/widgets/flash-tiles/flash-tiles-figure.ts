// The flash kernel's own tiles for the mask gallery's mask, and one query row's online
// softmax stepped tile by tile.
//
// It follows the gallery above (its host's data-spec: the mask, T, S, Br and Bc on show).
// On a GPU that passed its checks, v1 flash (gpu/kernels/attention_v1_flash.wgsl) runs
// one head of 8 channels on the core's inputs for that mask, compiled with the
// gallery's Br x Bc, and records which tiles it computed with the mask, computed without
// it, or skipped, and one row's running maximum m and sum l after each key tile. The
// figure draws that record beside the gallery's prediction (the core's tile rule), and
// the core checks the record and the output. On the CPU the same figure draws the core's
// tile rule and its own steps instead.
//
// The row's steps come from the core (rowSteps, core/verify/online_softmax_steps.hpp, fp64):
// each tile's scores, m, l, the rescale e^(m_before - m_after) and the output so far; the
// kernel's m and l sit beside them. After the last tile, p_s = e^(s - m) / l with the
// kernel's m and l is compared with the plain softmax of the whole row.
//
// URL state: flash-tiles.row (the query row), flash-tiles.step (the key tile on show);
// flash-tiles.cpu is the door's (shared/gpu-gate.ts).
// The host gets data-mode (gpu or cpu), data-kernel-counts and data-gallery-counts
// ({skipped, partial, full}), data-agree, data-checks-failed, data-row-probs (the row's
// probabilities from the kernel's m and l, 0 where hidden) and data-probs-error.
import '../../styles/check-table.css';
import './flash-tiles.css';
import type { MaskSpec, TileResult } from '../../lib/core';
import type { CheckRecord } from '../../lib/core-types';
import { el, labelled, numberInput, setStatus, uid } from '../../lib/dom';
import type { CaseRef, KernelChecks, RowSteps } from '../../lib/kernel-checks-core';
import type { WidgetContext } from '../../lib/widget';
import { count, groupDigits } from '../../lib/words';
import { runAttention, tilesProblem } from '../../gpu/attention-gpu';
import { describeAdapter, type Gpu } from '../../gpu/gpu-device';
import { checkTable, recordRow } from '../../gpu/check-rows';
import { gpuSession } from '../../gpu/gpu-session';
import { GridGeometry, StateGrid, tileStateStyles } from '../shared/state-grid';

/** One head of the tiny model's size. */
const headSize = 8;
/** The largest T x S the figure runs: 2,048 x 2,048. */
const mostCells = 2048 * 2048;
/** Rows of the output the core checks. */
const sampledRows = 64;
const stateNames = ['skipped', 'partial', 'full'];

export interface FigureDevice {
  /** null: the core's version on the CPU. */
  gpu: Gpu | null;
  checks: KernelChecks;
}

type GallerySpec = MaskSpec & { tile_q: number; tile_k: number };

interface Computed {
  spec: GallerySpec;
  row: number;
  /** The gallery's coding: 0 skipped, 1 partial, 2 full. */
  states: Uint8Array;
  predicted: TileResult;
  /** [cols, 2]: the row's (m, l) after each key tile, as recorded. */
  trace: Float32Array;
  steps: RowSteps;
  records: CheckRecord[];
  ms: number | null;
}

/** v1 flash's record (1 partial, 2 skipped, 3 full) in the gallery's coding. */
const fromKernel = [255, 1, 0, 2];

/** The kernels' "nothing seen yet" maximum, the lowest f32 (gpu/kernels/common.wgsl). */
const lowestF32 = -3.4028234663852886e38;
/** The recorded m after key tile j, null while the row has seen nothing. */
const recordedM = (trace: Float32Array, j: number) => (trace[2 * j] <= lowestF32 ? null : trace[2 * j]);

const num = (x: number | null, digits = 4) => (x === null ? '−∞' : Number.isFinite(x) ? x.toFixed(digits) : String(x));

/** Builds the figure on the GPU that passed its checks, or with the core on the CPU. */
export async function mountFlashTiles(root: HTMLElement, context: WidgetContext, onGpu: boolean): Promise<void> {
  const verdict = await gpuSession().verdict;
  const checks = verdict.kind === 'none' ? await (await import('../../lib/kernel-checks-core')).loadKernelChecks() : verdict.checks;
  new FlashTilesFigure(root, context, { gpu: onGpu && verdict.kind === 'passed' ? verdict.gpu : null, checks });
}

export class FlashTilesFigure {
  private readonly host: HTMLElement;
  private readonly status = el('p', { class: 'status', role: 'status', 'data-testid': 'flash-tiles-run' });
  private readonly countsLine = el('p', { class: 'finding', 'data-testid': 'flash-tiles-counts' });
  private readonly agreement = el('p', { class: 'finding', 'data-testid': 'flash-tiles-agreement' });
  private readonly grid: StateGrid;
  private readonly checksBody = el('tbody');
  private readonly rowInput = numberInput('number', 0, 0, 1, 0);
  private readonly stepInput = numberInput('range', 0, 0, 1, 0);
  private readonly stepLabel = el('span', { class: 'flash-step-label', 'data-testid': 'flash-tiles-step-label' });
  private readonly formula = el('div', { class: 'flash-formula', 'data-testid': 'flash-tiles-formula', 'aria-live': 'polite' });
  private readonly stepsBody = el('tbody');
  private readonly ending = el('p', { class: 'finding', 'data-testid': 'flash-tiles-ending' });
  private shown: Computed | null = null;
  private running = false;
  private wanted: { spec: GallerySpec; row: number | null } | null = null;
  /** The key tile a link asked for, until the first run shows it. */
  private linkedStep: number | null;

  constructor(root: HTMLElement, private readonly context: WidgetContext, private readonly device: FigureDevice) {
    this.host = root.closest<HTMLElement>('[data-widget]') ?? root;
    this.host.dataset.mode = device.gpu ? 'gpu' : 'cpu';
    const linked = context.state.get('step');
    this.linkedStep = linked === null ? null : Number(linked);
    this.stepInput.id = uid('flash-step');
    this.grid = new StateGrid({
      label: 'The tiles the flash kernel computed and skipped',
      styles: tileStateStyles,
      maxHeight: 420,
      maxCellPx: 40,
      idleText: 'Point at a tile, or focus the map and use the arrow keys, to read one tile.',
      describe: (r, c, value) => this.describeTile(r, c, value),
      overlay: (ctx, g) => this.outline(ctx, g),
    });
    const prev = el('button', { type: 'button', class: 'small', 'data-testid': 'flash-tiles-prev' }, '◀ Tile');
    const next = el('button', { type: 'button', class: 'small', 'data-testid': 'flash-tiles-next' }, 'Tile ▶');
    prev.addEventListener('click', () => this.setStep(Number(this.stepInput.value) - 1));
    next.addEventListener('click', () => this.setStep(Number(this.stepInput.value) + 1));
    this.stepInput.addEventListener('input', () => this.setStep(Number(this.stepInput.value)));
    this.rowInput.setAttribute('data-testid', 'flash-tiles-row');
    this.stepInput.setAttribute('data-testid', 'flash-tiles-step');
    this.rowInput.addEventListener('change', () => {
      const spec = this.shown?.spec ?? this.wanted?.spec;
      if (!spec) return;
      const row = Math.min(spec.T - 1, Math.max(0, Math.round(Number(this.rowInput.value)) || 0));
      this.context.state.set({ row, step: null });
      this.request(spec, row);
    });
    const where = device.gpu
      ? `v1 flash on ${describeAdapter(device.gpu.adapter)}`
      : 'the core on the CPU (WebAssembly): its tile rule and its online softmax in double precision';
    root.append(
      el('p', { class: 'flash-where', 'data-testid': 'flash-tiles-where' }, `Computed by ${where}.`),
      this.status,
      el('div', { class: 'flash-map' }, el('p', { class: 'mask-panel-title' }, device.gpu ? 'The kernel\'s tiles, from its record' : 'The tiles, by the core\'s rule'), this.grid.root,
        el('p', { class: 'flash-legend' },
          ...[['skipped', 'skipped: never loaded'], ['partial', 'computed with the mask'], ['full', 'computed without it']].flatMap(([state, text]) =>
            [el('span', { class: `flash-swatch flash-swatch-${state}`, 'aria-hidden': 'true' }), ` ${text}   `]),
          el('span', { class: 'flash-swatch flash-swatch-row', 'aria-hidden': 'true' }), ' the row\'s query tile   ',
          el('span', { class: 'flash-swatch flash-swatch-step', 'aria-hidden': 'true' }), ' the key tile on show')),
      this.countsLine,
      this.agreement,
      el('div', { class: 'scroll-x', hidden: !device.gpu }, checkTable(['case'], this.checksBody, 'flash-tiles-checks')),
      el('h4', { class: 'flash-row-title' }, 'One row, tile by tile'),
      el('div', { class: 'controls flash-controls' },
        labelled('Query row', this.rowInput),
        el('div', { class: 'flash-step' }, el('label', { for: this.stepInput.id }, 'Key tile'), prev, this.stepInput, next, this.stepLabel)),
      this.formula,
      el('div', { class: 'scroll-x flash-steps-scroll', tabindex: 0, role: 'region', 'aria-label': 'The row\'s running maximum and sum after each key tile' },
        el('table', { class: 'check-table flash-steps', 'data-testid': 'flash-tiles-steps' },
          el('thead', {}, el('tr', {}, ...['tile', 'keys', 'seen', 'max score', 'm (kernel)', 'm (core)', 'ℓ (kernel)', 'ℓ (core)', 'rescale'].map((h) => el('th', { scope: 'col' }, h)))),
          this.stepsBody)),
      this.ending,
    );
    this.follow();
  }

  /** Follows the gallery's mask: its host's data-spec, now and whenever it changes. */
  private follow(): void {
    const gallery = document.querySelector<HTMLElement>('[data-widget="mask-gallery"]');
    const read = () => {
      if (!gallery?.dataset.spec) return;
      const spec = JSON.parse(gallery.dataset.spec) as GallerySpec;
      const saved = this.context.state.get('row');
      this.request(spec, this.shown || saved === null ? null : Number(saved));
    };
    if (!gallery) {
      setStatus(this.status, 'This figure follows the mask gallery, which is not on this page.', 'error');
      return;
    }
    setStatus(this.status, 'Waiting for the mask gallery above…');
    new MutationObserver(read).observe(gallery, { attributes: true, attributeFilter: ['data-spec'] });
    read();
  }

  /** Runs for `spec` and `row` (null: keep the row, or two thirds down); a request made while one runs goes next. */
  private request(spec: GallerySpec, row: number | null): void {
    this.wanted = { spec, row };
    if (this.running) return;
    void this.runWanted();
  }

  private async runWanted(): Promise<void> {
    this.running = true;
    try {
      while (this.wanted) {
        const { spec, row } = this.wanted;
        this.wanted = null;
        const chosen = Math.min(spec.T - 1, Math.max(0, row ?? (this.shown ? this.shown.row : Math.floor((2 * (spec.T - 1)) / 3))));
        try {
          const computed = await this.compute(spec, chosen);
          if (computed) this.show(computed);
        } catch (error) {
          setStatus(this.status, `The kernel did not run: ${error instanceof Error ? error.message : String(error)}`, 'error');
          this.host.dataset.agree = '';
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async compute(spec: GallerySpec, row: number): Promise<Computed | null> {
    const { tile_q: tq, tile_k: tk, ...mask } = spec;
    if (mask.T * mask.S > mostCells) {
      setStatus(this.status, `The figure runs the kernel on up to ${groupDigits(mostCells)} query–key pairs (T × S); the gallery's ${groupDigits(mask.T)} × ${groupDigits(mask.S)} is more: make T or S smaller there. Still showing the last one.`, 'error');
      return null;
    }
    const { gpu, checks } = this.device;
    const figure: CaseRef = { shape: { B: 1, Hq: 1, Hkv: 1, T: mask.T, S: mask.S, D: headSize }, mask };
    const place = { tile_q: tq, tile_k: tk, batch: 0, head: 0, row };
    setStatus(this.status, gpu ? 'Running the kernel…' : 'Computing…');
    const predicted = this.context.core.maskTiles(mask, tq, tk);
    const steps = checks.rowSteps(figure, { tile_k: tk, batch: 0, head: 0, row });
    if (!gpu) {
      const trace = new Float32Array(steps.steps.flatMap((s) => [s.m ?? lowestF32, s.l]));
      return { spec, row, states: predicted.states, predicted, trace, steps, records: [], ms: null };
    }
    const problem = tilesProblem(gpu.limits, headSize, { rows: tq, keys: tk });
    if (problem) {
      setStatus(this.status, `Tiles of ${tq} × ${tk} do not fit this GPU: ${problem}. Choose smaller tiles in the gallery.`, 'error');
      return null;
    }
    const inputs = checks.kernelInputs(figure);
    const run = await runAttention(gpu, 'v1_flash', figure.shape, inputs, { record: { batch: 0, head: 0, row }, tiles: { rows: tq, keys: tk } });
    const record = run.record!;
    const states = Uint8Array.from(record.states, (s) => fromKernel[s] ?? 255);
    const records = [
      ...checks.checkTileRecord(figure, place, record.states, record.trace),
      ...checks.checkKernelSample(figure, 'v1_flash', run.out, sampledRows),
    ];
    return { spec, row, states, predicted, trace: record.trace, steps, records, ms: run.ms };
  }

  private show(c: Computed): void {
    this.shown = c;
    const { spec, predicted, states } = c;
    const cols = predicted.cols, rows = predicted.rows;
    const tally = [0, 0, 0];
    let differ = 0;
    states.forEach((s, i) => {
      if (s <= 2) tally[s] += 1;
      if (s !== predicted.states[i]) differ += 1;
    });
    const kernelCounts = { skipped: tally[0], partial: tally[1], full: tally[2] };
    const galleryCounts = { skipped: predicted.skipped, partial: predicted.partial, full: predicted.full };
    this.host.dataset.kernelCounts = JSON.stringify(kernelCounts);
    this.host.dataset.galleryCounts = JSON.stringify(galleryCounts);
    this.host.dataset.agree = String(differ === 0);
    this.host.dataset.spec = JSON.stringify(spec);
    const who = this.device.gpu ? 'The kernel' : 'The core';
    this.countsLine.textContent = `${who} computed ${count(tally[1], 'tile')} with the mask and ${count(tally[2], 'tile')} without it, and skipped ${count(tally[0], 'tile')} (${groupDigits(rows * cols)} in all, ${rows} × ${cols} tiles of ${spec.tile_q} × ${spec.tile_k}).`;
    this.agreement.textContent = differ === 0
      ? `The gallery predicts ${predicted.skipped} skipped, ${predicted.partial} partial and ${predicted.full} full: they agree, tile for tile.`
      : `The gallery predicts ${predicted.skipped} skipped, ${predicted.partial} partial and ${predicted.full} full: the record differs in ${count(differ, 'tile')}.`;
    this.agreement.classList.toggle('error', differ !== 0);

    this.checksBody.replaceChildren(...c.records.map((r) => recordRow(r, ['figure'])));
    const failed = c.records.filter((r) => !r.passed).length;
    this.host.dataset.checksFailed = String(failed);
    const timing = c.ms === null ? '' : ` in ${c.ms.toFixed(1)} ms`;
    setStatus(this.status, this.device.gpu
      ? `T = ${groupDigits(spec.T)}, S = ${groupDigits(spec.S)}, one head of ${headSize} channels, run${timing}; the core checked its record and ${sampledRows} rows of its output: ${failed === 0 ? 'all passed' : `${failed} FAILED`}.`
      : `T = ${groupDigits(spec.T)}, S = ${groupDigits(spec.S)}: the core's tile rule and the row's steps.`, failed === 0 ? 'info' : 'error');

    this.rowInput.max = String(spec.T - 1);
    this.rowInput.value = String(c.row);
    this.stepInput.max = String(cols - 1);
    this.stepsBody.replaceChildren(...c.steps.steps.map((s, j) => {
      const tr = el('tr', { 'data-step': j },
        ...[String(j), `${s.first}–${s.last - 1}`, String(s.visible), num(s.tile_max), num(recordedM(c.trace, j)), num(s.m),
          num(c.trace[2 * j + 1]), num(s.l), num(s.rescale)].map((text, i) => el('td', { class: i >= 3 ? 'num' : undefined }, text)));
      tr.addEventListener('click', () => this.setStep(j));
      return tr;
    }));
    // The step on show: the link's on the first run, else the last tile the row sees (where its softmax is complete).
    const lastSeen = c.steps.steps.reduce((last, s, j) => (s.visible > 0 ? j : last), cols - 1);
    this.setStep(this.linkedStep ?? lastSeen, false);
    this.linkedStep = null;
    this.writeEnding();
  }

  private setStep(step: number, save = true): void {
    const c = this.shown;
    if (!c) return;
    const j = Math.max(0, Math.min(c.steps.steps.length - 1, Number.isFinite(step) ? Math.round(step) : 0));
    this.stepInput.value = String(j);
    if (save) this.context.state.set({ row: c.row, step: j });
    this.stepLabel.textContent = `${j + 1} of ${c.steps.steps.length}`;
    for (const tr of this.stepsBody.rows) tr.classList.toggle('current', Number(tr.dataset.step) === j);
    this.grid.setData(c.predicted.rows, c.predicted.cols, c.states);
    this.writeFormula(j);
  }

  /** The step's online softmax written out with this row's numbers. */
  private writeFormula(j: number): void {
    const { steps, trace } = this.shown!;
    const s = steps.steps[j];
    const before = j > 0 ? steps.steps[j - 1] : null;
    const lines: string[] = [`Tile ${j}: keys ${s.first} to ${s.last - 1}; the row sees ${s.visible} of them.`];
    if (s.visible === 0) {
      lines.push('Nothing to fold in: m, ℓ and the output stay as they were.');
    } else {
      const mBefore = before?.m ?? null, lBefore = before?.l ?? 0;
      const sum = s.l - lBefore * s.rescale;
      lines.push(
        `m = max(m before, largest score) = max(${num(mBefore)}, ${num(s.tile_max)}) = ${num(s.m)}`,
        mBefore === null ? 'rescale = 1 (nothing seen before)' : `rescale = e^(m before − m) = e^(${num(mBefore)} − ${num(s.m)}) = ${num(s.rescale)}`,
        `ℓ = ℓ before × rescale + Σ e^(s − m) = ${num(lBefore)} × ${num(s.rescale)} + ${num(sum)} = ${num(s.l)}`,
        `o = o before × rescale + Σ e^(s − m) v = (${s.acc.slice(0, 3).map((x) => num(x, 3)).join(', ')}, …), ${s.acc.length} channels`,
      );
    }
    const kl = trace[2 * j + 1];
    if (this.device.gpu)
      lines.push(`The kernel recorded m = ${num(recordedM(trace, j))} and ℓ = ${num(kl)} after this tile.`);
    this.formula.replaceChildren(...lines.map((line) => el('p', {}, line)));
  }

  /** After the last tile: the probabilities from the (kernel's) m and l against the plain softmax. */
  private writeEnding(): void {
    const { steps, trace } = this.shown!;
    const last = steps.steps.length - 1;
    const m = trace[2 * last], l = trace[2 * last + 1];
    const probs = steps.scores.map((score) => (score === null || !(l > 0) ? 0 : Math.exp(score - m) / l));
    let error = 0, seen = 0;
    probs.forEach((p, s) => {
      if (steps.scores[s] !== null) seen += 1;
      error = Math.max(error, Math.abs(p - steps.probs[s]));
      if (!Number.isFinite(p)) error = Infinity;
    });
    this.host.dataset.rowProbs = JSON.stringify(probs);
    this.host.dataset.probsError = String(error);
    const who = this.device.gpu ? 'the kernel\'s' : 'the last step\'s';
    const agree = error <= 1e-5;
    this.ending.textContent = seen === 0
      ? `Row ${steps.row} sees no key: l stays 0 and its output is 0.`
      : `After the last tile, p = e^(s − m) / ℓ with ${who} m = ${num(m)} and ℓ = ${num(l)} gives the row's ${count(seen, 'probability', 'probabilities')}; against the plain softmax of the whole row at once, the largest difference is ${error.toExponential(2)}${agree ? ': the same probabilities.' : ': they DIFFER.'}`;
    this.ending.classList.toggle('error', !agree);
  }

  /** The chosen row's query tile and the step's key tile, outlined. */
  private outline(ctx: CanvasRenderingContext2D, g: GridGeometry): void {
    const c = this.shown;
    if (!c) return;
    const r = Math.floor(c.row / c.spec.tile_q), j = Number(this.stepInput.value);
    ctx.strokeStyle = '#111';
    ctx.lineWidth = Math.max(2, Math.round(Math.min(g.pxX, g.pxY) / 6));
    ctx.strokeRect(0, r * g.pxY, g.cols * g.pxX, g.pxY);
    ctx.strokeStyle = '#d6336c';
    ctx.strokeRect(j * g.pxX, r * g.pxY, g.pxX, g.pxY);
  }

  private describeTile(r: number, c: number, value: number): string {
    const { spec } = this.shown!;
    const t0 = r * spec.tile_q, t1 = Math.min(spec.T, t0 + spec.tile_q) - 1;
    const s0 = c * spec.tile_k, s1 = Math.min(spec.S, s0 + spec.tile_k) - 1;
    const what = value <= 2 ? stateNames[value] : 'not recorded';
    return `Tile row ${r}, column ${c}: query rows ${t0}–${t1}, keys ${s0}–${s1}: ${what}` +
      (value === 1 ? ', computed with the mask.' : value === 2 ? ', computed without the mask.' : value === 0 ? ', never loaded.' : '.');
  }
}
