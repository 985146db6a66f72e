// Types of first-layer-call.mjs (plain JavaScript so that Node runs it without a build step).
import type { SafetensorsTensor } from './safetensors.mjs';

/** What attention_first_layer's glue gives: its C exports and its memory. */
export interface FirstLayerModule {
  _malloc(bytes: number): number;
  _free(at: number): void;
  _first_layer_probabilities(config: number, names: number, ranks: number, dims: number, data: number, sizes: number,
    count: number, ids: number, T: number): number;
  _first_layer_attention(config: number, names: number, ranks: number, dims: number, data: number, sizes: number,
    count: number, ids: number, T: number): number;
  _first_layer_size(): number;
  _first_layer_error(): number;
  HEAPU8: Uint8Array;
  HEAPF32: Float32Array;
}

export declare function firstLayerProbabilities(module: FirstLayerModule, config: Record<string, unknown>,
  tensors: Pick<SafetensorsTensor, 'name' | 'shape' | 'bytes'>[], ids: number[]): Float32Array | { error: string };

/** Layer 0's attention sublayer, each array flat and row-major. */
export interface FirstLayerBlock {
  probabilities: Float32Array;  // [Hq, T, T]
  headOutputs: Float32Array;    // [Hq, T, dh]
  merged: Float32Array;         // [T, Hq*dh]
  update: Float32Array;         // [T, D]
}

export declare function firstLayerAttention(module: FirstLayerModule, config: Record<string, unknown>,
  tensors: Pick<SafetensorsTensor, 'name' | 'shape' | 'bytes'>[], ids: number[]): FirstLayerBlock | { error: string };
