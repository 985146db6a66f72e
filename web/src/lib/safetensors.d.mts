// Types of safetensors.mjs (plain JavaScript so that Node runs it without a build step).

export interface SafetensorsTensor {
  name: string;
  dtype: string;            // "F32", "F16", "BF16", ...
  shape: number[];
  bytes: Uint8Array;        // little-endian, row-major
}

export declare class SafetensorsError extends Error {}
export declare function safetensorsHeader(file: Uint8Array, source?: string): { header: Record<string, unknown>; length: number };
export declare function readSafetensors(file: Uint8Array, source?: string): { tensors: SafetensorsTensor[]; metadata: Record<string, string> };
export declare function writeSafetensors(tensors: SafetensorsTensor[], metadata?: Record<string, string>): Uint8Array;
