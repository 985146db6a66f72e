// Reading a trace file (docs/trace-schema.md, version 1) strictly: every field
// the schema lists, with the types and shapes the configuration and tokens
// imply, and only finite numbers. A trace from `attn probe` adds logits_positions,
// sink_stats and a probe record; when present they are checked the same way, down
// to the parts the viewer shows. The first problem found is raised as a
// TraceFormatError whose message names the field, so the reader can act on it.
import type { CheckRecord, ModelConfig, Trace } from '../../lib/core';
import { count } from '../../lib/words';

export class TraceFormatError extends Error {}

/** The parts of `attn probe`'s own record that the viewer shows (docs/trace-schema.md, "Probe traces"). */
export interface ProbeRecord {
  dtype: string;
  model: { path: string; name: string };
  prompt: { source: 'text'; text: string; chat: boolean } | { source: 'ids'; ids: number[] };
  top_next: { id: number; token_text: string; probability: number; logit: number }[];
  continuation: { requested: number; ids: number[]; token_text: string[]; text: string; stopped_at_eos: boolean };
  cached_vs_full: { positions: number; max_abs_diff: number; tolerance: number; argmax_agrees: boolean[]; all_argmax_agree: boolean };
  sinks: { queries_from: number; queries_to: number; uniform_baseline: number; layer_mean: number[] };
  device: ProbeDevice;
  precision: { weights_stored: string; weights_held: string; kv_cache: string; activations: string };
  cache: { dtype: string; tokens: number; bytes_per_token: number; total_bytes: number };
  timing: ProbeTiming;
}

/** Where the probe ran: the CPU (`kind` "cpu") or a CUDA device (`kind` "cuda"). */
export type ProbeDevice =
  | { kind: 'cpu'; name: string; threads_used: number; hardware_threads: number }
  | { kind: 'cuda'; name: string; compute_capability: string; total_memory_bytes: number; driver_version: string; runtime_version: string };

/** Token rates are null when nothing was timed (no decode step, or a pass too quick for the clock). */
export interface ProbeTiming {
  prefill_tokens_per_second: number | null;
  cached_prefill_tokens_per_second: number | null;
  decode_steps: number;
  decode_tokens_per_second: number | null;
  load_seconds: number;
  peak_rss_bytes: number;
}

/** A validated trace, with the optional fields a probe adds. */
export interface OpenedTrace extends Trace {
  logits_positions?: number[];   // [R]: row i of logits[b] is position logits_positions[i]
  sink_stats?: number[][];       // [L][Hq]: mean probability the second half of the queries give position 0
  probe?: ProbeRecord;
}

// A tiny-model trace is at most about 4 MB (32 ids, batch 16). A pretrained
// probe's grows with layers x heads x T^2; past this size parsing would stall the
// page for seconds and hold hundreds of MB, so we refuse before reading.
export const maxTraceBytes = 32 * 1024 * 1024;
const knownVersion = 1;

/** Refuses a file too large to open, before reading a byte of it. */
export function checkTraceSize(bytes: number): void {
  if (bytes > maxTraceBytes)
    throw new TraceFormatError(
      `the file is ${(bytes / 1024 / 1024).toFixed(1)} MB; the viewer opens traces up to ${maxTraceBytes / 1024 / 1024} MB ` +
        '(a tiny-model trace is a few MB; for a large model, record fewer tokens or layers).',
    );
}

/** Parses and validates a trace's text. */
export function parseTrace(text: string): OpenedTrace {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TraceFormatError(`it is not JSON (${error instanceof Error ? error.message : String(error)}).`);
  }
  return validateTrace(value);
}

// ---------------------------------------------------------------- small checks

type Json = Record<string, unknown>;

function fail(message: string): never {
  throw new TraceFormatError(message);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${path} should be an object, but is ${describe(value)}.`);
  return value as Json;
}

function field(parent: Json, name: string, path: string): unknown {
  if (!(name in parent)) fail(`the field ${path}${name} is missing.`);
  return parent[name];
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(`${path} should be a string, but is ${describe(value)}.`);
  return value;
}

function finite(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    fail(`${path} should be a finite number, but is ${describe(value)}` + (value === null ? ' (the exporter writes NaN and infinity as null).' : '.'));
  return value;
}

function integer(value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    fail(`${path} should be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, but is ${describe(value)}.`);
  return value;
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') fail(`${path} should be true or false, but is ${describe(value)}.`);
  return value;
}

function entries(count: number): string {
  return `${count} ${count === 1 ? 'entry' : 'entries'}`;
}

/** One axis of a nested array: how long it must be, and what that length stands for. */
interface Axis {
  size: number;
  what: string;
}

/**
 * Walks a nested array of the given shape, calling `leaf` on every innermost
 * entry with its index. The path string is only built when something is wrong.
 */
function walk(value: unknown, path: string, shape: Axis[], leaf: (x: unknown, at: number[], where: () => string) => void): void {
  const at: number[] = [];
  const where = () => path + at.map((i) => `[${i}]`).join('');
  const visit = (node: unknown, depth: number): void => {
    if (depth === shape.length) {
      leaf(node, at, where);
      return;
    }
    if (!Array.isArray(node)) fail(`${where()} should be a list of ${shape[depth].size} (${shape[depth].what}), but is ${describe(node)}.`);
    if (node.length !== shape[depth].size)
      fail(`${where()} has ${entries(node.length)}, but should have ${shape[depth].size} (${shape[depth].what}).`);
    for (let i = 0; i < node.length; i++) {
      at.push(i);
      visit(node[i], depth + 1);
      at.pop();
    }
  };
  visit(value, 0);
}

// ---------------------------------------------------------------- the trace

function checkConfig(value: unknown): ModelConfig {
  const c = object(value, 'config');
  const count = (name: string) => integer(field(c, name, 'config.'), `config.${name}`, 1);
  const config: ModelConfig = {
    name: string(field(c, 'name', 'config.'), 'config.name'),
    vocab_size: count('vocab_size'),
    hidden_size: count('hidden_size'),
    n_layers: count('n_layers'),
    n_heads: count('n_heads'),
    n_kv_heads: count('n_kv_heads'),
    head_dim: count('head_dim'),
    ffn_size: count('ffn_size'),
    rope_theta: finite(field(c, 'rope_theta', 'config.'), 'config.rope_theta'),
    rms_norm_eps: finite(field(c, 'rms_norm_eps', 'config.'), 'config.rms_norm_eps'),
    rope_pairing: string(field(c, 'rope_pairing', 'config.'), 'config.rope_pairing') as ModelConfig['rope_pairing'],
    tie_embeddings: boolean(field(c, 'tie_embeddings', 'config.'), 'config.tie_embeddings'),
  };
  if (config.rope_pairing !== 'half_split' && config.rope_pairing !== 'interleaved')
    fail(`config.rope_pairing should be "half_split" or "interleaved", but is ${describe(config.rope_pairing)}.`);
  if (config.n_heads % config.n_kv_heads !== 0)
    fail(`config.n_heads (${config.n_heads}) is not a multiple of config.n_kv_heads (${config.n_kv_heads}), so query heads cannot be grouped.`);
  return config;
}

/** tokens [B][T]: ids in the vocabulary, every row as long as the first. */
function checkTokens(value: unknown, vocabSize: number): { B: number; T: number } {
  if (!Array.isArray(value) || value.length === 0 || !Array.isArray(value[0]) || value[0].length === 0)
    fail(`tokens should be a non-empty list of non-empty rows of token ids, but is ${describe(value)}.`);
  const B = value.length, T = value[0].length;
  walk(value, 'tokens', [{ size: B, what: 'sequences' }, { size: T, what: 'ids, as in tokens[0]' }], (x, _, where) =>
    integer(x, where(), 0, vocabSize - 1),
  );
  return { B, T };
}

/** layers[l].probabilities [B][Hq][T][T]: values in [0, 1], exactly 0 where the key is after the query. */
function checkLayers(value: unknown, config: ModelConfig, B: number, T: number): void {
  if (!Array.isArray(value)) fail(`layers should be a list of ${count(config.n_layers, 'layer')}, but is ${describe(value)}.`);
  if (value.length !== config.n_layers) fail(`layers has ${entries(value.length)}, but config.n_layers is ${config.n_layers}.`);
  const shape = [
    { size: B, what: 'one per row of tokens' },
    { size: config.n_heads, what: 'config.n_heads query heads' },
    { size: T, what: 'one query per token' },
    { size: T, what: 'one key per token' },
  ];
  value.forEach((layer, l) => {
    const path = `layers[${l}].probabilities`;
    walk(field(object(layer, `layers[${l}]`), 'probabilities', `layers[${l}].`), path, shape, (x, at, where) => {
      const p = finite(x, where());
      if (p < 0 || p > 1) fail(`${where()} is ${p}, but a probability lies between 0 and 1.`);
      if (at[3] > at[2] && p !== 0) fail(`${where()} is ${p}, but key ${at[3]} comes after query ${at[2]}, so the mask makes it exactly 0.`);
    });
  });
}

function checkRecords(value: unknown): CheckRecord[] {
  if (!Array.isArray(value)) fail(`checks should be a list of check records, but is ${describe(value)}.`);
  return value.map((item, i) => {
    const path = `checks[${i}]`;
    const r = object(item, path);
    const error = field(r, 'max_abs_error', `${path}.`);
    const record: CheckRecord = {
      id: string(field(r, 'id', `${path}.`), `${path}.id`),
      name: string(field(r, 'name', `${path}.`), `${path}.name`),
      compares: string(field(r, 'compares', `${path}.`), `${path}.compares`),
      max_abs_error: error === null ? null : finite(error, `${path}.max_abs_error`),
      tolerance: finite(field(r, 'tolerance', `${path}.`), `${path}.tolerance`),
      relation: string(field(r, 'relation', `${path}.`), `${path}.relation`) as CheckRecord['relation'],
      passed: boolean(field(r, 'passed', `${path}.`), `${path}.passed`),
    };
    if (record.relation !== '<=' && record.relation !== '>') fail(`${path}.relation should be "<=" or ">", but is ${describe(record.relation)}.`);
    return record;
  });
}

function checkBuild(value: unknown): Trace['build'] {
  const b = object(value, 'build');
  return {
    project_version: string(field(b, 'project_version', 'build.'), 'build.project_version'),
    compiler: string(field(b, 'compiler', 'build.'), 'build.compiler'),
    platform: string(field(b, 'platform', 'build.'), 'build.platform'),
  };
}

/** Checks `value` against schema version 1 and returns it typed, with the probe's fields when it has them. */
export function validateTrace(value: unknown): OpenedTrace {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`it holds ${describe(value)}, not a trace object.`);
  const t = value as Json;
  if (t.kind !== 'attention-anatomy-trace')
    fail(`its kind is ${'kind' in t ? describe(t.kind) : 'missing'}, not "attention-anatomy-trace": this is not a trace from attn verify or the probe.`);
  const version = field(t, 'schema_version', '');
  if (version !== knownVersion)
    fail(
      typeof version === 'number' && version > knownVersion
        ? `it uses schema_version ${version}; this page reads version ${knownVersion}. Open it with a page as new as the tool that wrote it.`
        : `schema_version should be ${knownVersion}, but is ${describe(version)}.`,
    );

  const config = checkConfig(field(t, 'config', ''));
  object(field(t, 'weights', ''), 'weights');
  const { B, T } = checkTokens(field(t, 'tokens', ''), config.vocab_size);
  // The trace starts from an empty cache, so position t is t: the causal mask below relies on it.
  walk(field(t, 'positions', ''), 'positions', [{ size: T, what: 'one per token' }], (x, at, where) => {
    if (x !== at[0]) fail(`${where()} should be ${at[0]} (a trace starts at position 0), but is ${describe(x)}.`);
  });
  checkLayers(field(t, 'layers', ''), config, B, T);
  const logitRows = 'logits_positions' in t ? checkLogitsPositions(t.logits_positions, T).length : T;
  walk(
    field(t, 'logits', ''),
    'logits',
    [
      { size: B, what: 'one per row of tokens' },
      { size: logitRows, what: logitRows === T ? 'one per token' : 'one per entry of logits_positions' },
      { size: config.vocab_size, what: 'config.vocab_size' },
    ],
    (x, _, where) => finite(x, where()),
  );
  const checks = checkRecords(field(t, 'checks', ''));
  const allPassed = boolean(field(t, 'all_checks_passed', ''), 'all_checks_passed');
  if (allPassed !== checks.every((c) => c.passed))
    fail(`all_checks_passed is ${allPassed}, but ${allPassed ? 'some check records failed' : 'every check record passed'}.`);
  const payload = object(field(t, 'cache_payload', ''), 'cache_payload');
  for (const [name, x] of Object.entries(payload)) finite(x, `cache_payload.${name}`);
  checkBuild(field(t, 'build', ''));
  if ('token_text' in t)
    walk(t.token_text, 'token_text', [{ size: B, what: 'one per row of tokens' }, { size: T, what: 'one per token' }], (x, _, where) => string(x, where()));
  if ('sink_stats' in t) checkSinkStats(t.sink_stats, config);
  if ('probe' in t) {
    if (!('sink_stats' in t)) fail('the field sink_stats is missing: a probe trace records it next to probe.sinks.');
    checkProbe(t.probe, config, T, t.sink_stats as number[][]);
  }
  return value as OpenedTrace;
}

// ---------------------------------------------------------------- what the probe adds

/** logits_positions [R]: distinct positions of the tokens, in increasing order. */
function checkLogitsPositions(value: unknown, T: number): number[] {
  if (!Array.isArray(value) || value.length === 0)
    fail(`logits_positions should be a non-empty list of positions (0 to ${T - 1}), but is ${describe(value)}.`);
  value.forEach((x, i) => {
    integer(x, `logits_positions[${i}]`, 0, T - 1);
    if (i > 0 && x <= value[i - 1])
      fail(`logits_positions[${i}] is ${x}, but must be greater than logits_positions[${i - 1}] (${value[i - 1]}): each position is listed once, in increasing order.`);
  });
  return value as number[];
}

function probability(value: unknown, path: string): number {
  const p = finite(value, path);
  if (p < 0 || p > 1) fail(`${path} is ${p}, but a probability lies between 0 and 1.`);
  return p;
}

/** sink_stats [L][Hq]: one probability per layer and query head. */
function checkSinkStats(value: unknown, config: ModelConfig): void {
  walk(
    value,
    'sink_stats',
    [{ size: config.n_layers, what: 'config.n_layers layers' }, { size: config.n_heads, what: 'config.n_heads query heads' }],
    (x, _, where) => probability(x, where()),
  );
}

// Means the page recomputes from the trace's own numbers must agree with the file's
// up to double rounding: the probe sums in the same order, in double.
const recomputedTolerance = 1e-9;

function checkProbe(value: unknown, config: ModelConfig, T: number, sinkStats: number[][]): void {
  const probe = object(value, 'probe');
  const part = (name: string) => object(field(probe, name, 'probe.'), `probe.${name}`);
  string(field(probe, 'dtype', 'probe.'), 'probe.dtype');
  const model = part('model');
  for (const name of ['path', 'name']) string(field(model, name, 'probe.model.'), `probe.model.${name}`);
  checkPrompt(part('prompt'), config.vocab_size);
  checkTopNext(field(probe, 'top_next', 'probe.'), config.vocab_size);
  checkContinuation(part('continuation'), config.vocab_size);
  checkCachedVsFull(part('cached_vs_full'), T);
  checkSinks(part('sinks'), T, sinkStats);
  checkDevice(part('device'));
  const precision = part('precision');
  for (const name of ['weights_stored', 'weights_held', 'kv_cache', 'activations'])
    string(field(precision, name, 'probe.precision.'), `probe.precision.${name}`);
  checkCache(part('cache'), config);
  checkTiming(part('timing'));
}

function checkDevice(device: Json): void {
  const kind = string(field(device, 'kind', 'probe.device.'), 'probe.device.kind');
  string(field(device, 'name', 'probe.device.'), 'probe.device.name');
  const names =
    kind === 'cpu'
      ? { strings: [], integers: ['threads_used', 'hardware_threads'] }
      : kind === 'cuda'
        ? { strings: ['compute_capability', 'driver_version', 'runtime_version'], integers: ['total_memory_bytes'] }
        : fail(`probe.device.kind should be "cpu" or "cuda", but is ${describe(kind)}.`);
  for (const name of names.strings) string(field(device, name, 'probe.device.'), `probe.device.${name}`);
  for (const name of names.integers) integer(field(device, name, 'probe.device.'), `probe.device.${name}`, 0);
}

/** probe.cache: what the KV cache held after the probe; total = bytes per token x tokens, bytes per token from the config. */
function checkCache(cache: Json, config: ModelConfig): void {
  string(field(cache, 'dtype', 'probe.cache.'), 'probe.cache.dtype');
  const tokens = integer(field(cache, 'tokens', 'probe.cache.'), 'probe.cache.tokens', 0);
  const perToken = integer(field(cache, 'bytes_per_token', 'probe.cache.'), 'probe.cache.bytes_per_token', 0);
  const total = integer(field(cache, 'total_bytes', 'probe.cache.'), 'probe.cache.total_bytes', 0);
  const scalars = 2 * config.n_layers * config.n_kv_heads * config.head_dim;
  if (perToken % scalars !== 0)
    fail(`probe.cache.bytes_per_token is ${perToken}, but should be a whole number of bytes for each of the 2 x L x Hkv x dh = ${scalars} scalars a token stores.`);
  if (total !== perToken * tokens)
    fail(`probe.cache.total_bytes is ${total}, but ${tokens} ${tokens === 1 ? 'token' : 'tokens'} of ${perToken} bytes make ${perToken * tokens}.`);
}

function checkTiming(timing: Json): void {
  for (const name of ['prefill_tokens_per_second', 'cached_prefill_tokens_per_second', 'decode_tokens_per_second']) {
    const value = field(timing, name, 'probe.timing.');
    if (value !== null) finite(value, `probe.timing.${name}`);
  }
  integer(field(timing, 'decode_steps', 'probe.timing.'), 'probe.timing.decode_steps', 0);
  finite(field(timing, 'load_seconds', 'probe.timing.'), 'probe.timing.load_seconds');
  integer(field(timing, 'peak_rss_bytes', 'probe.timing.'), 'probe.timing.peak_rss_bytes', 0);
}

function checkPrompt(prompt: Json, vocabSize: number): void {
  const source = field(prompt, 'source', 'probe.prompt.');
  if (source === 'text') {
    string(field(prompt, 'text', 'probe.prompt.'), 'probe.prompt.text');
    boolean(field(prompt, 'chat', 'probe.prompt.'), 'probe.prompt.chat');
  } else if (source === 'ids') {
    const ids = field(prompt, 'ids', 'probe.prompt.');
    if (!Array.isArray(ids)) fail(`probe.prompt.ids should be a list of token ids, but is ${describe(ids)}.`);
    ids.forEach((id, i) => integer(id, `probe.prompt.ids[${i}]`, 0, vocabSize - 1));
  } else {
    fail(`probe.prompt.source should be "text" or "ids", but is ${describe(source)}.`);
  }
}

function checkTopNext(value: unknown, vocabSize: number): void {
  if (!Array.isArray(value) || value.length === 0) fail(`probe.top_next should be a non-empty list of tokens, but is ${describe(value)}.`);
  value.forEach((item, i) => {
    const path = `probe.top_next[${i}]`;
    const token = object(item, path);
    integer(field(token, 'id', `${path}.`), `${path}.id`, 0, vocabSize - 1);
    string(field(token, 'token_text', `${path}.`), `${path}.token_text`);
    probability(field(token, 'probability', `${path}.`), `${path}.probability`);
    finite(field(token, 'logit', `${path}.`), `${path}.logit`);
  });
}

function checkContinuation(continuation: Json, vocabSize: number): void {
  const path = 'probe.continuation';
  integer(field(continuation, 'requested', `${path}.`), `${path}.requested`, 0);
  const ids = field(continuation, 'ids', `${path}.`);
  if (!Array.isArray(ids)) fail(`${path}.ids should be a list of token ids, but is ${describe(ids)}.`);
  ids.forEach((id, i) => integer(id, `${path}.ids[${i}]`, 0, vocabSize - 1));
  walk(field(continuation, 'token_text', `${path}.`), `${path}.token_text`, [{ size: ids.length, what: `one per id of ${path}.ids` }], (x, _, where) =>
    string(x, where()),
  );
  string(field(continuation, 'text', `${path}.`), `${path}.text`);
  boolean(field(continuation, 'stopped_at_eos', `${path}.`), `${path}.stopped_at_eos`);
}

function checkCachedVsFull(comparison: Json, T: number): void {
  const path = 'probe.cached_vs_full';
  const positions = field(comparison, 'positions', `${path}.`);
  if (positions !== T) fail(`${path}.positions should be ${T} (the prompt's tokens), but is ${describe(positions)}.`);
  const diff = finite(field(comparison, 'max_abs_diff', `${path}.`), `${path}.max_abs_diff`);
  if (diff < 0) fail(`${path}.max_abs_diff is ${diff}, but a largest absolute difference cannot be negative.`);
  finite(field(comparison, 'tolerance', `${path}.`), `${path}.tolerance`);
  const agrees: boolean[] = [];
  walk(field(comparison, 'argmax_agrees', `${path}.`), `${path}.argmax_agrees`, [{ size: T, what: 'one per token' }], (x, _, where) =>
    agrees.push(boolean(x, where())),
  );
  const all = boolean(field(comparison, 'all_argmax_agree', `${path}.`), `${path}.all_argmax_agree`);
  if (all !== agrees.every(Boolean))
    fail(`${path}.all_argmax_agree is ${all}, but ${path}.argmax_agrees ${all ? 'has a position that differs' : 'agrees at every position'}.`);
}

/** probe.sinks: which queries sink_stats averages, the even-spread baseline and the layer means, each checked against sink_stats. */
function checkSinks(sinks: Json, T: number, sinkStats: number[][]): void {
  const path = 'probe.sinks';
  const from = integer(field(sinks, 'queries_from', `${path}.`), `${path}.queries_from`, 0, T - 1);
  const to = integer(field(sinks, 'queries_to', `${path}.`), `${path}.queries_to`, from, T - 1);
  const baseline = probability(field(sinks, 'uniform_baseline', `${path}.`), `${path}.uniform_baseline`);
  const expected = evenSpreadShare(from, to);
  if (Math.abs(baseline - expected) > recomputedTolerance)
    fail(`${path}.uniform_baseline is ${baseline}, but queries ${from} to ${to} spreading their attention evenly give position 0 ${expected} on average.`);
  walk(field(sinks, 'layer_mean', `${path}.`), `${path}.layer_mean`, [{ size: sinkStats.length, what: 'config.n_layers layers' }], (x, at, where) => {
    const mean = probability(x, where());
    const heads = sinkStats[at[0]];
    const recomputed = heads.reduce((sum, p) => sum + p, 0) / heads.length;
    if (Math.abs(mean - recomputed) > recomputedTolerance)
      fail(`${where()} is ${mean}, but the mean of sink_stats[${at[0]}] is ${recomputed}.`);
  });
}

/** What position 0 gets on average over queries from..to when query t spreads its attention evenly over its t + 1 keys. */
export function evenSpreadShare(from: number, to: number): number {
  let sum = 0;
  for (let t = from; t <= to; t++) sum += 1 / (t + 1);
  return sum / (to - from + 1);
}
