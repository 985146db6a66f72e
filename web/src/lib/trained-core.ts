// The trained-model module (wasm/bindings_trained.cpp: a llama2.c checkpoint run
// in place by the core), typed. A module of its own, imported only by the trained
// widget's code, which the page loads when the reader opens that widget: neither
// its JavaScript nor its wasm is part of what the chapter loads first.
import createAnatomyTrained from '@wasm/attention_trained.js';
import wasmUrl from '@wasm/attention_trained.wasm?url';
import { CoreError } from './core';
import type { ModelConfig, Trace } from './core-types';
import { unwrapResult } from './wasm-result';
import { moduleLoader } from './wasm-compile';

export interface TrainedInfo {
  config: ModelConfig;
  version: number;        // llama2.c file version, 0 or 1
  seq_len: number;        // the context it was trained with
  parameters: number;
  file_bytes: number;
  bos_id: number;
  tokenizer_pieces: number;
}

export interface TokenChoice { id: number; text: string; probability: number }

export interface Extension {
  position: number;                        // tokens in the cache after the call
  history: number;                         // tokens kept before it
  new_tokens: { id: number; text: string }[];
  rows_shape: [number, number, number, number]; // [L, Hq, T_new, S]
  next: TokenChoice;                       // the most likely next token after the last one
  top: TokenChoice[];                      // the five most likely
  ms: number;                              // the core's time for the pass
}

export interface PatternScores {
  name: 'previous_token' | 'first_token' | 'self' | 'induction';
  heads: number[][];                       // [L][Hq]
  uniform_baseline: number;
  strongest: { layer: number; head: number; score: number };
  showing: [number, number][];             // [layer, head] at or above the threshold
}

export interface HeadPatterns {
  threshold: number;
  text_ids: number[];
  induction_ids: number[];
  induction_length: number;
  induction_strings: number;               // the induction score is the mean over this many strings
  patterns: PatternScores[];
}

export interface CheckList {
  checks: { id: string; name: string; passed: boolean; max_abs_error: number | null; tolerance: number }[];
  all_passed: boolean;
}

/** One loaded model with its KV cache; free it with delete(). */
export interface TrainedSession {
  info: TrainedInfo;
  encode(text: string): { ids: number[]; token_text: string[] };
  decode(ids: number[]): string;
  /** Keeps the cache's first `keep` tokens, runs `ids` through it; rows() then holds their probabilities. */
  extend(keep: number, ids: number[]): Extension;
  /**
   * The last extend's probabilities: per layer and query head, the new rows, row i holding
   * keys 0 .. history + i. A view into the wasm heap, valid until the next call: copy what you keep.
   */
  rows(): Float32Array;
  headPatterns(ids: number[]): HeadPatterns;
  probe(options: { ids: number[]; generate?: number; head_patterns?: boolean }): Trace;
  checks(ids: number[]): CheckList;
  delete(): void;
}

/** The module's TrainedSession as wasm/bindings_trained.cpp binds it (tests/wasm/interface.test.mjs holds it to its declared options). */
export interface RawSession {
  load(model: Uint8Array, tokenizer: Uint8Array): string | { error: string };
  encode(options: { text: string }): string;
  decode(options: { ids: number[] }): string;
  extend(options: { keep: number; ids: number[] }): string;
  rows(): Float32Array;
  headPatterns(options: { ids: number[] }): string;
  probe(options: Parameters<TrainedSession['probe']>[0]): string;
  checks(options: { ids: number[] }): string;
  delete(): void;
}

type RawModule = { TrainedSession: new () => RawSession };

const unwrap = <T>(out: unknown): T => unwrapResult<T>(out, (message) => new CoreError(message));

/**
 * Loads the module once; later calls share it. Its wasm is compiled by compileWasm, which
 * the widget's door may have started already, while this code was still downloading.
 */
export const loadModule = moduleLoader(createAnatomyTrained, wasmUrl, (raw) => raw as RawModule);

/** The module's .wasm: stream-core.ts compiles it for the StreamingLLM widget's workers when they read a llama2.c file. */
export const trainedWasmUrl = wasmUrl;

/** A session over a llama2.c checkpoint and its tokenizer.bin; throws CoreError naming what is wrong with either. */
export async function openTrained(model: Uint8Array, tokenizer: Uint8Array): Promise<TrainedSession> {
  const module = await loadModule();
  performance.mark('anatomy:trained-model-module');
  const raw = new module.TrainedSession();
  let info: TrainedInfo;
  try {
    info = unwrap<TrainedInfo>(raw.load(model, tokenizer));
  } catch (error) {
    raw.delete();
    throw error;
  }
  return {
    info,
    encode: (text) => unwrap(raw.encode({ text })),
    decode: (ids) => unwrap<{ text: string }>(raw.decode({ ids })).text,
    extend: (keep, ids) => unwrap(raw.extend({ keep, ids })),
    rows: () => raw.rows(),
    headPatterns: (ids) => unwrap(raw.headPatterns({ ids })),
    probe: (options) => unwrap(raw.probe(options)),
    checks: (ids) => unwrap(raw.checks({ ids })),
    delete: () => raw.delete(),
  };
}
