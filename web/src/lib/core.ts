// The wasm core, loaded once per page and shared by every widget.
// Every call goes through JSON strings; a core error comes back as {"error": ...}
// and is raised here as a CoreError with the core's own message.
// '@wasm' is the wasm preset's output folder (see vite.config.ts).
import createAnatomyCore from '@wasm/attention_core.js';
import wasmUrl from '@wasm/attention_core.wasm?url';

export class CoreError extends Error {}

/** The raw embind module: functions taking and returning JSON strings. */
export interface RawCore {
  trace(options: string): string;
  verify(options: string): string;
  forward(options: string): string;
  config(name: string): string;
  cachePayload(config: string): string;
  buildInfo(): string;
  [name: string]: unknown;
}

let loading: Promise<RawCore> | null = null;

/** Loads the wasm module the first time it is asked for; later calls share it. */
export function loadCore(): Promise<RawCore> {
  loading ??= createAnatomyCore({ locateFile: () => wasmUrl }) as Promise<RawCore>;
  return loading;
}

/** Calls a JSON-in, JSON-out core function, raising the core's error message. */
export function call<T>(core: RawCore, name: string, options: unknown): T {
  const fn = core[name] as ((input: string) => string) | undefined;
  if (typeof fn !== 'function') throw new CoreError(`the wasm core has no function ${name}`);
  const result = JSON.parse(fn.call(core, typeof options === 'string' ? options : JSON.stringify(options)));
  if (result && typeof result === 'object' && 'error' in result) throw new CoreError(String(result.error));
  return result as T;
}

// ---- Shapes of what the core returns (see docs/trace-schema.md) ----

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
}
