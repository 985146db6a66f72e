// The masks the gallery knows, with what each one reads and a sentence on
// it, the tile states the core reports, and the document-lengths box's parser.
import type { MaskSpec } from '../../lib/core';
import { el } from '../../lib/dom';
import { count, groupDigits } from '../../lib/words';

export type Param = 'window' | 'sinks' | 'prefix' | 'chunk' | 'docs';

export interface Kind {
  label: string;
  core: string;           // the core's MaskKind name
  uses: Param[];
  note(spec: MaskSpec): string;
  /** Where this mask starts when it is picked, besides startValues. */
  start?: Partial<Record<'T' | 'S' | Param, string>>;
}

/** Every mask starts from these (T = S = 128, documents adding up to 128), unless its own start says otherwise. */
export const startValues: Record<'T' | 'S' | Param, string> = { T: '128', S: '128', window: '32', sinks: '4', prefix: '48', chunk: '32', docs: '40,56,32' };

/** "positions 5 to 9", or "position 9" for one. */
const positionsText = (from: number, to: number) => (from === to ? `position ${fmt(from)}` : `positions ${fmt(from)} to ${fmt(to)}`);

export const fmt = groupDigits;

export const kinds: Record<string, Kind> = {
  full: {
    label: 'Full (no mask)', core: 'full', uses: [],
    note: (m) => `Every query sees ${m.S === 1 ? 'the one key' : `all ${count(m.S, 'key')}`}, as in an encoder or in cross-attention. No tile can be skipped.`,
  },
  causal: {
    label: 'Causal', core: 'causal', uses: [],
    note: (m) =>
      m.T === m.S
        ? 'Each query sees its own position and every earlier one: the lower triangle.'
        : `Each query sees its own position and every earlier one. With T < S the queries sit at ${positionsText(m.S - m.T, m.S - 1)}, so the diagonal moves right by S − T = ${fmt(m.S - m.T)}.`,
  },
  causal_offset: {
    label: 'Causal with a KV cache (T < S)', core: 'causal', uses: [],
    start: { T: '32' }, // 32 new queries after 96 cached keys
    note: (m) =>
      m.T === m.S
        ? 'With T = S nothing is cached yet and this is the plain causal mask. Make T smaller than S to add a history.'
        : `${count(m.T, 'new query', 'new queries')} after ${count(m.S - m.T, 'cached key')}. ${m.T === 1 ? 'It sits' : 'They sit'} at ${positionsText(m.S - m.T, m.S - 1)}, so the diagonal moves right by S − T = ${fmt(m.S - m.T)}; with T = 1 (decoding) the single row sees every key.`,
  },
  sliding_window: {
    label: 'Sliding window', core: 'sliding_window', uses: ['window'],
    note: (m) => `Each query sees the last ${count(m.window!, 'key')} up to its own position. Mistral, Gemma and gpt-oss use windows like this in some or all layers.`,
  },
  sink_window: {
    label: 'Sink tokens + window', core: 'sink_window', uses: ['sinks', 'window'],
    note: (m) =>
      (m.sinks === 0
        ? `With no sink tokens this is a plain sliding window of ${count(m.window!, 'key')}. `
        : `The first ${count(m.sinks!, 'key')} (the attention ${m.sinks === 1 ? 'sink' : 'sinks'}) ${m.sinks === 1 ? 'stays' : 'stay'} visible to every later query, besides its window of ${count(m.window!, 'key')}. `) +
      'StreamingLLM keeps sink tokens so that the model does not collapse when older keys are dropped.',
  },
  prefix_lm: {
    label: 'Prefix-LM', core: 'prefix_lm', uses: ['prefix'],
    note: (m) => `Every query sees the first ${count(m.prefix!, 'key')}, the prefix, in both directions; after the prefix, attention is causal.`,
  },
  document: {
    label: 'Document masking (packed sequences)', core: 'document', uses: ['docs'],
    note: (m) => `${count(m.document_lengths!.length, 'document')} packed into one sequence of ${fmt(m.S)}. A query sees the earlier keys of its own document only, never another document's.`,
  },
  chunked: {
    label: 'Chunked local attention', core: 'chunked', uses: ['chunk'],
    note: (m) => `The sequence is cut into chunks of ${count(m.chunk!, 'position')}; a query sees the earlier keys of its own chunk only (the local-attention layers of Llama 4 work this way).`,
  },
};

export const maxLength = 16384;
export const tileSizes = ['16', '32', '64', '128'];

// maskTiles' states: 0 skipped, 1 partial, 2 full.
export const stateNames = ['skipped', 'partial', 'full'];

export function swatch(state: number): HTMLElement {
  return el('span', { class: `mask-swatch mask-swatch-${stateNames[state]}`, 'aria-hidden': 'true' });
}

/** "300, 500, 224" into lengths, or what is wrong with the text. */
export function parseLengths(text: string): number[] | string {
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
