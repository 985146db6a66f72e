// The KV-cache stepper's three pictures of the latest step: the layer-0 key
// cache [S, dh] of one KV head with the new rows marked, the step's mask
// [T_new, S] with its diagonal offset (history = S - T_new), and the step's
// attention for one layer and query head.
import type { StepReport } from '../../lib/core';
import { diverging, sequential } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import { el, formatNumber, labelled, select } from '../../lib/dom';
import { Heatmap } from '../../lib/heatmap';
import type { UrlState } from '../../lib/url-state';
import { count } from '../../lib/words';
import { StateGrid } from '../shared/state-grid';

/** Options 0 .. count - 1, keeping the choice where it still exists. */
function fillSelect(node: HTMLSelectElement, count: number): void {
  if (node.options.length === count) return;
  const value = Math.min(Number(node.value), count - 1);
  node.replaceChildren(...Array.from({ length: count }, (_, i) => el('option', { value: i }, String(i))));
  node.value = String(value);
}

export class StepFigure {
  readonly root: HTMLElement;
  private report: StepReport | null = null;
  private readonly kvHead = select([['0', '0']], '0');
  private readonly layer = select([['0', '0']], '0');
  private readonly head = select([['0', '0']], '0');
  private readonly keysMap = new Heatmap({ title: 'Layer-0 key cache, KV head 0', rowAxis: 'position', colAxis: 'channel', maxCellPx: 16 });
  private readonly keysStage = el('div', { class: 'kv-keys-scroll' }, this.keysMap.root);
  private readonly maskGrid: StateGrid;
  private readonly maskOffset = el('p', { class: 'kv-caption', 'data-testid': 'kv-stepper-mask-offset' });
  private readonly maskText = el('pre', { class: 'kv-mask-text', 'data-testid': 'kv-stepper-mask-text', tabindex: 0, role: 'region', 'aria-label': 'Mask as 0/1 rows' });
  private readonly attentionMap = new Heatmap({ title: 'Attention of the latest step', rowAxis: 'query', colAxis: 'key position', maxCellPx: 24 });
  private readonly attentionNote = el('p', { class: 'kv-caption' });

  /** `onSelect` runs after the reader picks another head or layer. */
  constructor(onSelect: () => void) {
    this.kvHead.dataset.testid = 'kv-stepper-kv-head';
    this.layer.dataset.testid = 'kv-stepper-layer';
    this.head.dataset.testid = 'kv-stepper-head';
    this.maskGrid = new StateGrid({
      label: 'Mask of the latest step: rows are its new queries, columns every cached key',
      styles: [
        { fill: '#e8e8ec', texture: 'hatch', ink: '#8a8a96' },
        { fill: '#e8e8ec', texture: 'solid' },
        { fill: '#3b4cc0', texture: 'solid' },
      ],
      maxHeight: 240,
      maxCellPx: 28,
      idleText: 'Point at a cell, or focus the mask and use the arrow keys, to read it.',
      describe: (t, s, value) => {
        const q = this.report!.history + t;
        return `Query at position ${q}, key ${s}: ${value === 2 ? 'visible' : `masked (${s} is after ${q})`}.`;
      },
    });
    this.root = el(
      'div',
      { class: 'kv-panels' },
      el(
        'section',
        { class: 'kv-panel', 'aria-label': 'Layer-0 key cache' },
        el('p', { class: 'kv-panel-title' }, 'Layer-0 keys in the cache'),
        el('div', { class: 'controls' }, labelled('KV head', this.kvHead)),
        this.keysStage,
        el('p', { class: 'kv-caption' }, 'Each row is one position’s key after RoPE, as the cache stores it. Rows this step appended are labelled +; the newest is outlined. Prefill appends one row per prompt token, a decode step one.'),
      ),
      el(
        'section',
        { class: 'kv-panel', 'aria-label': 'Mask of the latest step' },
        el('p', { class: 'kv-panel-title' }, 'Mask of the latest step'),
        this.maskGrid.root,
        this.maskOffset,
        el('details', {}, el('summary', {}, 'As 0/1 rows'), this.maskText),
        el('p', { class: 'kv-caption' }, el('span', { class: 'kv-swatch kv-swatch-visible', 'aria-hidden': 'true' }), ' visible   ', el('span', { class: 'kv-swatch kv-swatch-masked', 'aria-hidden': 'true' }), ' masked'),
      ),
      el(
        'section',
        { class: 'kv-panel kv-panel-wide', 'aria-label': 'Attention of the latest step' },
        el('p', { class: 'kv-panel-title' }, 'Attention of the latest step'),
        el('div', { class: 'controls' }, labelled('Layer', this.layer), labelled('Query head', this.head)),
        this.attentionMap.root,
        this.attentionNote,
      ),
    );
    this.kvHead.addEventListener('change', () => (this.drawKeys(), onSelect()));
    this.layer.addEventListener('change', () => (this.drawAttention(), onSelect()));
    this.head.addEventListener('change', () => (this.drawAttention(), onSelect()));
  }

  /** Draws `report`, or hides the pictures (null: nothing cached). */
  show(report: StepReport | null): void {
    this.report = report;
    this.root.hidden = report === null;
    if (!report) return;
    fillSelect(this.kvHead, report.cache_shape[1]);
    fillSelect(this.layer, report.probabilities.length);
    fillSelect(this.head, report.probabilities[0].length);
    this.drawKeys();
    this.drawMask();
    this.drawAttention();
  }

  /** The link's head and layer choices, where they exist; redraws. */
  restore(state: UrlState): void {
    for (const [node, name] of [[this.kvHead, 'kvhead'], [this.layer, 'layer'], [this.head, 'head']] as const) {
      const value = state.get(name);
      if (value !== null && [...node.options].some((o) => o.value === value)) node.value = value;
    }
    this.drawKeys();
    this.drawAttention();
  }

  /** The choices, for the URL. */
  values(): { kvhead: string; layer: string; head: string } {
    return { kvhead: this.kvHead.value, layer: this.layer.value, head: this.head.value };
  }

  private drawKeys(): void {
    const report = this.report;
    if (!report) return;
    const h = Number(this.kvHead.value);
    const keys = report.keys[h];  // [S][dh]
    const S = keys.length, dh = keys[0].length;
    let limit = 0;
    for (const head of report.keys) for (const row of head) for (const v of row) limit = Math.max(limit, Math.abs(v));
    const firstNew = report.history;
    this.keysMap.setTitle(`Layer-0 key cache, KV head ${h}`, `the layer-0 keys of KV head ${h}`);
    this.keysMap.setData({
      rows: S,
      cols: dh,
      value: (s, d) => keys[s][d],
      allowed: () => true,
      rowLabel: (s) => (s >= firstNew ? `+${s}` : String(s)),
      colLabel: (d) => String(d),
      scale: tabulated(diverging(limit), -limit, limit),
      domain: [-limit, limit],
      describe: (s, d) =>
        `KV head ${h}, position ${s}, channel ${d}: ${formatNumber(keys[s][d])}. ` +
        (s >= firstNew ? 'Appended by this step.' : 'Cached by an earlier step, unchanged since.'),
    });
    this.keysMap.highlightRow(S - 1);
    // The newest rows are at the bottom: keep them in view.
    this.keysStage.scrollTop = this.keysStage.scrollHeight;
  }

  private drawAttention(): void {
    const report = this.report;
    if (!report) return;
    const layer = Number(this.layer.value), head = Number(this.head.value);
    const probs = report.probabilities[layer][head];  // [T_new][S]
    const { mask, history } = report;
    const Hq = report.probabilities[0].length, Hkv = report.cache_shape[1];
    this.attentionMap.setTitle(`Attention of the latest step, layer ${layer}, head ${head}`, `the latest step's attention in layer ${layer}, head ${head}`);
    this.attentionMap.setData({
      rows: probs.length,
      cols: probs[0].length,
      value: (t, s) => probs[t][s],
      allowed: (t, s) => mask[t][s] === 1,
      rowLabel: (t) => String(history + t),
      colLabel: (s) => String(s),
      scale: tabulated(sequential(0, 1), 0, 1),
      domain: [0, 1],
      describe: (t, s) =>
        mask[t][s] === 1
          ? `Layer ${layer}, head ${head}: query at position ${history + t} puts weight ${formatNumber(probs[t][s])} on key ${s}.`
          : `Layer ${layer}, head ${head}: key ${s} is masked for the query at position ${history + t}.`,
    });
    this.attentionNote.textContent =
      `Query head ${head} reads KV head ${Math.floor(head / (Hq / Hkv))} (${count(Hq / Hkv, 'query head')} ${Hq / Hkv === 1 ? 'reads' : 'share'} ` +
      `${Hkv === 1 ? 'the one KV head' : `each of the ${count(Hkv, 'KV head')}`}). ` +
      (probs.length === 1
        ? 'A decode step has a single new query: one row over every cached key.'
        : history === 0
          ? `Prefill computes all ${probs.length} rows at once.`
          : `The chunk's ${probs.length} rows are computed at once, each over the ${history} cached keys and the chunk's own keys up to its position.`);
  }

  private drawMask(): void {
    const { mask, history, position: S } = this.report!;
    const T = mask.length;
    const states = new Uint8Array(T * S);
    for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) states[t * S + s] = mask[t][s] === 1 ? 2 : 0;
    this.maskGrid.setData(T, S, states);
    this.maskText.textContent = mask.map((row) => row.join(' ')).join('\n');
    const offset = el('strong', { 'data-testid': 'kv-stepper-history' }, String(history));
    this.maskOffset.replaceChildren(
      T === 1 && history > 0
        ? `Decode: 1 new query, S = ${count(S, 'key')}. History = S − T_new = `
        : `${history === 0 ? 'Prefill' : 'Chunk'}: ${count(T, 'new query', 'new queries')}, S = ${count(S, 'key')}. History = S − T_new = `,
      offset,
      T === 1 && history > 0
        ? `, so the diagonal sits ${count(history, 'column')} right of where it would start and the single row sees every key: decoding needs no mask.`
        : history === 0
          ? ': the plain lower triangle; query t sees keys 0 to t.'
          : `: the diagonal moves right by ${history}.`,
    );
  }
}
