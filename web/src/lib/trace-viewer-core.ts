// The trace viewer's tools in the page, typed: the page's own trace and the checks
// (wasm/bindings_trace.cpp), the checkpoint export, and attn diff of a learner's
// tensors (wasm/bindings_diff.cpp: core/diff run by the core). A module of its own,
// attention_trace_viewer, imported only when the reader uses one of them
// (widgets/trace-viewer/: trace-viewer.ts, diff-door.ts, diff-panel.ts): neither its JavaScript nor
// its wasm is part of what the chapter loads as a reader scrolls through it.
import createAnatomyTraceViewer from '@wasm/attention_trace_viewer.js';
import wasmUrl from '@wasm/attention_trace_viewer.wasm?url';
import { CoreError, type Trace, type TraceOptions, type VerifyResult } from './core';
import { moduleLoader } from './wasm-compile';
import { unwrapResult } from './wasm-result';

/** One tensor of the learner's file against the core's float64 forward. */
export interface ComparedTensor {
  name: string;                      // e.g. "layers.0.q_rope" (docs/diff.md)
  shape: number[];
  precision: 'float32' | 'float64';  // the learner's array
  tolerance: { atol: number; rtol: number };
  max_abs_error: number | null;      // null: unbounded (a value that is NaN or infinite on either side)
  max_rel_error: number | null;
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
  ours: number | 'nan' | 'inf' | '-inf';   // a value that is not finite is named, as JSON has no such numbers
  theirs: number | 'nan' | 'inf' | '-inf';
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

export interface TraceViewerModule {
  /** The learner's .npz or .safetensors bytes against the seeded tiny model on `tokens`; throws DiffError with the core's message. */
  diff(tokens: number[][], seed: number, file: Uint8Array): DiffReport;
  /** The trace `attn verify --export-trace` writes for the same options (ids 1..6, batch 2, seed 1 by default); throws CoreError. */
  trace(options?: TraceOptions): Trace;
  /** The checks of the trace alone; throws CoreError. */
  verify(options?: TraceOptions): VerifyResult;
  /** model.safetensors (float32), as `attn export-checkpoint --seed` writes it; throws CoreError. */
  exportCheckpoint(seed: number): Uint8Array;
  /** The config.json `attn export-checkpoint --seed` writes beside model.safetensors; throws DiffError. */
  checkpointConfig(seed: number): Record<string, unknown>;
}

/** diff's options (as JSON text): the learner's rows, the tiny model's seed; cached, the rows' first tokens taken from a KV cache (the page passes none). */
export interface DiffOptions { tokens: number[][]; seed: number; cached?: number }

/** The options of exportCheckpoint and checkpointConfig (as JSON text). */
export interface SeedOptions { seed: number }

type RawModule = {
  diff(options: string, file: Uint8Array): string;
  trace(options: string): string;
  verify(options: string): string;
  exportCheckpoint(options: string): Uint8Array | { error: string };
  checkpointConfig(options: string): string;
};

const unwrapDiff = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new DiffError(message));
const unwrapCore = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new CoreError(message));

/** Loads the module once (fetch and compile, streamed); later calls share it. */
export const loadTraceViewerCore = moduleLoader(createAnatomyTraceViewer, wasmUrl, (module): TraceViewerModule => {
  const raw = module as RawModule;
  const json = <T>(options: T): string => JSON.stringify(options);
  return {
    diff: (tokens, seed, file) => unwrapDiff(raw.diff(json<DiffOptions>({ tokens, seed }), file)),
    trace: (options = {}) => unwrapCore(raw.trace(json<TraceOptions>(options))),
    verify: (options = {}) => unwrapCore(raw.verify(json<TraceOptions>(options))),
    exportCheckpoint: (seed) => unwrapCore(raw.exportCheckpoint(json<SeedOptions>({ seed }))),
    checkpointConfig: (seed) => unwrapDiff(raw.checkpointConfig(json<SeedOptions>({ seed }))),
  };
});
