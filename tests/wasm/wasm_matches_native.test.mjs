// The wasm core against the native `attn` built from the same sources: chapter 1's
// module (attention_core: forward, config, cachePayload) and the trace viewer's
// (attention_trace_viewer: trace, verify, exportCheckpoint).
//
//   weights:  exportCheckpoint bytes == `attn export-checkpoint` model.safetensors, byte for byte
//   traces:   trace() == `attn verify --export-trace`, every probability and logit within 1e-6
//   errors:   bad input from JavaScript comes back as {error: "..."} and the module lives on
//
// Run by ctest (which sets ATTN and ANATOMY_WASM_DIR), or by hand:
//   ATTN=build/native/native/attn node --test tests/wasm/wasm_matches_native.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';

import { loadCore, loadTraceViewer, wasmDir } from './load_core.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const attnPath = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');

// Both builds run the same float32 operations in the same order, compiled with
// -ffp-contract=off; only libm may differ (expf in softmax and SiLU, cos/sin/pow
// in RoPE: glibc vs Emscripten's musl). Measured: 0 difference in every value of
// both cases below (g++ 12.2 / glibc vs Emscripten 3.1.6 / clang 14). 1e-6 leaves
// room for a libm that rounds a probability (<= 1) an ulp (6e-8) apart and for a
// few roundings after it. Logits reach ~30,
// where one float ulp is 2e-6: should a libm ever differ there, this absolute
// bound must become relative, |a - b| <= 1e-6 * max(1, |b|).
const tolerance = 1e-6;

let corePromise, traceViewerPromise;
function core() {
  corePromise ??= loadCore();
  return corePromise;
}
function traceViewer() {
  traceViewerPromise ??= loadTraceViewer();
  return traceViewerPromise;
}

function scratchDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-wasm-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Runs the native tool; fails with its output when it does not exit as expected.
function attn(args, okCodes = [0]) {
  if (!fs.existsSync(attnPath)) {
    assert.fail(`native attn not found at ${attnPath}: build the native preset or set ATTN (ctest sets it)`);
  }
  const run = spawnSync(attnPath, args, { encoding: 'utf8' });
  assert.ok(okCodes.includes(run.status),
    `attn ${args.join(' ')} exited with ${run.status}\n${run.stdout}\n${run.stderr}`);
  return run;
}

// Largest |a - b| over two nested arrays of numbers; throws if their shapes differ.
function maxAbsDiff(a, b, where = '') {
  if (Array.isArray(a) || Array.isArray(b)) {
    assert.ok(Array.isArray(a) && Array.isArray(b) && a.length === b.length,
      `shape differs at ${where || 'the top level'}`);
    return a.reduce((worst, x, i) => Math.max(worst, maxAbsDiff(x, b[i], `${where}[${i}]`)), 0);
  }
  assert.equal(typeof a, 'number', `not a number at ${where}`);
  assert.equal(typeof b, 'number', `not a number at ${where}`);
  return Math.abs(a - b);
}

/** A function of the trace viewer's module: options in as JSON text. */
function call(fn, options) {
  return JSON.parse(fn(JSON.stringify(options)));
}

/** A function of chapter 1's module, which carries no JSON parser: options in as the object itself. */
function callObject(fn, options) {
  return JSON.parse(fn(options));
}

test('the wasm build loads', async () => {
  const m = await core();
  const build = JSON.parse(m.buildInfo());
  assert.equal(build.platform, 'wasm', `loaded from ${wasmDir}`);
});

test('chapter 1\'s module leaves the trace viewer\'s tools to the trace viewer\'s module', async () => {
  const [m, tv] = await Promise.all([core(), traceViewer()]);
  for (const name of ['trace', 'verify', 'exportCheckpoint']) {
    assert.equal(typeof tv[name], 'function', `attention_trace_viewer lost ${name}`);
    assert.equal(m[name], undefined, `attention_core has ${name}: chapter 1 loads it as a reader scrolls, and only trace-viewer's buttons call it`);
  }
});

test('exported weights are bit-identical to attn export-checkpoint', async (t) => {
  const m = await traceViewer();
  const exported = [];
  for (const seed of [1, 42]) {
    const dir = path.join(scratchDir(t), `seed-${seed}`);
    attn(['export-checkpoint', dir, '--seed', String(seed)]);
    const native = fs.readFileSync(path.join(dir, 'model.safetensors'));
    const wasm = m.exportCheckpoint(JSON.stringify({ seed }));

    assert.ok(wasm instanceof Uint8Array, `seed ${seed}: exportCheckpoint returned ${JSON.stringify(wasm)}`);
    assert.equal(wasm.length, native.length, `seed ${seed}: wasm file is ${wasm.length} bytes, native ${native.length}`);
    const first = native.findIndex((byte, i) => byte !== wasm[i]);
    assert.equal(first, -1, `seed ${seed}: first differing byte at offset ${first}`);
    t.diagnostic(`seed ${seed}: ${native.length} bytes identical`);
    exported.push(Buffer.from(wasm));
  }
  // Guards against comparing something that ignores the seed.
  assert.notDeepEqual(exported[0], exported[1], 'seeds 1 and 42 gave the same weights');
});

const traceCases = [
  { tokens: [1, 2, 3, 4, 5, 6], batch: 2, seed: 1 },  // `attn verify`'s defaults
  { tokens: [0, 5, 31, 7, 7, 12, 3, 30, 1, 16, 9, 22, 4, 28, 11, 2, 19], batch: 3, seed: 7 },
];

for (const options of traceCases) {
  const label = `${options.tokens.length} tokens, batch ${options.batch}, seed ${options.seed}`;

  test(`trace agrees with attn verify --export-trace (${label})`, async (t) => {
    const m = await traceViewer();
    const file = path.join(scratchDir(t), 'trace.json');
    // Exit 1 means a check failed; the trace is still written and compared below.
    attn(['verify', '--tokens', options.tokens.join(','), '--batch', String(options.batch),
      '--seed', String(options.seed), '--export-trace', file], [0, 1]);
    const native = JSON.parse(fs.readFileSync(file, 'utf8'));
    const wasm = call(m.trace, options);
    assert.equal(wasm.error, undefined, `wasm trace failed: ${wasm.error}`);

    assert.equal(wasm.schema_version, native.schema_version);
    assert.equal(wasm.kind, native.kind);
    assert.deepEqual(Object.keys(wasm).sort(), Object.keys(native).sort());
    assert.deepEqual(wasm.config, native.config);
    assert.deepEqual(wasm.weights, native.weights);
    assert.deepEqual(wasm.tokens, native.tokens);
    assert.deepEqual(wasm.positions, native.positions);
    assert.deepEqual(wasm.cache_payload, native.cache_payload);
    assert.equal(native.build.platform, 'native');
    assert.equal(wasm.build.platform, 'wasm');
    assert.equal(wasm.build.project_version, native.build.project_version);

    assert.equal(wasm.layers.length, native.layers.length);
    let probabilities = 0;
    wasm.layers.forEach((layer, l) => {
      probabilities = Math.max(probabilities,
        maxAbsDiff(layer.probabilities, native.layers[l].probabilities, `layers[${l}].probabilities`));
    });
    const logits = maxAbsDiff(wasm.logits, native.logits, 'logits');
    t.diagnostic(`max |native - wasm|: probabilities ${probabilities}, logits ${logits}`);
    assert.ok(probabilities <= tolerance, `probabilities differ by up to ${probabilities} (tolerance ${tolerance})`);
    assert.ok(logits <= tolerance, `logits differ by up to ${logits} (tolerance ${tolerance})`);

    const summary = (trace) => trace.checks.map((c) => ({ id: c.id, name: c.name, passed: c.passed }));
    assert.deepEqual(summary(wasm), summary(native));
    assert.equal(wasm.all_checks_passed, native.all_checks_passed);
  });
}

test('verify, forward, config and cachePayload agree with the trace', async () => {
  const [m, tv] = await Promise.all([core(), traceViewer()]);
  const options = traceCases[1];
  const trace = call(tv.trace, options);

  const verified = call(tv.verify, options);
  assert.deepEqual(verified.checks, trace.checks);
  assert.equal(verified.all_passed, trace.all_checks_passed);

  // Another module, the same operations: the page's forward pass must reproduce the trace exactly.
  const forward = callObject(m.forward, { tokens: trace.tokens, seed: options.seed, capture: true });
  assert.equal(maxAbsDiff(forward.logits, trace.logits, 'logits'), 0);
  assert.deepEqual(forward.positions, trace.positions);
  forward.layers.forEach((layer, l) => {
    assert.equal(maxAbsDiff(layer.probabilities, trace.layers[l].probabilities, `layers[${l}]`), 0);
  });
  const [B, T] = [trace.tokens.length, trace.tokens[0].length];
  const { n_heads: Hq, n_kv_heads: Hkv, head_dim: dh, hidden_size: D } = trace.config;
  const shape = (a) => (Array.isArray(a) ? [a.length, ...shape(a[0])] : []);
  const layer = forward.layers[0];
  assert.deepEqual(shape(layer.q), [B, Hq, T, dh]);
  assert.deepEqual(shape(layer.k_rope), [B, Hkv, T, dh]);
  assert.deepEqual(shape(layer.probabilities), [B, Hq, T, T]);
  assert.deepEqual(shape(layer.head_outputs), [B, Hq, T, dh]);
  assert.deepEqual(shape(layer.output), [B, T, D]);
  assert.equal(callObject(m.forward, { tokens: trace.tokens, seed: options.seed }).layers, undefined);
  // ids + batch: the core builds the rows as `attn verify --batch` did for the trace.
  const batched = callObject(m.forward, { ids: options.tokens, batch: options.batch, seed: options.seed });
  assert.deepEqual(batched.tokens, trace.tokens);
  assert.equal(maxAbsDiff(batched.logits, trace.logits, 'logits from ids + batch'), 0);

  assert.deepEqual(JSON.parse(m.config('tiny')), trace.config);
  assert.deepEqual(callObject(m.cachePayload, JSON.parse(m.config('tiny'))), trace.cache_payload);
});

test('bad input from JavaScript returns {error} with a readable message', async () => {
  const [m, tv] = await Promise.all([core(), traceViewer()]);
  const nested = (depth) => (depth === 0 ? 1 : [nested(depth - 1)]);
  const cyclic = { tokens: [[1, 2]] };
  cyclic.capture = cyclic;
  const owner = (fn) => (['trace', 'verify'].includes(fn) ? tv : m);
  const cases = [
    ['trace', { tokens: [1, 99] }, /token id 99 .*outside the vocabulary \[0, 31\]/],
    ['trace', { tokens: [] }, /at least one token id/],
    ['trace', { tokens: [4, -1] }, /token id -1 .*negative/],
    ['trace', { tokens: [3] }, /at least 2 tokens/],
    ['trace', { tokens: [1, 2], batch: 0 }, /batch must be between 1 and 16/],
    ['trace', { tokens: [1, 2], seed: -5 }, /seed must be a non-negative integer/],
    ['trace', { tokns: [1, 2] }, /unknown option 'tokns'/],
    ['trace', 'not json', /not valid JSON/],
    ['verify', { tokens: [1, 'a'] }, /token ids must be integers/],
    ['verify', { tokens: [1, 2.5] }, /token ids must be integers/],
    ['forward', { tokens: [[1, 99]] }, /token id 99 is outside the vocabulary/],
    ['forward', { tokens: [[-2, 1]] }, /token id -2 is outside the vocabulary/],
    ['forward', { tokens: [[1, 2], [3]] }, /row 1 has 1 ids but row 0 has 2/],
    ['forward', { tokens: [] }, /non-empty list of rows/],
    ['forward', { tokens: [[]] }, /at least one token/],
    ['forward', { seed: 1 }, /needs tokens .* or ids and a batch/],
    ['forward', { tokens: [[1, 2]], ids: [1, 2] }, /not both/],
    ['forward', { tokens: [[1, 2]], batch: 2 }, /batch goes with ids/],
    ['forward', { ids: [1, 2], batch: 0 }, /batch must be between 1 and 16/],
    ['forward', { tokens: [[1, 2.5]] }, /token ids must be integers/],
    ['forward', { tokns: [[1, 2]] }, /unknown option 'tokns'/],
    ['forward', 'not an object', /options must be a JSON object/],
    ['forward', { tokens: [[1, 2]], capture: () => true }, /cannot hold a JavaScript function/],
    ['forward', { tokens: [[1n, 2n]] }, /cannot hold a JavaScript bigint/],
    ['forward', { tokens: nested(70) }, /deeper than 64 levels/],
    ['forward', cyclic, /deeper than 64 levels/],
    ['config', 'gpt-5', /unknown config 'gpt-5'/],
    ['cachePayload', { vocab_size: 32 }, /hidden_size/],
    ['cachePayload', { ...JSON.parse(m.config('tiny')), n_kv_heads: 3 }, /multiple of n_kv_heads/],
    ['cachePayload', 'tiny', /model config must be a JSON object/],
  ];
  for (const [fn, input, pattern] of cases) {
    // The trace viewer's module parses JSON text; chapter 1's takes the object itself.
    const text = ['trace', 'verify'].includes(fn);
    const result = JSON.parse(owner(fn)[fn](text && typeof input !== 'string' ? JSON.stringify(input) : input));
    const what = `${fn}(${inspect(input, { depth: 3 }).slice(0, 200)})`;
    assert.deepEqual(Object.keys(result), ['error'], `${what} returned ${JSON.stringify(result).slice(0, 200)}`);
    assert.match(result.error, pattern, `${what}: message was "${result.error}"`);
  }

  const bytes = tv.exportCheckpoint(JSON.stringify({ seed: -1 }));
  assert.ok(!(bytes instanceof Uint8Array), 'exportCheckpoint({seed: -1}) returned bytes');
  assert.match(bytes.error, /seed must be a non-negative integer/);

  // Both modules survive every error above.
  assert.equal(call(tv.verify, { tokens: [1, 2, 3] }).all_passed, true);
  assert.equal(callObject(m.forward, { tokens: [[1, 2, 3]] }).logits[0].length, 3);
});

test('chapter 1\'s module reads an object as JSON.stringify would write it', async () => {
  const m = await core();
  const plain = callObject(m.forward, { tokens: [[1, 2, 3]], seed: 7 });
  assert.equal(plain.error, undefined, plain.error);
  // Typed arrays are lists; an undefined property is left out; whole numbers are integers,
  // however they were written (7.0 is 7).
  const same = callObject(m.forward, { tokens: [Int32Array.of(1, 2, 3)], seed: 7.0, capture: undefined });
  assert.deepEqual(same, plain);
  assert.notDeepEqual(callObject(m.forward, { tokens: [[1, 2, 3]], seed: 8 }).logits, plain.logits, 'the seed must reach the core');
  // Larger than an int32, and not whole: refused with the value in the message.
  assert.match(callObject(m.forward, { tokens: [[1, 2 ** 40]] }).error, /token id 1099511627776 is outside the vocabulary/);
  assert.match(callObject(m.ropeAngles, { head_dim: 8, theta: 1e4, positions: [0, 1.5] }).error, /whole numbers/);
  assert.match(callObject(m.ropeAngles, { head_dim: 8, theta: NaN }).error, /theta must be/);
});
