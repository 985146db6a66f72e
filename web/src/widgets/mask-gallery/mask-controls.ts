// The mask gallery's controls: the mask, T and S, the tile sizes and the
// parameters of the chosen mask, read into a MaskSpec; the URL holds them.
import type { MaskSpec } from '../../lib/core';
import { el, labelled, numberInput, select } from '../../lib/dom';
import { readWhole } from '../../lib/fields';
import type { UrlState } from '../../lib/url-state';
import type { MaskPicture } from './mask-figure';
import { fmt, kinds, maxLength, Param, parseLengths, startValues, tileSizes } from './mask-kinds';

export class MaskControls {
  readonly root: HTMLElement;
  readonly kind = select(Object.entries(kinds).map(([value, k]) => [value, k.label]), 'causal');
  readonly tileQ = select(tileSizes.map((t) => [t, t]), '16');
  readonly tileK = select(tileSizes.map((t) => [t, t]), '16');
  private readonly T = numberInput('number', 1, maxLength, 1, 128);
  private readonly S = numberInput('number', 1, maxLength, 1, 128);
  private readonly window = numberInput('number', 1, maxLength, 1, 32);
  private readonly sinks = numberInput('number', 0, maxLength, 1, 4);
  private readonly prefix = numberInput('number', 0, maxLength, 1, 48);
  private readonly chunk = numberInput('number', 1, maxLength, 1, 32);
  private readonly docs = el('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', class: 'mask-docs', value: '40,56,32' });
  private readonly all: HTMLInputElement[] = [this.T, this.S, this.window, this.sinks, this.prefix, this.chunk, this.docs];
  private readonly params: Record<Param, HTMLElement>;
  private readonly docsHint: HTMLElement;
  private readonly numberFields: { input: HTMLInputElement; key: 'T' | 'S' | Param; name: string; min: number }[] = [
    { input: this.T, key: 'T', name: 'T', min: 1 },
    { input: this.S, key: 'S', name: 'S', min: 1 },
    { input: this.window, key: 'window', name: 'The window', min: 1 },
    { input: this.sinks, key: 'sinks', name: 'The number of sink tokens', min: 0 },
    { input: this.prefix, key: 'prefix', name: 'The prefix length', min: 0 },
    { input: this.chunk, key: 'chunk', name: 'The chunk size', min: 1 },
  ];

  /** `onChange` runs after every edit. */
  constructor(onChange: () => void) {
    const testIds: [HTMLElement, string][] = [
      [this.kind, 'mask-gallery-kind'], [this.T, 'mask-gallery-T'], [this.S, 'mask-gallery-S'], [this.tileQ, 'mask-gallery-tile-q'], [this.tileK, 'mask-gallery-tile-k'],
      [this.window, 'mask-gallery-window'], [this.sinks, 'mask-gallery-sinks'], [this.prefix, 'mask-gallery-prefix'], [this.chunk, 'mask-gallery-chunk'], [this.docs, 'mask-gallery-docs'],
    ];
    for (const [node, id] of testIds) node.dataset.testid = id;
    this.params = {
      window: labelled('Window', this.window, 'keys a query sees, itself included'),
      sinks: labelled('Sink tokens', this.sinks, 'first keys every query keeps'),
      prefix: labelled('Prefix length', this.prefix, 'keys seen in both directions'),
      chunk: labelled('Chunk size', this.chunk, 'positions per chunk'),
      docs: labelled('Document lengths', this.docs, 'comma-separated, adding up to S'),
    };
    this.docsHint = this.params.docs.querySelector<HTMLElement>('.hint')!;
    this.root = el(
      'div',
      { class: 'controls mask-controls' },
      labelled('Mask', this.kind),
      labelled('Queries T', this.T, `1 to ${fmt(maxLength)}`),
      labelled('Keys S', this.S, `T to ${fmt(maxLength)}`),
      labelled('Tile rows Br', this.tileQ, 'queries per tile'),
      labelled('Tile columns Bc', this.tileK, 'keys per tile'),
      ...Object.values(this.params),
    );
    this.kind.addEventListener('change', () => {
      this.startKind();
      this.showParams();
      onChange();
    });
    for (const input of this.all) input.addEventListener('input', onChange);
    for (const input of [this.tileQ, this.tileK]) input.addEventListener('change', onChange);
  }

  /**
   * Each mask starts from its own values when it is picked (T = S = 128 for most, a
   * history of 96 cached keys for the KV-cache mask), not from what the last mask
   * was left at: the cache mask's T = 32 would otherwise make every later one a strip.
   */
  private startKind(): void {
    const start = { ...startValues, ...kinds[this.kind.value].start };
    for (const { input, key } of this.numberFields) input.value = start[key];
    this.docs.value = start.docs;
  }

  showParams(): void {
    const kind = kinds[this.kind.value];
    for (const [param, control] of Object.entries(this.params) as [Param, HTMLElement][]) control.hidden = !kind.uses.includes(param);
  }

  /** Clears every invalid mark and brings the documents hint up to date. */
  reset(): void {
    for (const node of [this.kind, this.tileQ, this.tileK, ...this.all]) node.removeAttribute('aria-invalid');
    const lengths = parseLengths(this.docs.value);
    const sum = typeof lengths === 'string' ? null : lengths.reduce((a, b) => a + b, 0);
    this.docsHint.textContent = sum === null ? 'comma-separated, adding up to S' : `comma-separated; they add up to ${fmt(sum)}, S is ${this.S.value || '?'}`;
  }

  /** The spec the inputs describe, or the first problem with them and its input. */
  readSpec(): { spec: MaskSpec } | { error: string; input: HTMLElement[] } {
    const kind = kinds[this.kind.value];
    const spec: MaskSpec = { kind: kind.core, T: 0, S: 0 };
    for (const { input, key, name, min } of this.numberFields) {
      if (key !== 'T' && key !== 'S' && !kind.uses.includes(key)) continue;
      const read = readWhole(input, name, min, maxLength);
      if ('error' in read) return { error: read.error, input: [input] };
      (spec as unknown as Record<string, number>)[key] = read.value;
    }
    if (kind.uses.includes('docs')) {
      const lengths = parseLengths(this.docs.value);
      if (typeof lengths === 'string') return { error: lengths, input: [this.docs] };
      spec.document_lengths = lengths;
    }
    return { spec };
  }

  /**
   * What `picture` shows for these inputs, as [name, value], for the status line while
   * they are invalid; empty when the picture is of another mask.
   */
  shownValues(inputs: HTMLElement[], picture: MaskPicture): [string, string | number][] {
    if (picture.kind !== this.kind.value) return [];
    const values: [string, string | number][] = [];
    for (const input of inputs) {
      if (input === this.docs) values.push(['the document lengths', picture.spec.document_lengths!.join(', ')]);
      const field = this.numberFields.find((f) => f.input === input);
      const value = field && (picture.spec as unknown as Record<string, number | undefined>)[field.key];
      if (field && value !== undefined) values.push([field.key, value]);
    }
    return values;
  }

  /** Which inputs a core message is about, so they can be marked invalid. */
  culprits(message: string): HTMLElement[] {
    if (/document/.test(message)) return [this.docs];
    if (/prefix/.test(message)) return [this.prefix];
    if (/window/.test(message)) return [this.window];
    if (/sink/.test(message)) return [this.sinks];
    if (/chunk/.test(message)) return [this.chunk];
    return [this.T, this.S];
  }

  save(state: UrlState): void {
    const uses = kinds[this.kind.value].uses;
    const used = (param: Param, input: HTMLInputElement) => (uses.includes(param) ? input.value : null);
    state.set({
      kind: this.kind.value, T: this.T.value, S: this.S.value, bq: this.tileQ.value, bk: this.tileK.value,
      window: used('window', this.window), sinks: used('sinks', this.sinks), prefix: used('prefix', this.prefix),
      chunk: used('chunk', this.chunk), docs: used('docs', this.docs),
    });
  }

  /** The link's values go into the inputs as they are; a bad one shows its message like typed input. */
  restore(state: UrlState): void {
    const kind = state.get('kind');
    if (kind && kind in kinds) this.kind.value = kind;
    const names = ['T', 'S', 'window', 'sinks', 'prefix', 'chunk', 'docs'];
    this.all.forEach((input, i) => {
      const value = state.get(names[i]);
      if (value !== null) input.value = value;
    });
    for (const [input, name] of [[this.tileQ, 'bq'], [this.tileK, 'bk']] as const) {
      const value = state.get(name);
      if (value !== null && tileSizes.includes(value)) input.value = value;
    }
    this.showParams();
  }
}
