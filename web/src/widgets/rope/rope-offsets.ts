// RoPE, part b: q and k rotated to every pair of positions (m, n); their
// dot product depends on m - n alone, so each diagonal of the grid holds one
// value (core ropeScores). q and k are the model's (the run's) or the reader's.
import type { Core } from '../../lib/core';
import { diverging } from '../../lib/colormap';
import { tabulated } from '../../lib/color-table';
import { el, formatNumber, labelled } from '../../lib/dom';
import { Heatmap } from '../../lib/heatmap';
import type { UrlState } from '../../lib/url-state';
import { HeadChoice, headDim, positionCount, positions, Run, theta } from './rope-setup';

/** The largest |entry| a typed q or k may have: beyond it the scores run to 1e285 and say nothing. */
export const vectorLimit = 1000;

function parseVector(text: string, name: string): { vector: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).filter((part) => part !== '');
  const vector = parts.map(Number);
  if (vector.length !== headDim || !vector.every(Number.isFinite))
    return { error: `${name} needs ${headDim} numbers separated by commas (got ${parts.length}${vector.every(Number.isFinite) ? '' : ', not all numbers'}).` };
  const outside = vector.findIndex((x) => Math.abs(x) > vectorLimit);
  if (outside >= 0)
    return { error: `${name}'s number ${outside + 1} is ${parts[outside]}: each number must be from −${vectorLimit} to ${vectorLimit}.` };
  return { vector };
}

const vectorText = (v: number[]) => v.map((x) => Number(x.toFixed(3))).join(', ');
/** A score q·k, in one format wherever part b shows one: six decimals, enough to see two agree. */
const scoreText = (x: number) => formatNumber(x, 6);

export class RopeOffsets {
  readonly root: HTMLElement;
  readonly qInput = el('input', { type: 'text', class: 'vector-input', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'rope-q' });
  readonly kInput = el('input', { type: 'text', class: 'vector-input', autocomplete: 'off', spellcheck: 'false', 'data-testid': 'rope-k' });
  readonly modelButton = el('button', { type: 'button', class: 'secondary', 'data-testid': 'rope-use-model' }, "Use the model's q and k");
  /** The reader's own q and k as typed; both null: the model's. */
  custom: { q: string | null; k: string | null };
  private readonly source = el('p', { class: 'lesson-caption' });
  private readonly map = new Heatmap({ title: 'q·k after RoPE for query position m and key position n', rowAxis: 'query position m', colAxis: 'key position n', maxCellPx: 15 });
  private readonly readout = el('p', { class: 'lesson-readout', 'data-testid': 'rope-deviation' });
  private q: number[] = [];
  private k: number[] = [];

  constructor(private readonly core: Core, state: UrlState) {
    this.map.root.dataset.testid = 'rope-offsets';
    this.custom = { q: state.get('q'), k: state.get('k') };
    if (this.custom.q !== null || this.custom.k !== null) {
      this.qInput.value = this.custom.q ?? '';
      this.kInput.value = this.custom.k ?? '';
    }
    this.root = el('section', { class: 'lesson-part', 'aria-labelledby': 'rope-part-b' },
      el('h3', { class: 'lesson-subtitle', id: 'rope-part-b' }, 'b. The score sees only the offset'),
      el('div', { class: 'controls' },
        labelled('q before RoPE (8 numbers)', this.qInput, `each from −${vectorLimit} to ${vectorLimit}`),
        labelled('k before RoPE (8 numbers)', this.kInput, `each from −${vectorLimit} to ${vectorLimit}`),
        el('div', { class: 'control buttons' }, this.modelButton)),
      this.source,
      el('div', { class: 'no-mask' }, this.map.root),
      this.readout);
  }

  get usesModel(): boolean {
    return this.custom.q === null && this.custom.k === null;
  }

  /**
   * Picks q and k: the query of the run's last token and the key of its first
   * (before RoPE) while the reader has typed none, else the boxes. Returns the
   * problem with a box, or null.
   */
  choose(run: Run | null, choice: HeadChoice): string | null {
    if (this.usesModel && run) {
      const layer = run.own.layers![choice.layer], T = run.ids.length;
      this.q = layer.q[0][choice.head][T - 1];
      this.k = layer.k[0][choice.kvHead][0];
      this.qInput.value = vectorText(this.q);
      this.kInput.value = vectorText(this.k);
      this.qInput.removeAttribute('aria-invalid');
      this.kInput.removeAttribute('aria-invalid');
      this.source.textContent =
        `q is the query of the last token (position ${T - 1}) and k the key of the first, both before RoPE, from layer ${choice.layer}, ` +
        `head ${choice.head} (KV head ${choice.kvHead}) of the run below. Edit either to try your own.`;
      return null;
    }
    for (const [name, input] of [['q', this.qInput], ['k', this.kInput]] as const) {
      const parsed = parseVector(input.value, name);
      if ('error' in parsed) {
        input.setAttribute('aria-invalid', 'true');
        return parsed.error;
      }
      input.removeAttribute('aria-invalid');
      if (name === 'q') this.q = parsed.vector;
      else this.k = parsed.vector;
    }
    this.source.textContent = 'Your own q and k, before RoPE. "Use the model\'s q and k" goes back to the tiny model\'s.';
    return null;
  }

  render(): void {
    const { q, k } = this;
    // q rotated to every position m, dotted with k rotated to every position n: [P][P].
    const scores = this.core.ropeScores({ q, k, positions, theta, pairing: 'half_split' }).scores;

    let spread = 0, worst = 0, lo = Infinity, hi = -Infinity;
    for (let offset = -(positionCount - 1); offset < positionCount; offset++) {
      let min = Infinity, max = -Infinity;
      for (let m = Math.max(0, offset); m < Math.min(positionCount, positionCount + offset); m++) {
        const s = scores[m][m - offset];
        min = Math.min(min, s);
        max = Math.max(max, s);
      }
      if (max - min > spread) [spread, worst] = [max - min, offset];
      lo = Math.min(lo, min);
      hi = Math.max(hi, max);
    }
    const limit = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    const plain = q.reduce((sum, x, d) => sum + x * k[d], 0);
    this.map.setData({
      rows: positionCount,
      cols: positionCount,
      value: (m, n) => scores[m][n],
      allowed: () => true,
      rowLabel: (m) => String(m),
      colLabel: (n) => String(n),
      scale: tabulated(diverging(limit), -limit, limit),
      domain: [-limit, limit],
      describe: (m, n) => `query at m = ${m}, key at n = ${n}, offset m − n = ${m - n}: q·k after RoPE = ${scoreText(scores[m][n])}`,
    });
    const example = Math.min(7, positionCount - 1);
    this.readout.dataset.value = String(spread);
    this.readout.dataset.offset = String(worst);
    this.readout.textContent =
      `Along every diagonal (one offset m − n, ${2 * positionCount - 1} of them) the scores agree to ${spread === 0 ? '0' : spread.toExponential(1)} at most ` +
      `(largest spread at offset ${worst}), while across the grid they range from ${scoreText(lo)} to ${scoreText(hi)}. ` +
      `For example s(${example}, 0) = ${scoreText(scores[example][0])} and s(${positionCount - 1}, ${positionCount - 1 - example}) = ${scoreText(scores[positionCount - 1][positionCount - 1 - example])}. ` +
      `Without RoPE every cell would be q·k = ${scoreText(plain)}. The upper triangle (keys after the query) is masked in a causal model; it is shown because the identity holds there too.`;
  }
}
