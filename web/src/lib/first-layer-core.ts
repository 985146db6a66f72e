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
import { firstLayerAttention, firstLayerProbabilities, type FirstLayerBlock, type FirstLayerModule } from './first-layer-call.mjs';
import { readSafetensors, SafetensorsTensor } from './safetensors.mjs';
import { moduleLoader } from './wasm-compile';

/** Where the page ships the Shakespeare model; the build writes the slice beside it. */
const firstLayerFiles = {
  config: './models/shakespeare/config.json',
  tokenizer: './models/shakespeare/tokenizer.json',
  slice: './models/shakespeare/first-layer.safetensors',
  values: './models/shakespeare/first-layer-values.safetensors',
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

/** What both figures read: the module, config.json, the vocabulary and the first slice's tensors. */
interface Opened {
  module: FirstLayerModule;
  config: HfConfig;
  tensors: SafetensorsTensor[];
  vocabulary: ReturnType<typeof characterVocabulary>;
  maxCharacters: number;
}

/** A slice's tensors, all float32, or a FirstLayerError naming the file. */
function sliceTensors(bytes: ArrayBuffer, file: string): SafetensorsTensor[] {
  const tensors = readSafetensors(new Uint8Array(bytes), file).tensors;
  const other = tensors.find((t) => t.dtype !== 'F32');
  if (other) throw new FirstLayerError(`${file}: tensor '${other.name}' is ${other.dtype}; the page reads float32`);
  return tensors;
}

/** The text's ids (BOS, then one per character), or a FirstLayerError naming the character. */
function idsOf(opened: Opened, text: string): number[] {
  try {
    return opened.vocabulary.ids(text);
  } catch (error) {
    throw new FirstLayerError(error instanceof CharacterError ? error.message : String(error));
  }
}

let opening: Promise<Opened> | null = null;

/** The shared files, opened once per page; after a failure the next call tries again. */
function openShared(): Promise<Opened> {
  opening ??= (async () => {
    const [module, config, tokenizer, slice] = await Promise.all([
      loadModule(),
      fetchOk(firstLayerFiles.config).then((r) => r.json() as Promise<HfConfig>),
      fetchOk(firstLayerFiles.tokenizer).then((r) => r.json() as Promise<unknown>),
      fetchOk(firstLayerFiles.slice).then((r) => r.arrayBuffer()),
    ]);
    const maxCharacters = config.max_position_embeddings - 1;
    try {
      return { module, config, tensors: sliceTensors(slice, 'first-layer.safetensors'), vocabulary: characterVocabulary(tokenizer, maxCharacters), maxCharacters };
    } catch (error) {
      throw error instanceof FirstLayerError ? error : new FirstLayerError(error instanceof Error ? error.message : String(error));
    }
  })();
  opening.catch(() => (opening = null));
  return opening;
}

/** The first screen's model. */
export async function openFirstLayer(): Promise<FirstLayer> {
  const opened = await openShared();
  performance.mark('anatomy:first-layer-ready');  // web/bench/page-speed.mjs reports it
  const { module, config, tensors } = opened;
  return {
    heads: config.num_attention_heads,
    maxCharacters: opened.maxCharacters,
    attention(text) {
      const ids = idsOf(opened, text);
      const out = firstLayerProbabilities(module, config, tensors, ids);
      if (!(out instanceof Float32Array)) throw new FirstLayerError(out.error);
      return { characters: [...text], probabilities: out, heads: config.num_attention_heads, T: ids.length };
    },
  };
}

/** Layer 0's whole attention sublayer on one text; every array flat and row-major. */
export interface FirstLayerSublayer extends FirstLayerBlock {
  characters: string[];  // [T - 1]: the text's characters, after BOS
  T: number;             // BOS + the characters
}

export interface FirstLayerAttentionModel {
  heads: number;     // Hq
  kvHeads: number;   // Hkv
  headDim: number;   // dh
  width: number;     // D
  maxCharacters: number;
  /** Throws FirstLayerError for a character the model never saw, or a text that is too long. */
  sublayer(text: string): FirstLayerSublayer;
}

/** The notebook's multi-head figure: the first screen's files and the second slice (v_proj, o_proj). */
export async function openFirstLayerAttention(): Promise<FirstLayerAttentionModel> {
  const [opened, values] = await Promise.all([openShared(), fetchOk(firstLayerFiles.values).then((r) => r.arrayBuffer())]);
  const { module, config } = opened;
  const tensors = [...opened.tensors, ...sliceTensors(values, 'first-layer-values.safetensors')];
  const heads = config.num_attention_heads, width = Number(config.hidden_size);
  return {
    heads,
    kvHeads: Number(config.num_key_value_heads ?? heads),
    headDim: Number(config.head_dim ?? width / heads),
    width,
    maxCharacters: opened.maxCharacters,
    sublayer(text) {
      const ids = idsOf(opened, text);
      const out = firstLayerAttention(module, config, tensors, ids);
      if ('error' in out) throw new FirstLayerError(out.error);
      return { ...out, characters: [...text], T: ids.length };
    },
  };
}
