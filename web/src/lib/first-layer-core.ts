// The first screen's model: layer 0 of the page's Shakespeare model, from the
// first-layer slice of its checkpoint (web/tools/first-layer-slice.mjs), computed by
// the core in its own small module (wasm/bindings_first_layer.cpp: no JSON library, no
// embind; called through first-layer-call.mjs).
// Here: fetching the three files, reading the slice's header and the character
// vocabulary, and turning text into ids (BOS, then one id per character, as
// attn train's tokenizer does; tests/wasm/first-layer.test.mjs holds both the ids and
// the probabilities to the whole checkpoint's forward).
import createAnatomyFirstLayer from '@wasm/attention_first_layer.js';
import wasmUrl from '@wasm/attention_first_layer.wasm?url';
import { characterVocabulary, CharacterError } from './character-ids.mjs';
import { takeEarlyFetch } from './early-start';
import { firstLayerProbabilities, type FirstLayerModule } from './first-layer-call.mjs';
import { readSafetensors, SafetensorsTensor } from './safetensors.mjs';
import { moduleLoader } from './wasm-compile';

/** Where the page ships the Shakespeare model; the build writes the slice beside it. */
const firstLayerFiles = {
  config: './models/shakespeare/config.json',
  tokenizer: './models/shakespeare/tokenizer.json',
  slice: './models/shakespeare/first-layer.safetensors',
};

export class FirstLayerError extends Error {}

export interface FirstLayerAttention {
  characters: string[];         // [T - 1]: the text's characters (code points), after BOS
  probabilities: Float32Array;  // [Hq, T, T]: row t of head h at (h * T + t) * T, BOS at key 0
  heads: number;                // Hq
  T: number;                    // BOS + the characters
}

export interface FirstLayer {
  heads: number;
  /** The most characters one text may hold (the positions it was trained on, less BOS). */
  maxCharacters: number;
  /** Throws FirstLayerError for a character the model never saw, or a text that is too long. */
  attention(text: string): FirstLayerAttention;
}

const loadModule = moduleLoader(createAnatomyFirstLayer, wasmUrl, (raw) => raw as FirstLayerModule);

/** The response (the one the page's head started, if it did), or a FirstLayerError naming the file. */
async function fetchOk(url: string): Promise<Response> {
  let response: Response;
  try {
    response = await (takeEarlyFetch(url) ?? fetch(url));
  } catch (error) {
    throw new FirstLayerError(`could not fetch ${url} (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!response.ok) throw new FirstLayerError(`${url}: HTTP ${response.status}`);
  return response;
}

interface HfConfig { num_attention_heads: number; max_position_embeddings: number; [field: string]: unknown }

let opening: Promise<FirstLayer> | null = null;

/** The first screen's model, opened once per page; after a failure the next call tries again. */
export function openFirstLayer(): Promise<FirstLayer> {
  opening ??= (async () => {
    const [module, config, tokenizer, slice] = await Promise.all([
      loadModule(),
      fetchOk(firstLayerFiles.config).then((r) => r.json() as Promise<HfConfig>),
      fetchOk(firstLayerFiles.tokenizer).then((r) => r.json() as Promise<unknown>),
      fetchOk(firstLayerFiles.slice).then((r) => r.arrayBuffer()),
    ]);
    const maxCharacters = config.max_position_embeddings - 1;
    let tensors: SafetensorsTensor[];
    let vocabulary: ReturnType<typeof characterVocabulary>;
    try {
      tensors = readSafetensors(new Uint8Array(slice), 'first-layer.safetensors').tensors;
      const other = tensors.find((t) => t.dtype !== 'F32');
      if (other) throw new FirstLayerError(`first-layer.safetensors: tensor '${other.name}' is ${other.dtype}; the first screen reads float32`);
      vocabulary = characterVocabulary(tokenizer, maxCharacters);
    } catch (error) {
      throw new FirstLayerError(error instanceof Error ? error.message : String(error));
    }
    performance.mark('anatomy:first-layer-ready');  // web/bench/page-speed.mjs reports it
    return {
      heads: config.num_attention_heads,
      maxCharacters,
      attention(text) {
        let ids: number[];
        try {
          ids = vocabulary.ids(text);
        } catch (error) {
          throw new FirstLayerError(error instanceof CharacterError ? error.message : String(error));
        }
        const out = firstLayerProbabilities(module, config, tensors, ids);
        if (!(out instanceof Float32Array)) throw new FirstLayerError(out.error);
        return { characters: [...text], probabilities: out, heads: config.num_attention_heads, T: ids.length };
      },
    };
  })();
  opening.catch(() => (opening = null));
  return opening;
}
