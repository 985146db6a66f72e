// Reading a trace file (docs/trace-schema.md, version 1) strictly: every field
// the schema lists, with the types and shapes the configuration and tokens
// imply, and only finite numbers. The first problem found is raised as a
// TraceFormatError whose message names the field, so the reader can act on it.
import type { CheckRecord, ModelConfig, Trace } from '../lib/core';

export class TraceFormatError extends Error {}

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
export function parseTrace(text: string): Trace {
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
  if (!Array.isArray(value)) fail(`layers should be a list of ${config.n_layers} layers, but is ${describe(value)}.`);
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

/** Checks `value` against schema version 1 and returns it typed as a Trace. */
export function validateTrace(value: unknown): Trace {
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
  walk(
    field(t, 'logits', ''),
    'logits',
    [{ size: B, what: 'one per row of tokens' }, { size: T, what: 'one per token' }, { size: config.vocab_size, what: 'config.vocab_size' }],
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
  return value as Trace;
}
