// The kernel-checks module (wasm/bindings_kernel_checks.cpp) under Node, with no GPU: the
// page's WebGPU kernels are played by a plain JavaScript attention, so the binding's
// whole exchange runs in every CI run, adapter or not:
//   - every case's inputs come back, and a faithful answer passes every check the core
//     makes of it, while the same answer with one value 1e-3 off fails out_matches_core;
//   - attn verify's suite by replay (DeviceSuite) completes in L + 1 = 3 rounds with every
//     check passing when each request is answered faithfully, and a bad option or an
//     answer to no request gets the core's words, not an exception.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadKernelChecks } from '../../wasm/load-node.mjs';

const checks = await loadKernelChecks();
const json = (text) => JSON.parse(text);

/** Masked attention from the ranges, in float64, rounded to float32 at the end: [B, Hq, T, D] (and the probabilities). */
function attention({ B, Hq, Hkv, T, S, D }, { q, k, v, sinks, ranges }) {
  const out = new Float32Array(B * Hq * T * D), probs = new Float32Array(B * Hq * T * S);
  for (let b = 0; b < B; b++) for (let h = 0; h < Hq; h++) for (let t = 0; t < T; t++) {
    const row = (b * Hq + h) * T + t, g = h / (Hq / Hkv) | 0;
    const sees = (s) => (s >= ranges[4 * t] && s < ranges[4 * t + 1]) || (s >= ranges[4 * t + 2] && s < ranges[4 * t + 3]);
    const scores = [];
    let m = sinks ? sinks[h] : -Infinity;
    for (let s = 0; s < S; s++) {
      if (!sees(s)) continue;
      let dot = 0;
      for (let d = 0; d < D; d++) dot += q[row * D + d] * k[((b * Hkv + g) * S + s) * D + d];
      scores.push([s, dot / Math.sqrt(D)]);
      m = Math.max(m, dot / Math.sqrt(D));
    }
    let sum = sinks ? Math.exp(sinks[h] - m) : 0;
    for (const [, x] of scores) sum += Math.exp(x - m);
    const acc = new Float64Array(D);
    for (const [s, x] of scores) {
      const p = Math.exp(x - m) / sum;
      probs[row * S + s] = p;
      for (let d = 0; d < D; d++) acc[d] += p * v[((b * Hkv + g) * S + s) * D + d];
    }
    out.set(acc, row * D);
  }
  return { out, probs };
}

test('every case\'s inputs come back, a faithful answer passes every check, one value 1e-3 off fails', () => {
  const cases = json(checks.kernelCases());
  assert.equal(cases.length, 16);
  for (const kernelCase of cases) {
    const inputs = checks.kernelInputs(kernelCase.id);
    const { out, probs } = attention(kernelCase.shape, inputs);
    const records = json(checks.checkKernelOutput(kernelCase.id, 'javascript', out, probs));
    assert.deepEqual(records.filter((r) => !r.passed).map((r) => r.name), [], kernelCase.id);
    assert.equal(records.length, 4);
  }
  const kernelCase = cases.find((c) => c.id === 'tinyllama-group8');
  const { out } = attention(kernelCase.shape, checks.kernelInputs(kernelCase.id));
  out[100] += 1e-3;
  const [record] = json(checks.checkKernelOutput(kernelCase.id, 'javascript', out, null));
  assert.equal(record.name, 'out_matches_core');
  assert.equal(record.passed, false);
  assert.deepEqual(checks.kernelInputs('no-such-case'), { error: "unknown kernel case 'no-such-case'" });
});

test('attn verify\'s suite by replay completes in 3 rounds with every check passing; bad input gets words', () => {
  for (const sinks of [false, true]) {
    const suite = new checks.DeviceSuite({ sinks });
    let round, rounds = 0;
    while (!(round = json(suite.run())).complete) {
      rounds += 1;
      assert.ok(rounds <= 3, 'more rounds than layers + 1');
      for (let i = 0; i < round.requests; i++) {
        const request = suite.request(i);
        const { out, probs } = attention(request.shape, request);
        assert.deepEqual(json(suite.answer(request.key, out, request.shape.T === 1 ? null : probs)), {});
      }
    }
    assert.equal(rounds + 1, 3);
    assert.deepEqual(round.checks.map((c) => c.id), ['a', 'b', 'd', 'e1', 'e2', 'e3', 'f2', 'g', 'h2']);
    assert.deepEqual(round.checks.filter((c) => !c.passed).map((c) => c.id), [], `sinks: ${sinks}`);
    assert.deepEqual(json(suite.answer('0000000000000000', new Float32Array(1), null)),
      { error: "no attention was asked for under the key '0000000000000000'" });
    assert.match(suite.request(99).error, /^no request 99 in this round$/);
    suite.delete();
  }
  const refused = new checks.DeviceSuite({ sink: true });
  assert.match(json(refused.run()).error, /^unknown option 'sink' \(expected sinks\)$/);
  refused.delete();
});
