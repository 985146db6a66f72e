// Training is deterministic across builds: the same 100 steps of AdamW on the tiny
// model (core/train/train_steps.hpp's training_bits) give the same losses, gradient
// norms and weights, bit for bit, natively (tests/unit/training_bits) and in wasm
// (attention_train). A run from another seed must differ, so the comparison can fail.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadTrain } from './load_core.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const native = process.env.TRAINING_BITS || path.join(repo, 'build', 'native', 'tests', 'unit', 'training_bits');

test('100 training steps give the same bits natively and in wasm', async () => {
  const module = await loadTrain();
  const wasm = JSON.parse(module.trainingBits(JSON.stringify({ seed: 5, steps: 100 })));
  assert.equal(wasm.error, undefined, wasm.error);
  const expected = JSON.parse(execFileSync(native, ['5', '100'], { encoding: 'utf8' }));
  assert.equal(wasm.losses.length, 100);
  assert.deepEqual(wasm.losses, expected.losses); // JSON prints doubles exactly: equal text, equal bits
  assert.deepEqual(wasm.norms, expected.norms);
  assert.equal(wasm.weights_hash, expected.weights_hash);
  assert.ok(wasm.losses.at(-1) < wasm.losses[0] / 10, `the loss fell from ${wasm.losses[0]} to ${wasm.losses.at(-1)}`);
  const other = JSON.parse(module.trainingBits(JSON.stringify({ seed: 6, steps: 100 })));
  assert.notEqual(other.weights_hash, expected.weights_hash);
  assert.notDeepEqual(other.losses, expected.losses);
  assert.match(JSON.parse(module.trainingBits('{"steps": 0}')).error, /steps must be 1 to 100000/);
});
