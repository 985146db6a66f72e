// The two chapters' modules, each with what its own widgets call and nothing more:
// the notebook's (attention_notebook: bindings_config, bindings_lessons, bindings_session,
// bindings_stream)
// and chapter 1's (attention_core: the explorer's forward, RoPE, the Shakespeare
// checkpoint, and bindings_config too; the trace and the checks are the trace viewer's,
// wasm_matches_native.test.mjs). What they share answers alike;
// the notebook's own exports are held to closed forms and to a plain JavaScript
// reference, and its KV stepper's cached logits to chapter 1's full forward, another
// module's path through the same weights.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { loadCore, loadNotebook, loadTrained, wasmDir } from './load_core.mjs';

const [core, notebook] = await Promise.all([loadCore(), loadNotebook()]);
const tiny = JSON.parse(core.config('tiny'));
const result = (text) => (typeof text === 'string' ? JSON.parse(text) : text);

test('what both modules link (bindings_config) answers alike, errors included', () => {
  const calls = [
    ['config', 'tiny'],
    ['config', 'tinyllama-1.1b'],
    ['config', 'no-such-preset'],
    ['cachePayload', tiny],
    ['cachePayload', { ...tiny, n_kv_heads: 3 }],
    ['cachePayload', 'not a config'],
    ['buildInfo'],
  ];
  for (const [name, ...args] of calls) assert.deepEqual(notebook[name](...args), core[name](...args), `${name}(${JSON.stringify(args)})`);
  assert.match(notebook.config('no-such-preset'), /"error"/, 'a bad preset must be refused, or the comparison proves little');
});

test('maskTiles counts a causal mask as the closed form does and refuses a negative length', () => {
  for (const [T, tile] of [[64, 16], [100, 8], [7, 4]]) {
    const out = result(notebook.maskTiles({ kind: 'causal', T, S: T }, tile, tile));
    const n = Math.ceil(T / tile);
    assert.equal(out.visible_cells, T * (T + 1) / 2, `T = ${T}: visible cells`);
    assert.deepEqual([out.rows, out.cols], [n, n]);
    assert.equal(out.partial, n, `T = ${T}, tile ${tile}: the diagonal tiles are partial`);
    assert.equal(out.full, n * (n - 1) / 2, 'below the diagonal, full');
    assert.equal(out.skipped, n * (n - 1) / 2, 'above it, skipped');
    assert.equal(out.states.length, n * n);
  }
  const refused = result(notebook.maskTiles({ kind: 'causal', T: -1, S: 4 }, 16, 16));
  assert.match(String(refused.error), /T/, `maskTiles took T = -1: ${JSON.stringify(refused)}`);
});

test('softLookup is softmax(scale q.k) over the keys, then the weighted sum of the values', () => {
  const query = [1, 0.5], keys = [[1, 0], [0, 1], [0.3, 0.3]], values = [[1, 2], [3, 4], [5, 6]], scale = 0.7;
  const out = result(notebook.softLookup({ query, keys, values, scale }));
  const scores = keys.map((k) => scale * (k[0] * query[0] + k[1] * query[1]));
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const weights = exps.map((e) => e / exps.reduce((a, b) => a + b, 0));
  const mixed = [0, 1].map((d) => weights.reduce((sum, w, n) => sum + w * values[n][d], 0));
  for (const [name, ours, theirs] of [['scores', out.scores, scores], ['weights', out.weights, weights], ['mixed', out.mixed, mixed]]) {
    ours.forEach((x, i) => assert.ok(Math.abs(x - theirs[i]) < 1e-12, `${name}[${i}]: ${x} vs ${theirs[i]}`));
  }
  assert.match(String(result(notebook.softLookup({ query: [1], keys: [[1, 0]], values: [[1]], scale: 1 })).error), /query/);
});

test("attentionCost follows the FLOP counts lessons/cost.hpp states", () => {
  for (const [d, T, Hq, Hkv, bytes] of [[4096, 8192, 32, 8, 2], [32, 10, 4, 2, 4], [64, 1, 8, 8, 2]]) {
    const out = result(notebook.attentionCost({ d, T, n_heads: Hq, n_kv_heads: Hkv, bytes_per_scalar: bytes }));
    const dkv = d * Hkv / Hq;
    assert.deepEqual(out.prefill, { projections: 2 * T * d * (2 * d + 2 * dkv), scores: 2 * T * T * d, weighted: 2 * T * T * d });
    assert.deepEqual(out.decode, { projections: 2 * d * (2 * d + 2 * dkv), scores: 2 * T * d, weighted: 2 * T * d });
    assert.equal(out.decode_cache_bytes, 2 * T * dkv * bytes);
    assert.equal(out.crossover_T, d + dkv);
  }
  const refused = result(notebook.attentionCost({ d: 30, T: 10, n_heads: 4, n_kv_heads: 3 }));
  assert.match(String(refused.error), /multiple of n_kv_heads/);
});

test("the KV stepper's cached logits equal chapter 1's full forward of the same tokens", () => {
  const session = new notebook.DecodeSession({ seed: 1 });
  const reports = [result(session.prefill({ tokens: [1, 5, 9] }))];
  for (const token of [3, 7, 31]) reports.push(result(session.step({ token })));
  const outOfVocabulary = result(session.step({ token: 99 }));
  session.delete();
  assert.match(String(outOfVocabulary.error), /99/);

  const tokens = [1, 5, 9, 3, 7, 31];
  const full = result(core.forward({ tokens: [tokens], seed: 1 })).logits[0];  // [T, V]
  const cached = reports.flatMap((r) => r.cached_logits);                                      // [T, V], prefill rows then one per step
  assert.equal(cached.length, tokens.length);
  let worst = 0;
  cached.forEach((row, t) => row.forEach((x, v) => { worst = Math.max(worst, Math.abs(x - full[t][v])); }));
  assert.ok(worst < 1e-4, `cached and full logits differ by ${worst}`);
  assert.ok(reports.every((r) => r.argmax_agrees), 'the session\'s own full recomputation agrees too');
});

test("the KV stepper's chunk after a cache equals chapter 1's full forward, with the shifted mask", () => {
  const session = new notebook.DecodeSession({ seed: 1 });
  const refusedEmpty = result(session.append({ tokens: [4, 9] }));
  assert.match(String(refusedEmpty.error), /cache is empty/);
  result(session.prefill({ tokens: [1, 2, 3] }));
  const chunk = result(session.append({ tokens: [4, 9] }));
  const refusedNone = result(session.append({ tokens: [] }));
  session.delete();
  assert.match(String(refusedNone.error), /at least one token/);
  assert.equal(chunk.history, 3);
  assert.deepEqual(chunk.mask, [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]);  // tril(ones(2, 5), diagonal = 5 - 2)
  const full = result(core.forward({ tokens: [[1, 2, 3, 4, 9]], seed: 1 })).logits[0].slice(3);  // the chunk's rows [2, V]
  let worst = 0;
  chunk.cached_logits.forEach((row, t) => row.forEach((x, v) => { worst = Math.max(worst, Math.abs(x - full[t][v])); }));
  assert.ok(worst < 1e-4, `the chunk's cached logits and the full forward differ by ${worst}`);
  // Each chunk row's weights: only the visible keys, summing to 1.
  for (const layer of chunk.probabilities)
    for (const head of layer)
      head.forEach((row, t) => {
        row.forEach((p, s) => assert.ok(chunk.mask[t][s] === 1 || p === 0, `masked key ${s} has weight ${p}`));
        assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
      });
});

test('each module leaves out what only the other chapter calls', () => {
  for (const name of ['forward', 'ropeAngles', 'ropeRotate', 'ropeScores', 'CheckpointSession']) {
    assert.equal(typeof core[name], 'function', `attention_core lost ${name}`);
    assert.equal(notebook[name], undefined, `attention_notebook has ${name}: it should be chapter 1's alone`);
  }
  for (const name of ['maskTiles', 'softLookup', 'attentionCost', 'DecodeSession', 'StreamSession']) {
    assert.equal(typeof notebook[name], 'function', `attention_notebook lost ${name}`);
    assert.equal(core[name], undefined, `attention_core has ${name}: it should be the notebook's alone`);
  }
});

test('the notebook\'s stream sessions read attn train\'s checkpoints; llama2.c\'s files are the trained-model module\'s', async () => {
  const notebookSession = new notebook.StreamSession();
  const trainedSession = new (await loadTrained()).StreamSession();
  assert.equal(typeof notebookSession.loadCheckpoint, 'function');
  assert.equal(notebookSession.loadLlama2c, undefined, 'attention_notebook links llama2.c\'s reader');
  assert.equal(typeof trainedSession.loadLlama2c, 'function', 'attention_trained lost loadLlama2c');
  notebookSession.delete();
  trainedSession.delete();
});

test('the modules the page\'s widgets call carry no JSON parser; the judge\'s, which reads a learner\'s JSON text, does', () => {
  // A name of nlohmann's lexer tokens, kept in the data of any module that links its parser.
  const lexer = Buffer.from("'[', '{', or a literal");
  const holds = (module) => fs.readFileSync(path.join(wasmDir, `${module}.wasm`)).includes(lexer);
  assert.equal(holds('attention_judge'), true, 'the probe must find the parser where it is, or its absence proves nothing');
  for (const module of ['attention_core', 'attention_notebook', 'attention_trained'])
    assert.equal(holds(module), false, `${module} links a JSON parser: its functions take objects (json_from_js), not JSON text`);
});
