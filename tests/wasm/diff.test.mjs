// attn diff in wasm (wasm/bindings_diff.cpp) is attn diff: on files made by the
// independent NumPy Llama (tests/diff/numpy_llama.py), correct ones and mistaken ones,
// from one pass and after 3 tokens through the KV cache, the wasm report and `attn diff --json` agree on
// every verdict (which tensors agree, the first divergence and its index, the mistake
// named) and on every error to 1e-9 relative (both run the forward in float64; their
// libm's exp and cos may differ in the last bit). Bad files answer {error}.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadTraceViewer } from './load_core.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const attn = process.env.ATTN || path.join(repo, 'build', 'native', 'native', 'attn');
const python = process.env.ANATOMY_PYTHON || '/usr/bin/python3';
const learner = path.join(repo, 'tests', 'diff', 'numpy_llama.py');
const tokens = [[1, 5, 9, 2, 7, 3, 11, 4], [3, 3, 8, 0, 14, 6, 2, 31]];
const tokenText = tokens.map((row) => row.join(',')).join(';');

function nativeReport(model, file, cached) {
  const run = spawnSync(attn, ['diff', '--checkpoint', model, '--tokens', tokenText, '--theirs', file, '--json', '--cached', String(cached)],
    { encoding: 'utf8' });
  assert.ok(run.status === 0 || run.status === 1, run.stderr);
  return JSON.parse(run.stdout);
}

// Errors at rounding level (1e-16, a correct file) differ in their own rounding: an absolute floor.
const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) + 1e-12;

test('the wasm diff gives attn diff\'s report on the same files', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anatomy-diff-'));
  try {
    const model = path.join(tmp, 'tiny');
    execFileSync(attn, ['export-checkpoint', model], { stdio: 'ignore' }); // seed 1, as the wasm default
    const module = await loadTraceViewer();
    // Every mistake the NumPy learner has, on the page's checkpoint (the seeded tiny model):
    // all but the two that need another checkpoint (eps 0.5; an lm_head of its own), which
    // the command line's tests cover. The cache's two after 3 cached tokens.
    const learnerFacts = JSON.parse(execFileSync(python, ['-c',
      'import json, sys; sys.path.insert(0, sys.argv[1]); import numpy_llama as n; ' +
      'print(json.dumps({"mistakes": list(n.MISTAKES), "cache": list(n.CACHE_MISTAKES), "cached": n.CACHED}))',
      path.dirname(learner)], { encoding: 'utf8' }));
    const otherCheckpoint = ['rmsnorm_eps_outside_sqrt', 'head_tied_to_embedding'];
    const cases = [['ok.npz', []], ['ok32.safetensors', [], 'float32'], ['cached.npz', [], 'float64', learnerFacts.cached],
      ...learnerFacts.mistakes.filter((m) => !otherCheckpoint.includes(m)).map((m, i) => [
        `${m}${i % 2 ? '.safetensors' : '.npz'}`, [m], i % 3 ? 'float64' : 'float32', learnerFacts.cache.includes(m) ? learnerFacts.cached : 0])];
    assert.ok(cases.length >= 14, `${cases.length} cases`);
    for (const [name, mistakes, dtype = 'float64', cached = 0] of cases) {
      const file = path.join(tmp, name);
      execFileSync(python, [learner, '--checkpoint', model, '--tokens', tokenText, '--out', file, '--dtype', dtype, '--cached', String(cached),
        ...(mistakes.length ? ['--mistake', ...mistakes] : [])]);
      const native = nativeReport(model, file, cached);
      const wasm = JSON.parse(module.diff(JSON.stringify({ tokens, cached }), new Uint8Array(fs.readFileSync(file))));
      assert.equal(wasm.error, undefined, `${name}: ${wasm.error}`);
      assert.equal(wasm.agrees, native.agrees, name);
      assert.equal(wasm.agrees, mistakes.length === 0, name);
      assert.deepEqual(wasm.diagnosis, native.diagnosis, name);
      if (mistakes.length) assert.equal(wasm.diagnosis?.mistake, mistakes[0], name);
      assert.deepEqual(wasm.not_given, native.not_given, name);
      assert.deepEqual(wasm.mistakes_tried, native.mistakes_tried, name);
      assert.deepEqual(wasm.first_divergence?.index, native.first_divergence?.index, name);
      assert.equal(wasm.first_divergence?.tensor, native.first_divergence?.tensor, name);
      assert.equal(wasm.compared.length, native.compared.length, name);
      wasm.compared.forEach((c, i) => {
        const n = native.compared[i];
        assert.deepEqual([c.name, c.precision, c.mismatches, c.agrees], [n.name, n.precision, n.mismatches, n.agrees], `${name} ${c.name}`);
        assert.ok(close(c.max_abs_error, n.max_abs_error), `${name} ${c.name}: ${c.max_abs_error} vs ${n.max_abs_error}`);
      });
    }
    // Bad input: the CLI's own messages, as {error}.
    const bad = (options, bytes) => JSON.parse(module.diff(JSON.stringify(options), bytes)).error;
    assert.match(bad({ tokens }, new Uint8Array([1, 2, 3])), /neither a NumPy \.npz archive nor a safetensors file/);
    assert.match(bad({ tokens: [[1, 99]] }, new Uint8Array(fs.readFileSync(path.join(tmp, 'ok.npz')))), /outside the vocabulary/);
    assert.match(bad({ tokens: [[1, 5, 9]] }, new Uint8Array(fs.readFileSync(path.join(tmp, 'ok.npz')))), /for 1 x 3 tokens it must be/);
    assert.match(bad({}, new Uint8Array(0)), /needs the tokens/);
    assert.match(bad({ tokens, cached: 8 }, new Uint8Array(fs.readFileSync(path.join(tmp, 'ok.npz')))), /leaves no token/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
