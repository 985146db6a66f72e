// Types of first-layer-slice.mjs (plain JavaScript so that Node runs it without a build step).
export declare const firstLayerTensors: string[];
export declare const firstLayerValueTensors: string[];
export declare function firstLayerSlice(model: Uint8Array, source?: string, names?: string[]): Uint8Array;
