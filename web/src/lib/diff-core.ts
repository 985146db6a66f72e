// attn diff in the page (wasm/bindings_diff.cpp: core/diff run by the core), typed.
// A module of its own, imported only by the trace viewer's check of a learner's
// tensors (widgets/diff-panel.ts): neither its JavaScript nor its wasm is part of
// what the chapter loads first.
import createAnatomyDiff from '@wasm/attention_diff.js';
import wasmUrl from '@wasm/attention_diff.wasm?url';
import { moduleLoader } from './wasm-compile';
import { unwrapResult } from './wasm-result';

/** One tensor of the learner's file against the core's float64 forward. */
export interface ComparedTensor {
  name: string;                      // e.g. "layers.0.q_rope" (docs/diff.md)
  shape: number[];
  precision: 'float32' | 'float64';  // the learner's array
  tolerance: { atol: number; rtol: number };
  max_abs_error: number;
  max_rel_error: number;
  mismatches: number;                // values outside atol + rtol |ours|
  agrees: boolean;
}

/** Where the first diverging tensor first leaves the core's values. */
export interface Divergence {
  tensor: string;
  layer?: number;
  /** ["sequence", "head", "position", "channel" | "key"] or ["sequence", "position", "channel" | "token"] */
  axes: string[];
  index: number[];                   // one entry per axis
  ours: number;
  theirs: number;
  mismatches: number;
  /** The [T, columns] block holding the first diverging value: its sequence (and head), yours and ours. */
  block?: { theirs: number[][]; ours: number[][] };
  [axis: string]: unknown;           // each axis name with its index, as in `index`
}

/** core/diff/diff.hpp's report, as `attn diff --json` prints it. */
export interface DiffReport {
  agrees: boolean;
  tokens: number[][];                // [B][T]
  compared: ComparedTensor[];        // in the order the forward computes them
  not_given: string[];
  first_divergence: Divergence | null;
  diagnosis: { mistake: string; description: string } | null;
  mistakes_tried: string[];
}

export class DiffError extends Error {}

export interface DiffModule {
  /** The learner's .npz or .safetensors bytes against the seeded tiny model on `tokens`; throws DiffError with the core's message. */
  diff(tokens: number[][], seed: number, file: Uint8Array): DiffReport;
  /** The config.json `attn export-checkpoint --seed` writes beside model.safetensors. */
  checkpointConfig(seed: number): Record<string, unknown>;
}

type RawModule = {
  diff(options: string, file: Uint8Array): string;
  checkpointConfig(options: string): string;
};

const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new DiffError(message));

/** Loads the module once (fetch and compile, streamed); later calls share it. */
export const loadDiff = moduleLoader(createAnatomyDiff, wasmUrl, (module): DiffModule => {
  const raw = module as RawModule;
  return {
    diff: (tokens, seed, file) => unwrap(raw.diff(JSON.stringify({ tokens, seed }), file)),
    checkpointConfig: (seed) => unwrap(raw.checkpointConfig(JSON.stringify({ seed }))),
  };
});
