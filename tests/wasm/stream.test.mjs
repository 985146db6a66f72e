// The StreamingLLM widget's stream session (wasm/bindings_stream.cpp, in attention_notebook.wasm
// for attn train's checkpoints, in attention_trained.wasm for llama2.c's files) under Node against the native `attn stream --json` on the same text: the Shakespeare
// model attn train wrote (web/public/models/shakespeare) and llama2.c's stories260K.
// Every policy's loss at every position agrees to 1e-4 nats (the native build fuses
// multiply-adds, wasm has none), so do the means; the continuations are the same
// tokens; bad input is an {error}, and a model must be loaded first. Also the time of
// 2,000 tokens under all four policies, which the page promises in under a second.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadCore, loadNotebook, loadTrained } from './load_core.mjs';
import { loadCheckpoint } from '../../web/src/lib/checkpoint-load.mjs';
import { stories260K } from '../shared-models.mjs';
import { safetensorsHeader } from '../../web/src/lib/safetensors.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');
const shakespeare = path.join(repo, 'web', 'public', 'models', 'shakespeare');
const tolerance = 1e-4;

// 700 characters of Shakespeare's held-out tenth is not in the repository; this text is
// the first lines of the corpus, written out, repeated to pass a window of 64 many times.
const verse = 'First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n' +
  'First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n\n';

function nativeStream(args, text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-stream-'));
  try {
    const file = path.join(dir, 'text.txt');
    fs.writeFileSync(file, text);
    return JSON.parse(execFileSync(attn, ['stream', '--text', file, '--json', ...args], { encoding: 'utf8' }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function shakespeareSession() {
  const module = await loadNotebook();
  const session = new module.StreamSession();
  const model = new Uint8Array(fs.readFileSync(path.join(shakespeare, 'model.safetensors')));
  const info = JSON.parse(session.loadCheckpoint(
    JSON.parse(fs.readFileSync(path.join(shakespeare, 'config.json'), 'utf8')), model,
    safetensorsHeader(model, 'model.safetensors').header,
    JSON.parse(fs.readFileSync(path.join(shakespeare, 'tokenizer.json'), 'utf8'))));
  assert.equal(info.error, undefined, info.error);
  return { module, session, info };
}

function run(session, options) {
  const report = JSON.parse(session.run(options));
  assert.equal(report.error, undefined, report.error);
  return report;
}

function assertSameReport(wasm, native) {
  for (const key of ['tokens', 'window', 'sinks', 'first_eviction_at', 'trained_positions'])
    assert.equal(wasm[key], native[key], key);
  assert.deepEqual(wasm.policies.map((p) => p.policy), ['keep_all', 'sliding_window', 'sinks_and_window', 'recompute_window']);
  wasm.policies.forEach((p, i) => {
    const n = native.policies[i];
    assert.equal(p.losses.length, n.losses.length);
    let largest = 0;
    p.losses.forEach((loss, t) => {
      assert.ok(Number.isFinite(loss), `${p.policy} loss ${t} is ${loss}`);
      largest = Math.max(largest, Math.abs(loss - n.losses[t]));
    });
    assert.ok(largest <= tolerance, `${p.policy}: losses differ by up to ${largest}`);
    assert.ok(Math.abs(p.mean_loss_after_first_eviction - n.mean_loss_after_first_eviction) <= tolerance, p.policy);
    if (n.continuation) assert.deepEqual(p.continuation, n.continuation, `${p.policy}'s continuation`);
  });
}

test('the Shakespeare model: every policy as attn stream computes it, with the same continuations', async () => {
  const { session, info } = await shakespeareSession();
  assert.equal(info.context, 64);
  const text = verse.repeat(3);
  const wasm = run(session, { text, window: 48, sinks: 2, length: 400, generate: 20 });
  const native = nativeStream(['--model', shakespeare, '--window', '48', '--sinks', '2', '--length', '400', '--generate', '20'], text);
  assertSameReport(wasm, native);
  assert.equal(wasm.text_tokens, text.length + 1);  // BOS and one token per character, before --length cut it
  // The page's two steps (the three caches, then the reference) give the same report.
  const policies = run(session, { text, window: 48, sinks: 2, length: 400, generate: 20, reference: false });
  assert.deepEqual(policies.policies.map((p) => p.policy), ['keep_all', 'sliding_window', 'sinks_and_window']);
  assert.ok(policies.policies.every((p) => !('departs_from_reference_at' in p)), 'no departure without the reference');
  const completed = JSON.parse(session.addReference());
  for (const key of ['ms', 'policies_ms', 'reference_ms']) delete completed[key], delete wasm[key];
  assert.deepEqual(completed, wasm);
  // What the widget shows follows: keeping everything past the 64 trained positions is worst.
  const mean = Object.fromEntries(wasm.policies.map((p) => [p.policy, p.mean_loss_after_first_eviction]));
  assert.ok(mean.keep_all > mean.sliding_window && mean.keep_all > mean.recompute_window, JSON.stringify(mean));
  session.delete();
});

test('the reference in parts, as the page\'s workers share it out, joins into the one-piece reference bit for bit', async () => {
  const { session } = await shakespeareSession();
  const helper = (await shakespeareSession()).session;  // another worker's session: no run of its own
  const options = { text: verse.repeat(3), window: 48, sinks: 2, length: 400, generate: 20 };
  const whole = run(session, options);
  const reference = whole.policies.find((p) => p.policy === 'recompute_window');
  assert.deepEqual(JSON.parse(helper.tokens(options)), { tokens: 400, text_tokens: options.text.length + 1 });
  const parts = [[0, 150], [150, 150], [150, 399]].map(([from, to]) => {
    const part = JSON.parse(helper.referenceLosses({ ...options, from, to }));
    assert.equal(part.error, undefined, part.error);
    assert.equal(part.losses.length, to - from);
    return part.losses;
  });
  const losses = parts.flat();
  assert.ok(losses.every((loss, t) => Object.is(loss, reference.losses[t])), 'the joined parts are the reference, bit for bit');
  const continuation = JSON.parse(helper.referenceContinuation(options));
  assert.deepEqual(continuation.ids, reference.continuation.ids);
  // Attached to a run of the three caches, they make the one-piece report.
  run(session, { ...options, reference: false });
  assert.match(JSON.parse(session.attachReference({ losses: losses.slice(1), continuation: continuation.ids, ms: 1 })).error,
    /398 losses for a report of 400 tokens/);
  assert.match(JSON.parse(session.attachReference({ losses, continuation: continuation.ids.slice(1), ms: 1 })).error,
    /continues the text by 19 tokens, the policies by 20/);
  const attached = JSON.parse(session.attachReference({ losses, continuation: continuation.ids, ms: 1 }));
  assert.equal(attached.error, undefined, attached.error);
  for (const key of ['ms', 'policies_ms', 'reference_ms']) delete attached[key], delete whole[key];
  assert.deepEqual(attached, whole);
  assert.match(JSON.parse(session.attachReference({ losses, continuation: continuation.ids })).error, /has its reference already/);
  // A part outside the text, or backwards, is an error.
  assert.match(JSON.parse(helper.referenceLosses({ ...options, from: 0, to: 400 })).error, /predictions 0 to 400 of a text with 399/);
  assert.match(JSON.parse(helper.referenceLosses({ ...options, from: 9, to: 8 })).error, /0 <= from <= to/);
  helper.delete();
  session.delete();
});

test('head scores: the first-token score of every head is chapter 1\'s, bit for bit, and a plain model has no sink share', async () => {
  const { session } = await shakespeareSession();
  const text = 'First Citizen:\nBefore we proceed any further, hear me speak.';
  const scores = JSON.parse(session.headScores({ text }));
  assert.equal(scores.error, undefined, scores.error);
  assert.equal(scores.tokens, text.length + 1);
  assert.equal(scores.learned_sink, null);
  const core = await loadCore();
  const checkpoint = new core.CheckpointSession();
  const read = (file) => fs.readFileSync(path.join(shakespeare, file));
  const loaded = JSON.parse(loadCheckpoint(checkpoint, { config: read('config.json').toString(), model: new Uint8Array(read('model.safetensors')), tokenizer: read('tokenizer.json').toString() }));
  assert.equal(loaded.error, undefined, loaded.error);
  const patterns = JSON.parse(checkpoint.headPatterns(text, 1, 1));
  const first = patterns.patterns.find((p) => p.name === 'first_token');
  assert.deepEqual(scores.first_token.heads, first.heads);
  assert.equal(scores.first_token.uniform_baseline, first.uniform_baseline);
  assert.match(JSON.parse(session.headScores({ text: 'ab' })).error, /at least 3 tokens/);
  assert.match(JSON.parse(session.headScores({ text: 'x'.repeat(64) })).error, /at most 63 tokens/);
  checkpoint.delete();
  session.delete();
});

test('stories260K (llama2.c, read by the trained-model module): every policy as attn stream computes it', async () => {
  const { model, tokenizer } = stories260K();
  const module = await loadTrained();
  const session = new module.StreamSession();
  const info = JSON.parse(session.loadLlama2c(new Uint8Array(fs.readFileSync(model)), new Uint8Array(fs.readFileSync(tokenizer))));
  assert.equal(info.error, undefined, info.error);
  assert.equal(info.context, 512);
  const text = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. '.repeat(4);
  const wasm = run(session, { text, window: 32, sinks: 4, length: 300, generate: 10 });
  const native = nativeStream(['--model', model, '--tokenizer', tokenizer, '--window', '32', '--sinks', '4', '--length', '300', '--generate', '10'], text);
  assertSameReport(wasm, native);
  session.delete();
});

test('bad input is an {error}: no model yet, sinks not fewer than the window, a text that evicts nothing, bad numbers, bad files', async () => {
  const module = await loadNotebook();
  const empty = new module.StreamSession();
  assert.match(JSON.parse(empty.run({ text: verse })).error, /no model/);
  assert.match(JSON.parse(empty.addReference()).error, /no run/);
  assert.match(JSON.parse(empty.attachReference({ losses: [], continuation: [] })).error, /no run/);
  assert.match(JSON.parse(empty.referenceLosses({ text: verse, from: 0, to: 1 })).error, /no model/);
  empty.delete();
  const trained = new (await loadTrained()).StreamSession();
  assert.match(JSON.parse(trained.loadLlama2c(new Uint8Array([1, 2, 3]), new Uint8Array(4))).error, /model file/);
  assert.match(JSON.parse(trained.loadLlama2c('not bytes', new Uint8Array(4))).error, /Uint8Array/);
  trained.delete();
  const { session } = await shakespeareSession();
  assert.match(JSON.parse(session.run({ text: verse, window: 4, sinks: 4 })).error, /the sinks K = 4 must be fewer than the window W = 4/);
  assert.match(JSON.parse(session.run({ text: 'short', window: 64 })).error, /evicts nothing before 66/);
  assert.match(JSON.parse(session.run({ text: verse, length: 1 })).error, /2 to 20000 tokens/);
  assert.match(JSON.parse(session.run({ text: verse, window: 0 })).error, /at least 1 entry/);
  assert.match(JSON.parse(session.run({ text: verse, windw: 8 })).error, /windw/);
  assert.match(JSON.parse(session.run({ text: 'é'.repeat(80), window: 8, sinks: 1 })).error ?? '', /./, 'a character outside the vocabulary');
  session.delete();
});

test('the same bad input gets the same words from attn stream and from the page\'s session (the core\'s check)', async () => {
  const { session } = await shakespeareSession();
  const cases = [
    // [attn stream's flags, the page's options, the option the page marks, the flags attn names before the core's words]
    [['--window', '4', '--sinks', '4'], { window: 4, sinks: 4 }, 'sinks', '--sinks 4, --window 4: '],
    [['--window', '8', '--sinks', '9'], { window: 8, sinks: 9 }, 'sinks', '--sinks 9, --window 8: '],
    [['--window', '64'], { window: 64 }, null, null],
  ];
  const text = 'Too short for a window of sixty-four.';
  for (const [flags, options, option, prefix] of cases) {
    const page = JSON.parse(session.run({ text, length: 2000, ...options })).error;
    assert.ok(page, `the page's session refuses ${JSON.stringify(options)}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-stream-'));
    let stderr = '', status = 0;
    try {
      const file = path.join(dir, 'text.txt');
      fs.writeFileSync(file, text);
      try {
        execFileSync(attn, ['stream', '--model', shakespeare, '--text', file, ...flags], { encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        ({ stderr, status } = error);
      }
      assert.equal(status, 2, `attn stream ${flags.join(' ')} exits 2`);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      // attn names its flags (and, for the text, its file) before the core's words; the page shows the words alone.
      assert.equal(lines[0], `attn: ${prefix ?? `--text ${file}, --window ${options.window}: `}${page}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // The check the widget asks before a run: the same words, and the option to mark.
    const checked = JSON.parse(session.check({ text, ...options }));
    if (option) assert.deepEqual(checked, { error: page, option });
    else assert.deepEqual(checked, {}, 'the text is read by a run, not by the check');
  }
});

test('2,000 tokens under all four policies, timed (the page promises under a second in Chromium)', async () => {
  const { session } = await shakespeareSession();
  const text = verse.repeat(12).slice(0, 1999);
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(run(session, { text, window: 64, sinks: 4, length: 2000 }));
  const median = (key) => runs.map((r) => r[key]).sort((a, b) => a - b)[1];
  console.log(`attention_notebook's stream session under Node, 2,000 tokens, W = 64 (median of 3): the three caches ${median('policies_ms').toFixed(0)} ms, ` +
    `the reference ${median('reference_ms').toFixed(0)} ms`);
  assert.ok(runs.every((r) => Number.isFinite(r.ms) && Math.abs(r.ms - r.policies_ms - r.reference_ms) < 1e-6));
  session.delete();
});
