// The masks the gallery (W3) knows, with what each one reads and a sentence on
// it, the tile states the core reports, and the document-lengths box's parser.
import type { MaskSpec } from '../lib/core';
import { el } from '../lib/dom';

export type Param = 'window' | 'sinks' | 'prefix' | 'chunk' | 'docs';

export interface Kind {
  label: string;
  core: string;           // the core's MaskKind name
  uses: Param[];
  note(spec: MaskSpec): string;
}

export const fmt = (n: number) => n.toLocaleString('en-US');

export const kinds: Record<string, Kind> = {
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

/** Three documents of about 30%, 45% and 25% of S (fewer when S is tiny). */
export function splitLengths(S: number): number[] {
  if (S < 3) return [S];
  const a = Math.max(1, Math.round(S * 0.3)), b = Math.max(1, Math.round(S * 0.45));
  return [a, b, S - a - b];
}

