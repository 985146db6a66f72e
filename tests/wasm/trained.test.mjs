// The trained-model module (wasm/bindings_trained.cpp, attention_trained.wasm) under
// Node against llama2.c's published output and the native attn on stories260K: the
// same tokens, continuation, probabilities (within float32 rounding: the native
// projections fuse multiply-adds, wasm has none), checks and head patterns; the KV
// cache rewound and extended equals a full pass bit for bit; bad files are named.
//
// stories260K is read where it lies (../shared/models/stories260K). Without it the
// test fails naming the folder, unless ANATOMY_NO_SHARED_MODELS=1 (SKIPPED, exit 77).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadTrained } from './load_core.mjs';
import { stories260K } from '../shared-models.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { model: modelPath, tokenizer: tokenizerPath } = stories260K();
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');
const modelBytes = new Uint8Array(fs.readFileSync(modelPath));
const tokenizerBytes = new Uint8Array(fs.readFileSync(tokenizerPath));

// llama2.c's test_all.py: `run stories260K.bin -z tok512.bin -t 0.0 -n 200` (the same text tests/cli/test_llama2c.py holds).
const published = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a ' +
  'big, red ball. She wanted to play with it, but it was too high.\nLily\'s mom said, "Lily, let\'s go to the ' +
  'park." Lily was sad and didn\'t know what to do. She said, "I want to play with your ball, but I can\'t find ' +
  'it."\nLily was sad and didn\'t know what to do. She said, "I\'m sorry, Lily. I didn\'t know what to do."\n' +
  "Lily didn't want to help her mom, so she";
// Native projections use fused multiply-add (ANATOMY_KERNEL_FLAGS), wasm cannot: float32
// rounding, grown over five layers to about 2e-6 in a probability and 1e-5 in a logit.
const probabilityTolerance = 1e-5;
const prompt = 'Lily and Ben went to the park. They saw';

async function open(model = modelBytes) {
  const module = await loadTrained();
  const session = new module.TrainedSession();
  const info = session.load(model, tokenizerBytes);
  return { session, info: typeof info === 'string' ? JSON.parse(info) : info };
}
const call = (session, name, options) => {
  const result = JSON.parse(session[name](options));
  assert.equal(result.error, undefined, `${name}: ${result.error}`);
  return result;
};

function nativeProbe(args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-trained-'));
  try {
    const file = path.join(dir, 'probe.json');
    execFileSync(attn, ['probe', '--model', modelPath, '--tokenizer', tokenizerPath, '--output', file, ...args]);
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function largestDifference(a, b) {
  if (typeof a === 'number') return Math.abs(a - b);
  assert.equal(a.length, b.length);
  return a.reduce((worst, x, i) => Math.max(worst, largestDifference(x, b[i])), 0);
}

test('the header and tokenizer are read as the native tool reads them', async () => {
  const { session, info } = await open();
  assert.deepEqual([info.config.hidden_size, info.config.n_layers, info.config.n_heads, info.config.n_kv_heads,
    info.config.ffn_size, info.config.vocab_size, info.seq_len, info.version], [64, 5, 8, 4, 172, 512, 512, 0]);
  assert.equal(info.config.rope_pairing, 'interleaved');
  const native = nativeProbe(['--prompt', prompt, '--generate', '0']);
  assert.deepEqual(call(session, 'encode', { text: prompt }).ids, native.tokens[0]);
  assert.equal(call(session, 'decode', { ids: native.tokens[0] }).text, prompt);
  session.delete();
});

test('greedy decoding from BOS prints llama2.c\'s published output, in wasm', async () => {
  const { session } = await open();
  const trace = call(session, 'probe', { ids: [1], generate: 200 });
  assert.equal(trace.probe.continuation.text, published);
  assert.equal(trace.all_checks_passed, true);
  session.delete();
});

test('wasm and native agree on a prompt: ids, continuation, probabilities, checks, head patterns', async () => {
  const { session } = await open();
  const native = nativeProbe(['--prompt', prompt, '--generate', '30', '--head-patterns']);
  const wasm = call(session, 'probe', { ids: native.tokens[0], generate: 30, head_patterns: true });
  assert.deepEqual(wasm.probe.continuation.ids, native.probe.continuation.ids);
  const probs = largestDifference(wasm.layers.map((l) => l.probabilities), native.layers.map((l) => l.probabilities));
  assert.ok(probs <= probabilityTolerance, `probabilities differ by ${probs}`);
  assert.ok(largestDifference(wasm.logits, native.logits) <= 1e-4);
  for (const trace of [wasm, native]) assert.deepEqual(trace.checks.map((c) => [c.id, c.passed]), [['p1', true], ['p2', true], ['p3', true], ['p4', true]]);
  // p1, cached vs full: bit for bit in both builds.
  assert.equal(wasm.probe.cached_vs_full.max_abs_diff, 0);
  const [wp, np] = [wasm.probe.head_patterns, native.probe.head_patterns];
  assert.deepEqual(wp.induction_ids, np.induction_ids);
  wp.patterns.forEach((p, i) => {
    assert.ok(largestDifference(p.heads, np.patterns[i].heads) <= probabilityTolerance, p.name);
    assert.deepEqual(p.showing, np.patterns[i].showing, p.name);
  });
  session.delete();
});

test('the check suite passes on stories260K in wasm, as attn verify --checkpoint does natively', async () => {
  const { session } = await open();
  const ids = [1, 403, 407, 261, 378, 300];
  const wasm = call(session, 'checks', { ids });
  assert.deepEqual(wasm.checks.map((c) => c.id), ['a', 'b', 'd', 'e1', 'e2', 'e3', 'f2', 'g', 'h2']);
  assert.equal(wasm.all_passed, true, JSON.stringify(wasm.checks.filter((c) => !c.passed)));
  const native = execFileSync(attn, ['verify', '--checkpoint', modelPath, '--tokens', ids.join(',')], { encoding: 'utf8' });
  assert.match(native, /All 12 checks passed\./);
  session.delete();
});

test('a rewound cache extended by new tokens gives the full pass\'s rows bit for bit', async () => {
  const { session } = await open();
  const ids = call(session, 'encode', { text: 'Once upon a time, there was a big dog.' }).ids;
  const T = ids.length;
  const packedRows = (shape, history) => {
    // Per layer and head, T_new rows, row i holding keys 0 .. history + i.
    const [L, H, Tn] = shape, flat = Array.from(session.rows());
    const out = [];
    let at = 0;
    for (let l = 0; l < L * H; l++)
      for (let i = 0; i < Tn; i++) {
        out.push(flat.slice(at, at + history + i + 1));
        at += history + i + 1;
      }
    assert.equal(at, flat.length);
    return out;
  };
  const full = call(session, 'extend', { keep: 0, ids });
  assert.deepEqual(full.rows_shape, [5, 8, T, T]);
  const fullRows = packedRows(full.rows_shape, 0);
  // Something else after the first 4 tokens, then back to the real tail.
  call(session, 'extend', { keep: 4, ids: [300, 301, 302] });
  const tail = call(session, 'extend', { keep: 4, ids: ids.slice(4) });
  assert.equal(tail.position, T);
  const tailRows = packedRows(tail.rows_shape, 4);
  for (let lh = 0; lh < 40; lh++)
    for (let i = 0; i < T - 4; i++) assert.deepEqual(tailRows[lh * (T - 4) + i], fullRows[lh * T + 4 + i]);
  assert.equal(tail.next.id, full.next.id);
  session.delete();
});

test('the comparison with native fails for a model with one weight changed', async () => {
  const broken = modelBytes.slice();
  const floats = new Float32Array(broken.buffer, 28 + 512 * 64 * 4 + 5 * 64 * 4, 1); // layer 0's first wq weight
  floats[0] += 0.5;
  const { session } = await open(broken);
  const native = nativeProbe(['--prompt', prompt, '--generate', '0']);
  const wasm = call(session, 'probe', { ids: native.tokens[0], generate: 0 });
  const probs = largestDifference(wasm.layers.map((l) => l.probabilities), native.layers.map((l) => l.probabilities));
  assert.ok(probs > 100 * probabilityTolerance, `a changed weight moved the probabilities by only ${probs}`);
  session.delete();
});

test('bad files and bad calls come back as one message', async () => {
  const module = await loadTrained();
  const session = new module.TrainedSession();
  assert.match(JSON.parse(session.encode({ text: 'x' })).error, /no model is loaded/);
  assert.match(session.load(modelBytes.slice(0, 20), tokenizerBytes).error, /the model file.*header/);
  assert.match(session.load(modelBytes.slice(0, -4), tokenizerBytes).error, /the model file.*implies/);
  assert.match(session.load(modelBytes, tokenizerBytes.slice(0, 3000)).error, /the tokenizer file.*ends at piece/);
  assert.match(session.load('not bytes', tokenizerBytes).error, /Uint8Array/);
  JSON.parse(session.load(modelBytes, tokenizerBytes));
  assert.match(JSON.parse(session.extend({ keep: 3, ids: [1] })).error, /keep must be 0 to 0/);
  assert.match(JSON.parse(session.extend({ keep: 0, ids: [512] })).error, /512/);
  assert.match(JSON.parse(session.extend({ keep: 0, ids: [] })).error, /at least one/);
  assert.match(JSON.parse(session.extend({ keep: 0, ids: Array(257).fill(5) })).error, /at most 256/);
  assert.match(JSON.parse(session.headPatterns({ ids: [1] })).error, /at least 2 tokens/);
  assert.match(JSON.parse(session.extend({ kep: 0 })).error, /kep/);
  session.delete();
});
