// What the wasm core's exports take and return (wasm/bindings*.cpp; the trace's
// fields in docs/trace-schema.md). Types only: lib/core.ts binds the functions.

export interface ModelConfig {
  name: string;
  vocab_size: number;
  hidden_size: number;
  n_layers: number;
  n_heads: number;
  n_kv_heads: number;
  head_dim: number;
  ffn_size: number;
  rope_theta: number;
  rms_norm_eps: number;
  rope_pairing: 'half_split' | 'interleaved';
  tie_embeddings: boolean;
}

export interface CheckRecord {
  id: string;
  name: string;
  compares: string;
  max_abs_error: number | null;
  tolerance: number;
  relation: '<=' | '>';
  passed: boolean;
}

export interface Trace {
  schema_version: number;
  kind: string;
  config: ModelConfig;
  weights: Record<string, unknown>;
  tokens: number[][];
  positions: number[];
  layers: { probabilities: number[][][][] }[];
  logits: number[][][];
  checks: CheckRecord[];
  all_checks_passed: boolean;
  cache_payload: Record<string, number>;
  build: { project_version: string; compiler: string; platform: string };
  // Written by the pretrained probe; absent from the tiny model's traces.
  token_text?: string[][];
  [extra: string]: unknown;
}

/** Per-layer intermediates of one forward pass ([B, H, T, ...] nested arrays). */
export interface LayerCapture {
  input: number[][][];
  normed_input: number[][][];
  q: number[][][][];
  k: number[][][][];
  v: number[][][][];
  q_rope: number[][][][];
  k_rope: number[][][][];
  scores: number[][][][];
  probabilities: number[][][][];
  head_outputs: number[][][][];
  attention_update: number[][][];
  after_attention: number[][][];
  ffn_output: number[][][];
  output: number[][][];
}

export interface ForwardResult {
  tokens: number[][];               // [B, T] the rows that ran
  logits: number[][][];
  positions?: number[];
  layers?: LayerCapture[];
  final_normed?: number[][][];      // [B, T, D] the final RMSNorm (with capture: true only)
}

// ---- arguments of forward, trace and verify (wasm/bindings.cpp)

export type CaptureField = keyof LayerCapture;

export interface ForwardOptions {
  /** B equal rows of ids, or `ids` with `batch`, built as `attn verify --batch B` builds them. */
  tokens?: number[][];
  ids?: number[];
  batch?: number;
  seed?: number;
  capture?: boolean | CaptureField[];
  rope_pairing?: ModelConfig['rope_pairing'];
}

export interface TraceOptions {
  tokens?: number[];
  batch?: number;
  seed?: number;
}

export interface VerifyResult {
  checks: CheckRecord[];
  all_passed: boolean;
}

export interface BuildInfo {
  project_version: string;
  compiler: string;
  platform: string;
}

/** cachePayload(config): the KV cache's size per token. */
export interface CachePayload {
  scalars_per_token: number;
  bytes_per_token_fp32: number;
  bytes_per_token_16bit: number;
  bytes_per_token_fp8: number;
}

// ---- the chapters' smaller functions (wasm/bindings_lessons.cpp, the notebook's; RoPE's in bindings_rope.cpp, chapter 1's)

/** A mask as core/masks.hpp's MaskSpec reads it. */
export interface MaskSpec {
  kind: string;
  T: number;
  S: number;
  window?: number;
  sinks?: number;
  prefix?: number;
  chunk?: number;
  document_lengths?: number[];
}

/** maskTiles(spec, Br, Bc): the tile map, rows = ceil(T / Br), cols = ceil(S / Bc). */
export interface TileResult {
  rows: number;
  cols: number;
  skipped: number;
  partial: number;
  full: number;
  visible_cells: number;
  skipped_fraction: number;
  states: Uint8Array;  // [rows * cols]: 0 skipped, 1 partial, 2 full
}

export interface LookupOptions {
  query: number[];     // [Dk]
  keys: number[][];    // [N][Dk]
  values: number[][];  // [N][Dv]
  scale: number;
}

export interface Lookup {
  scores: number[];  // [N] scale * q.k_n
  weights: number[]; // [N] softmax(scores)
  mixed: number[];   // [Dv]
}

export type RopePairing = ModelConfig['rope_pairing'];

export interface CostOptions {
  d: number;
  T: number;
  n_heads: number;
  n_kv_heads: number;
  bytes_per_scalar: number;
}

export interface Flops { projections: number; scores: number; weighted: number }

export interface Cost {
  prefill: Flops;
  decode: Flops;
  decode_cache_bytes: number;
  crossover_T: number;
}

// ---- the KV-cache session (wasm/bindings_session.cpp)

/** One step's report from DecodeSession.prefill / .step. */
export interface StepReport {
  position: number;             // the cache's counter after the step (= S)
  history: number;              // keys cached before the step
  new_tokens: number[];         // [T_new]
  tokens: number[];             // all so far, [S]
  cache_shape: [number, number, number, number];  // [B, Hkv, S, dh]
  cache_scalars: number;
  cache_bytes_fp32: number;
  payload_scalars_per_token: number;
  keys: number[][][];           // layer-0 keys [Hkv][S][dh], after RoPE
  mask: number[][];             // [T_new][S], 1 = visible
  probabilities: number[][][][];  // [L][Hq][T_new][S]
  cached_logits: number[][];    // [T_new][V]
  full_logits: number[][];      // [T_new][V]
  max_abs_diff: number | null;  // null: a value that is not finite on either side (an infinite error)
  argmax_agrees: boolean;
}

// ---- the exercise judge (wasm/bindings_judge.cpp)

export interface CatalogueEntry {
  id: string;
  cases: number;
  mistakes: { id: string; title: string }[];
}

/** judgeCases(exercise): the arguments of every case (NaN and infinities as strings). */
export interface JudgeCases {
  exercise: string;
  cases: { name: string; args: unknown[] }[];
}

// judgeOutputs(exercise, outputs): the judge's report (core/judge/judge.hpp, judge_outputs),
// which exercises/report.ts draws.
export type Problem = '' | 'shape' | 'type' | 'missing' | 'nonfinite' | 'mismatch' | 'error';
export type JudgeNumber = number | string; // "NaN", "Infinity", "-Infinity" travel as strings

export interface ArrayDetails {
  max_abs_error?: number;
  max_rel_error?: number;
  expected_shape?: number[];
  got_shape?: number[];
  message?: string;
  field?: string;
  first_mismatch?: { index: string; expected: JudgeNumber; got: JudgeNumber };
  nonfinite?: { index: string; value: JudgeNumber }[];
  nonfinite_count?: number;
  /** For results that are objects of arrays, when they pass: per field. */
  fields?: Record<string, ArrayDetails>;
}

export interface CaseReport {
  name: string;
  passed: boolean;
  problem: Problem;
  details?: ArrayDetails;
  error?: string;
  /** Mistakes this case's output reproduces (ids). */
  matches: string[];
}

export interface Diagnosis {
  id: string;
  title: string;
  explanation: string;
  /** How many of the failing tests look like this mistake, of how many (a report kept from an older page may lack them). */
  explained?: number;
  failing?: number;
  /** The judge's sentence about them: "3 of the 4 failing tests look like this mistake; the other ...". */
  summary?: string;
}

export interface JudgeReport {
  exercise: string;
  passed: boolean;
  passed_count: number;
  total: number;
  tolerance: { atol: number; rtol: number };
  diagnosis: Diagnosis | null;
  cases: CaseReport[];
}
