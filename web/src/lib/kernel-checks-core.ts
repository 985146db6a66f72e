// The checks of the page's WebGPU kernels, written once in the core
// (core/verify/kernel_cases.hpp, wasm/bindings_kernel_checks.cpp): the cases, their
// inputs, and the comparison of what a kernel returned with the core's reference. A
// wasm module of its own, loaded only where the kernels are checked.
import createKernelChecks from '@wasm/attention_kernel_checks.js';
import wasmUrl from '@wasm/attention_kernel_checks.wasm?url';
import { CoreError } from './core';
import type { CheckRecord, MaskSpec } from './core-types';
import { moduleLoader } from './wasm-compile';
import { unwrapResult } from './wasm-result';

export interface KernelCase {
  id: string;
  what: string;
  shape: { B: number; Hq: number; Hkv: number; T: number; S: number; D: number };
  /** core/masks.hpp's kind: causal, sliding_window, sink_window, prefix_lm, document, chunked or full. */
  mask: string;
  /** A learned sink logit per query head. */
  sinks: boolean;
  /** A query row that sees no key, or -1. */
  blind_row: number;
  /** T = 1: one new query over a cache. */
  decode: boolean;
}

export interface KernelInputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  sinks: Float32Array | null;
  /** [T, 4]: each query row's visible keys, two half-open ranges. */
  ranges: Int32Array;
}

/** A case of the page's own (the notebook's figures): any shape, any mask the core knows. */
export interface FigureCase {
  shape: KernelCase['shape'];
  mask: MaskSpec;
}

/** A case: a named one's id, or the page's own. */
export type CaseRef = string | FigureCase;

/** One key tile of a row's online softmax (core/verify/online_softmax_steps.hpp); null for -infinity. */
export interface SoftmaxStep {
  first: number;
  last: number;
  visible: number;
  tile_max: number | null;
  m: number | null;
  l: number;
  rescale: number;
  acc: number[];
}

/** One query row, tile by tile, in fp64, and its plain softmax at once. */
export interface RowSteps {
  batch: number;
  head: number;
  row: number;
  tile_k: number;
  /** [S]: q . k / sqrt(D), null where the row does not see the key. */
  scores: (number | null)[];
  sink: number | null;
  steps: SoftmaxStep[];
  /** [S]: the plain softmax of the whole row. */
  probs: number[];
  /** [D]: sum of probs times v. */
  out: number[];
}

export interface RowStepsPlace {
  tile_k: number;
  batch: number;
  head: number;
  row: number;
}

/** Where a flash kernel's tile record was taken. */
export interface TileRecordPlace {
  tile_q: number;
  tile_k: number;
  batch: number;
  head: number;
  row: number;
}

export interface TileCounts {
  rows: number;
  cols: number;
  skipped: number;
  partial: number;
  full: number;
}

/** An attention the check suite asks the device for (core/verify/device_attention_backend.hpp). */
export interface AttentionRequest extends KernelInputs {
  key: string;
  shape: KernelCase['shape'];
}

export interface SuiteRound {
  complete: boolean;
  /** The attentions this round asked for and could not be given. */
  requests: number;
  /** attn verify's checks, once complete. */
  checks: CheckRecord[];
}

export interface DeviceSuiteOptions {
  /** The tiny model with learned sink logits (seed 2) instead of without (seed 1). */
  sinks?: boolean;
}

/** The check suite on the tiny model with its attention on the device, run by replay. */
export interface DeviceSuite {
  run(): SuiteRound;
  request(i: number): AttentionRequest;
  answer(key: string, out: Float32Array, probs: Float32Array | null): void;
  delete(): void;
}

export interface RawDeviceSuite {
  run(): string;
  request(i: number): AttentionRequest | { error: string };
  answer(key: string, out: Float32Array, probs: Float32Array | null): string;
  delete(): void;
}

export interface KernelChecks {
  deviceSuite(options: DeviceSuiteOptions): DeviceSuite;
  kernelCases(): KernelCase[];
  kernelInputs(id: CaseRef): KernelInputs;
  checkKernelOutput(id: CaseRef, kernel: string, out: Float32Array, probs: Float32Array | null): CheckRecord[];
  /** The output on `rows` query rows only, for sizes whose whole reference would take long. */
  checkKernelSample(id: CaseRef, kernel: string, out: Float32Array, rows: number): CheckRecord[];
  checkTileRecord(id: CaseRef, place: TileRecordPlace, states: Uint32Array, trace: Float32Array): CheckRecord[];
  tileCounts(id: CaseRef, tileQ: number, tileK: number): TileCounts;
  rowSteps(id: CaseRef, place: RowStepsPlace): RowSteps;
  /** Each query row's visible keys under `spec`, [T, 4], as the kernels take them. */
  maskRanges(spec: MaskSpec): Int32Array;
}

export type RawKernelChecks = {
  DeviceSuite: new (options: DeviceSuiteOptions) => RawDeviceSuite;
  kernelCases(): string;
  kernelInputs(id: CaseRef): KernelInputs | { error: string };
  checkKernelOutput(id: CaseRef, kernel: string, out: Float32Array, probs: Float32Array | null): string;
  checkKernelSample(id: CaseRef, kernel: string, out: Float32Array, rows: number): string;
  checkTileRecord(id: CaseRef, place: TileRecordPlace, states: Uint32Array, trace: Float32Array): string;
  tileCounts(id: CaseRef, tileQ: number, tileK: number): string;
  rowSteps(id: CaseRef, place: RowStepsPlace): string;
  maskRanges(spec: MaskSpec): Int32Array | { error: string };
};

const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new CoreError(message));

/** Loads the module the first time; later calls share it. */
export const loadKernelChecks = moduleLoader(createKernelChecks, wasmUrl, (module): KernelChecks => {
  const raw = module as RawKernelChecks;
  return {
    deviceSuite: (options) => {
      const suite = new raw.DeviceSuite(options);
      return {
        run: () => unwrap(suite.run()),
        request: (i) => {
          const request = suite.request(i);
          if ('error' in request) throw new CoreError(request.error);
          return request;
        },
        answer: (key, out, probs) => void unwrap(suite.answer(key, out, probs)),
        delete: () => suite.delete(),
      };
    },
    kernelCases: () => unwrap(raw.kernelCases()),
    kernelInputs: (id) => {
      const inputs = raw.kernelInputs(id);
      if ('error' in inputs) throw new CoreError(inputs.error);
      return inputs;
    },
    checkKernelOutput: (id, kernel, out, probs) => unwrap(raw.checkKernelOutput(id, kernel, out, probs)),
    checkKernelSample: (id, kernel, out, rows) => unwrap(raw.checkKernelSample(id, kernel, out, rows)),
    checkTileRecord: (id, place, states, trace) => unwrap(raw.checkTileRecord(id, place, states, trace)),
    rowSteps: (id, place) => unwrap(raw.rowSteps(id, place)),
    tileCounts: (id, tileQ, tileK) => unwrap(raw.tileCounts(id, tileQ, tileK)),
    maskRanges: (spec) => {
      const ranges = raw.maskRanges(spec);
      if ('error' in ranges) throw new CoreError(ranges.error);
      return ranges;
    },
  };
});
