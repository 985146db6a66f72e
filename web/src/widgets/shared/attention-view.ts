// The explorer view shared by the attention explorer and the trace viewer
//. Given an AttentionRun it shows, for a chosen sequence, layer and query
// head:
//   - the head's probabilities [T, S] as a heatmap, forbidden cells hatched;
//   - the two query heads that read the same KV head, and their difference;
//   - one followed query row: its weights, and what each value vector adds.
// Computing the run (live from the wasm core, or from a trace file) is the
// widget's job; the view only draws it and reports the reader's choices.
import './attention-view.css';
import { diverging, sequential } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import type { ModelConfig } from '../../lib/core';
import { el, formatNumber, labelled, select } from '../../lib/dom';
import { count } from '../../lib/words';
import { Heatmap, HeatmapData } from '../../lib/heatmap';
import { contributionTable, FollowedRow, largestGap, weightChart, weightTable } from './attention-follow';
import { namedText, tokenLabel as shortLabel, visibleText } from './token-text';

export interface AttentionRun {
  config: Pick<ModelConfig, 'n_layers' | 'n_heads' | 'n_kv_heads'>;
  tokens: number[][];                // [B][T] token ids
  tokenText?: string[][];            // [B][T] each token's own text (a newline is a newline), when known;
                                     // shown through token-text.ts: marked, and cut short on the axes
  /** [L][B][Hq][T] rows of [S] (S = T); a row may stop after its last visible key t (the rest is 0). */
  probabilities: ArrayLike<number>[][][][];
  /** What the heads mixed; only the live core has it (a trace keeps probabilities only). */
  mixing?: {
    v: number[][][][][];             // [L][B][Hkv][T][dh]
    headOutputs: number[][][][][];   // [L][B][Hq][T][dh]
  };
}

export interface Selection {
  batch: number;
  layer: number;
  head: number;
  row: number | null;                // followed query position; null follows the last one
}

export interface ViewOptions {
  /** data-testid prefix: "explorer" gives explorer-layer, explorer-heatmap-main, ... */
  testPrefix: string;
  batchLabel(batch: number): string;
  /** Said in place of the contributions when runs have no value vectors. */
  noMixingNote?: string;
  /** Called after the view redrew for the reader's choice, with the time the redraw took. */
  onChange(selection: Selection, renderMs: number): void;
}

// ---------------------------------------------------------------- grouped-query attention

/** Query heads per KV head (Hq / Hkv). */
function groupSize(config: AttentionRun['config']): number {
  return config.n_heads / config.n_kv_heads;
}

/** g(h) = floor(h / group): the KV head query head h reads. */
export function kvHead(config: AttentionRun['config'], head: number): number {
  return Math.floor(head / groupSize(config));
}

/** The next query head of h's group (h ^ 1 when groups hold two), or null without groups. */
export function partnerHead(config: AttentionRun['config'], head: number): number | null {
  const group = groupSize(config);
  if (group < 2) return null;
  const first = kvHead(config, head) * group;
  return first + ((head - first + 1) % group);
}

// ---------------------------------------------------------------- heatmap data

const causal = (row: number, col: number) => col <= row;

/** A token in the sequence line and the follow view: its text in quotes, marked, or its id. */
function tokenLabel(run: AttentionRun, batch: number, position: number): string {
  const text = run.tokenText?.[batch]?.[position];
  return text !== undefined ? `"${visibleText(text)}"` : `id ${run.tokens[batch][position]}`;
}

/** A token in a tooltip: as tokenLabel, with the marks it uses named. */
function tokenName(run: AttentionRun, batch: number, position: number): string {
  const text = run.tokenText?.[batch]?.[position];
  return text !== undefined ? namedText(text) : `id ${run.tokens[batch][position]}`;
}

/** Axis tick: the position, or the token's own text, marked and cut short, when the run has it. */
function axisLabel(run: AttentionRun, batch: number, position: number): string {
  const text = run.tokenText?.[batch]?.[position];
  return text !== undefined ? shortLabel(text) : String(position);
}

/** Row `row` of a head's probabilities, with key `col` read as 0 past the row's end (a causal row may stop at its query). */
function cell(rows: ArrayLike<number>[], row: number, col: number): number {
  return col < rows[row].length ? rows[row][col] : 0;
}

/** One row as a plain array of `length` keys, 0 past its end. */
function paddedRow(row: ArrayLike<number>, length: number): number[] {
  return Array.from({ length }, (_, c) => (c < row.length ? row[c] : 0));
}

/** A head's probabilities as plain [T][T] arrays (what the page records for its tests). */
function fullMatrix(rows: ArrayLike<number>[]): number[][] {
  return rows.map((row) => paddedRow(row, rows.length));
}

function probabilityData(run: AttentionRun, sel: Selection, head: number): HeatmapData {
  const p = run.probabilities[sel.layer][sel.batch][head]; // [T] rows
  const where = (r: number, c: number) =>
    `layer ${sel.layer}, head ${head}, query ${r} (${tokenName(run, sel.batch, r)}) → key ${c} (${tokenName(run, sel.batch, c)})`;
  return {
    rows: p.length,
    cols: p.length,
    value: (r, c) => cell(p, r, c),
    allowed: causal,
    rowLabel: (r) => axisLabel(run, sel.batch, r),
    colLabel: (c) => axisLabel(run, sel.batch, c),
    scale: sequential(0, 1),
    domain: [0, 1],
    describe: (r, c) =>
      causal(r, c) ? `${where(r, c)}: p = ${formatNumber(cell(p, r, c))}` : `${where(r, c)}: masked, key ${c} comes after query ${r} (p = 0)`,
  };
}

/** p_a - p_b over the allowed cells, on a diverging scale symmetric around 0. */
function differenceData(run: AttentionRun, sel: Selection, a: number, b: number): { data: HeatmapData; largest: { value: number; row: number; col: number } } {
  const pa = run.probabilities[sel.layer][sel.batch][a], pb = run.probabilities[sel.layer][sel.batch][b];
  const largest = { value: 0, row: 0, col: 0 };
  for (let r = 0; r < pa.length; r++)
    for (let c = 0; c <= r; c++)
      if (Math.abs(cell(pa, r, c) - cell(pb, r, c)) > Math.abs(largest.value))
        Object.assign(largest, { value: cell(pa, r, c) - cell(pb, r, c), row: r, col: c });
  const limit = Math.abs(largest.value) || 1e-9;
  const signed = (x: number) => (x > 0 ? '+' : '') + formatNumber(x);
  const data: HeatmapData = {
    rows: pa.length,
    cols: pa.length,
    value: (r, c) => cell(pa, r, c) - cell(pb, r, c),
    allowed: causal,
    rowLabel: (r) => axisLabel(run, sel.batch, r),
    colLabel: (c) => axisLabel(run, sel.batch, c),
    scale: tabulated(diverging(limit), -limit, limit),
    domain: [-limit, limit],
    describe: (r, c) =>
      causal(r, c)
        ? `layer ${sel.layer}, query ${r} → key ${c}: head ${a} − head ${b} = ${signed(cell(pa, r, c) - cell(pb, r, c))} (${formatNumber(cell(pa, r, c))} − ${formatNumber(cell(pb, r, c))})`
        : `layer ${sel.layer}, query ${r} → key ${c}: masked in both heads`,
  };
  return { data, largest };
}

/** A region that scrolls sideways on a narrow screen; focusable so the keyboard can scroll it too. */
function scrollable(label: string, content: HTMLElement): HTMLElement {
  return el('div', { class: 'scroll-x', tabindex: 0, role: 'region', 'aria-label': label }, content);
}

// ---------------------------------------------------------------- the view

export class AttentionView {
  /** The batch, layer and head selectors, for the widget to place in its control row. */
  readonly controls: HTMLElement[];
  /** Heatmaps, comparison and followed row. */
  readonly root: HTMLElement;
  selection: Selection = { batch: 0, layer: 0, head: 0, row: null };

  private run: AttentionRun | null = null;
  private readonly batchSelect = select([], '0');
  private readonly layerSelect = select([], '0');
  private readonly headSelect = select([], '0');
  private readonly sequenceLine = el('p', { class: 'sequence-line' });
  private readonly rowSums = el('p', { class: 'view-caption' });
  private readonly main: Heatmap;
  private readonly pairA: Heatmap;
  private readonly pairB: Heatmap;
  private readonly difference: Heatmap;
  private readonly compareTitle = el('h3', { class: 'view-subtitle' });
  private readonly compareBody: HTMLElement;
  private readonly compareNote = el('p', { class: 'view-caption' });
  private readonly pairLabels = [el('p', { class: 'panel-label' }), el('p', { class: 'panel-label' }), el('p', { class: 'panel-label' })];
  private readonly followTitle = el('h3', { class: 'view-subtitle' });
  private readonly followChart = el('div', { class: 'follow-chart' });
  private readonly followDetail = el('div', { class: 'follow-detail' });
  private renders = 0; // counts render() calls: a part put off for later is not drawn over a newer render

  constructor(private readonly options: ViewOptions) {
    const id = options.testPrefix;
    this.batchSelect.dataset.testid = `${id}-batch`;
    this.layerSelect.dataset.testid = `${id}-layer`;
    this.headSelect.dataset.testid = `${id}-head`;
    this.controls = [labelled('Sequence', this.batchSelect), labelled('Layer', this.layerSelect), labelled('Query head', this.headSelect)];
    const choose = (key: 'batch' | 'layer' | 'head', node: HTMLSelectElement) =>
      node.addEventListener('change', () => this.change({ [key]: Number(node.value) }));
    choose('batch', this.batchSelect);
    choose('layer', this.layerSelect);
    choose('head', this.headSelect);

    const follow = (row: number) => this.change({ row });
    this.main = new Heatmap({ title: 'Attention probabilities', rowAxis: 'query position', colAxis: 'key position', onSelectRow: follow, maxCellPx: 40 });
    this.pairA = new Heatmap({ title: 'First head of the pair', rowAxis: 'query position', colAxis: 'key position', onSelectRow: follow });
    this.pairB = new Heatmap({ title: 'Second head of the pair', rowAxis: 'query position', colAxis: 'key position', onSelectRow: follow });
    this.difference = new Heatmap({ title: 'Difference', rowAxis: 'query position', colAxis: 'key position', onSelectRow: follow });
    this.main.root.dataset.testid = `${id}-heatmap-main`;
    this.pairA.root.dataset.testid = `${id}-heatmap-pair-a`;
    this.pairB.root.dataset.testid = `${id}-heatmap-pair-b`;
    this.difference.root.dataset.testid = `${id}-heatmap-pair-difference`;
    this.followChart.dataset.testid = `${id}-follow-chart`;
    this.followDetail.dataset.testid = `${id}-follow-detail`;
    this.rowSums.dataset.testid = `${id}-row-sums`;

    this.compareBody = el(
      'div',
      { class: 'panels compare-panels' },
      el('div', {}, this.pairLabels[0], this.pairA.root),
      el('div', {}, this.pairLabels[1], this.pairB.root),
      el('div', {}, this.pairLabels[2], this.difference.root),
    );
    this.root = el(
      'div',
      { class: 'attention-view' },
      this.sequenceLine,
      el(
        'div',
        { class: 'view-top' },
        el('section', { class: 'view-main' }, this.main.root, this.rowSums),
        el('section', { class: 'view-follow' }, this.followTitle, this.followChart),
      ),
      this.followDetail,
      el('section', { class: 'view-compare' }, this.compareTitle, this.compareBody, this.compareNote),
    );
  }

  /**
   * Shows a new run (new ids, another trace), keeping what of `selection` still fits it.
   * With `mainFirst` (a widget's first view), only the main heatmap is drawn now; the
   * followed row and the pair comparison are drawn in the frame after, from its animation
   * frame callback, which then calls `whenComplete` (called at once without mainFirst).
   * The first view's frame then styles, lays out and draws one heatmap instead of four
   * heatmaps, a bar chart and a table: on trained-model that frame takes 86 ms against 156 with every
   * part drawn at once (medians of 15 cold loads each, side by side).
   */
  show(run: AttentionRun, selection: Selection, { mainFirst = false, whenComplete = () => {} } = {}): void {
    this.run = run;
    const B = run.tokens.length, T = run.tokens[0].length;
    const clamp = (value: number, count: number) => Math.min(count - 1, Math.max(0, value));
    this.selection = {
      batch: clamp(selection.batch, B),
      layer: clamp(selection.layer, run.config.n_layers),
      head: clamp(selection.head, run.config.n_heads),
      row: selection.row === null ? null : clamp(selection.row, T),
    };
    this.fillOptions(run);
    this.render(mainFirst, whenComplete);
  }

  private fillOptions(run: AttentionRun): void {
    const range = (n: number) => Array.from({ length: n }, (_, i) => i);
    const fill = (node: HTMLSelectElement, values: number[], label: (i: number) => string, value: number) => {
      node.replaceChildren(...values.map((i) => el('option', { value: i }, label(i))));
      node.value = String(value);
    };
    fill(this.batchSelect, range(run.tokens.length), this.options.batchLabel, this.selection.batch);
    fill(this.layerSelect, range(run.config.n_layers), (l) => `layer ${l}`, this.selection.layer);
    fill(this.headSelect, range(run.config.n_heads), (h) => `head ${h} → KV head ${kvHead(run.config, h)}`, this.selection.head);
  }

  private change(update: Partial<Selection>): void {
    const start = performance.now();
    this.selection = { ...this.selection, ...update };
    this.render();
    this.options.onChange(this.selection, performance.now() - start);
  }

  private render(mainFirst = false, whenComplete = () => {}): void {
    const run = this.run;
    if (!run) return;
    const current = ++this.renders;
    const sel = this.selection;
    const row = sel.row ?? run.tokens[sel.batch].length - 1;
    const labels = run.tokens[sel.batch].map((_, t) => tokenLabel(run, sel.batch, t));
    this.sequenceLine.textContent = `${this.options.batchLabel(sel.batch)}: ${
      run.tokenText?.[sel.batch] ? labels.join(' ') : `ids ${run.tokens[sel.batch].join(', ')}`
    }`;
    this.renderMain(run, sel, row);
    const rest = () => {
      this.renderCompare(run, sel, row);
      this.renderFollow(run, sel, row, labels);
      whenComplete();
    };
    if (!mainFirst) {
      rest();
      return;
    }
    // At the start of the frame after the one that paints the main heatmap, unless a render
    // in the meantime has drawn every part already.
    requestAnimationFrame(() => requestAnimationFrame(() => current === this.renders && rest()));
  }

  private renderMain(run: AttentionRun, sel: Selection, row: number): void {
    this.main.setTitle(`Layer ${sel.layer}, head ${sel.head}, sequence ${sel.batch}: attention probabilities`, `layer ${sel.layer}, head ${sel.head}`);
    this.main.setData(probabilityData(run, sel, sel.head), row);
    // For tests: the exact matrix on screen, to compare with `attn verify --export-trace`
    // (up to 64 positions: a longer one would cost more to write out than to draw).
    const root = this.main.root;
    const shown = run.probabilities[sel.layer][sel.batch][sel.head];
    if (shown.length <= 64) root.dataset.probabilities = JSON.stringify(fullMatrix(shown));
    else delete root.dataset.probabilities;
    root.dataset.layer = String(sel.layer);
    root.dataset.head = String(sel.head);
    root.dataset.batch = String(sel.batch);
    root.dataset.row = String(row);
    this.showRowSums(shown);
  }

  /** Each row's weights added up (in double): softmax makes every one of them 1, to float32 rounding. */
  private showRowSums(rows: ArrayLike<number>[]): void {
    const sums = rows.map((row) => {
      let total = 0;
      for (let s = 0; s < row.length; s++) total += row[s];
      return total;
    });
    const least = Math.min(...sums), most = Math.max(...sums);
    const off = Math.max(...sums.map((sum) => Math.abs(sum - 1)));
    this.rowSums.dataset.sums = JSON.stringify(sums);
    const range = least.toFixed(7) === most.toFixed(7) ? least.toFixed(7) : `between ${least.toFixed(7)} and ${most.toFixed(7)}`;
    this.rowSums.textContent =
      `Row sums: each of the ${count(sums.length, 'row')} adds up to ${range}: ` +
      (off === 0 ? 'exactly 1.' : off <= 1e-5 ? `1 to within ${off.toExponential(1)}, the float32 rounding of the softmax.` : `off from 1 by as much as ${formatNumber(off)}.`);
  }

  private renderCompare(run: AttentionRun, sel: Selection, row: number): void {
    const h = sel.head, other = partnerHead(run.config, h), g = kvHead(run.config, h);
    if (other === null) {
      this.compareTitle.textContent = 'No shared KV head to compare';
      this.compareBody.hidden = true;
      this.compareNote.textContent = 'This model has as many KV heads as query heads, so every query head reads keys and values of its own.';
      return;
    }
    const group = groupSize(run.config);
    const [a, b] = h < other ? [h, other] : [other, h];
    this.compareTitle.textContent =
      group === 2 ? `Heads ${a} and ${b} share KV head ${g}` : `Heads ${a} and ${b}, two of the ${group} heads that share KV head ${g}`;
    this.compareBody.hidden = false;
    this.pairA.setTitle(`Layer ${sel.layer}, head ${a}`, `layer ${sel.layer}, head ${a} in the comparison`);
    this.pairA.setData(probabilityData(run, sel, a), row);
    this.pairB.setTitle(`Layer ${sel.layer}, head ${b}`, `layer ${sel.layer}, head ${b} in the comparison`);
    this.pairB.setData(probabilityData(run, sel, b), row);
    this.pairA.root.dataset.head = String(a);
    this.pairB.root.dataset.head = String(b);
    const { data, largest } = differenceData(run, sel, a, b);
    this.difference.setTitle(`Layer ${sel.layer}, head ${a} minus head ${b}`, `layer ${sel.layer}, head ${a} minus head ${b}`);
    this.difference.setData(data, row);
    this.pairLabels[0].textContent = `head ${a}${a === h ? ' (chosen)' : ''}`;
    this.pairLabels[1].textContent = `head ${b}${b === h ? ' (chosen)' : ''}`;
    this.pairLabels[2].textContent = `head ${a} − head ${b}`;
    this.compareNote.textContent =
      `The difference is blue where head ${a} puts more weight on the key, red where head ${b} does. ` +
      `Both read the same KV head, g(${a}) = ⌊${a}/${group}⌋ = ${g} and g(${b}) = ⌊${b}/${group}⌋ = ${g}: ` +
      `the same keys and the same values. Only their queries differ, and with them the weights; ` +
      `the largest gap here is ${formatNumber(Math.abs(largest.value))} (query ${largest.row}, key ${largest.col}).`;
  }

  private renderFollow(run: AttentionRun, sel: Selection, row: number, labels: string[]): void {
    const g = kvHead(run.config, sel.head);
    const followed: FollowedRow = {
      layer: sel.layer,
      head: sel.head,
      kvHead: g,
      query: row,
      weights: paddedRow(run.probabilities[sel.layer][sel.batch][sel.head][row], run.tokens[sel.batch].length),
      sourceLabels: labels,
      mixing: run.mixing && {
        values: run.mixing.v[sel.layer][sel.batch][g],
        output: run.mixing.headOutputs[sel.layer][sel.batch][sel.head][row],
      },
    };
    this.followTitle.textContent = `Query ${row} (${labels[row]}) reads keys 0 to ${row}`;
    this.followChart.replaceChildren(
      weightChart(followed),
      el('p', { class: 'view-caption' }, 'Click a row of the heatmap, or move to it and press Enter, to follow another query.'),
    );
    if (!followed.mixing) {
      this.followDetail.replaceChildren(el('p', { class: 'view-caption' }, this.options.noMixingNote ?? ''), scrollable('weights of the followed query', weightTable(followed)));
      return;
    }
    const gap = largestGap(followed, followed.mixing);
    this.followDetail.replaceChildren(
      el(
        'p',
        { class: 'view-caption' },
        `The head's output at query ${row} is a weighted sum of value vectors: each key s adds p[${row}, s] × v[${g}, s], ` +
          `its weight times the value vector of KV head ${g} at that position. Adding the rows gives the core's head output; ` +
          `the largest difference is ${gap === 0 ? '0' : gap.toExponential(1)}, float32 rounding.`,
      ),
      scrollable("each key's share of the head output", contributionTable(followed, followed.mixing)),
    );
  }
}
