// The notebook chapter's module (attention_notebook: bindings_config, bindings_lessons and
// bindings_session, without the explorer's forward, the trace and the checks) against the
// chapters' core (attention_core), which links the same bindings: every export the notebook's
// widgets call answers each input, good or bad, with the same text, and the KV stepper's
// session reports the same steps. The forward, trace and checks are not in it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadCore, loadNotebook } from './load_core.mjs';

const [core, notebook] = await Promise.all([loadCore(), loadNotebook()]);
const tiny = core.config('tiny');

const calls = [
  ['config', 'tiny'],
  ['config', 'tinyllama-1.1b'],
  ['config', 'no-such-preset'],
  ['cachePayload', tiny],
  ['cachePayload', JSON.stringify({ ...JSON.parse(tiny), n_kv_heads: 3 })],
  ['cachePayload', '{not json'],
  ['maskTiles', JSON.stringify({ kind: 'causal', T: 64, S: 64 }), 16, 16],
  ['maskTiles', JSON.stringify({ kind: 'sliding_window', T: 100, S: 100, window: 7 }), 8, 32],
  ['maskTiles', JSON.stringify({ kind: 'causal', T: -1, S: 4 }), 16, 16],
  ['softLookup', JSON.stringify({ query: [1, 0.5], keys: [[1, 0], [0, 1], [0.3, 0.3]], values: [[1, 2], [3, 4], [5, 6]], scale: 0.7 })],
  ['softLookup', JSON.stringify({ query: [1], keys: [[1, 0]], values: [[1]], scale: 1 })],
  ['attentionCost', JSON.stringify({ d: 4096, T: 8192, n_heads: 32, n_kv_heads: 8, bytes_per_scalar: 2 })],
  ['attentionCost', JSON.stringify({ d: 30, T: 10, n_heads: 4, n_kv_heads: 2, bytes_per_scalar: 2 })],
  ['ropeAngles', JSON.stringify({ head_dim: 8, theta: 10000, positions: [0, 1, 5] })],
  ['buildInfo'],
];

test('each export the notebook calls answers as attention_core does, errors included', () => {
  for (const [name, ...args] of calls) {
    assert.equal(typeof notebook[name], 'function', `attention_notebook has no ${name}`);
    assert.deepEqual(notebook[name](...args), core[name](...args), `${name}(${args.join(', ')})`);
  }
  // Some of those inputs must be refused, or the comparison above proves little.
  assert.match(notebook.config('no-such-preset'), /"error"/);
  const refused = notebook.maskTiles(JSON.stringify({ kind: 'causal', T: -1, S: 4 }), 16, 16);
  assert.ok(refused.error || /"error"/.test(refused), `maskTiles took T = -1: ${JSON.stringify(refused)}`);
});

test("the KV stepper's decode session steps as attention_core's does", () => {
  const run = (module) => {
    const session = new module.DecodeSession(JSON.stringify({ seed: 1 }));
    const reports = [session.prefill(JSON.stringify({ tokens: [1, 5, 9] }))];
    for (const token of [3, 7, 31]) reports.push(session.step(JSON.stringify({ token })));
    reports.push(session.step(JSON.stringify({ token: 99 })));  // out of the vocabulary: an error
    session.delete();
    return reports;
  };
  const ours = run(notebook);
  assert.deepEqual(ours, run(core));
  assert.match(ours.at(-1), /"error"/);
  assert.equal(JSON.parse(ours[3]).error, undefined, ours[3]);
});

test('the explorer’s forward, the trace and the checks are left out', () => {
  for (const name of ['forward', 'trace', 'verify', 'exportCheckpoint']) {
    assert.equal(typeof core[name], 'function', `attention_core lost ${name}`);
    assert.equal(notebook[name], undefined, `attention_notebook has ${name}: it should be chapter 1's alone`);
  }
});
