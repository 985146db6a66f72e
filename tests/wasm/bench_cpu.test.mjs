// benchCpu() in the wasm build: the quick benchmark runs under Node, every kernel
// passes the same validation as natively (fp64 reference, 2x the fp32 reference's
// error + 1e-6) before it is timed, and bad options come back as {error}.
//
// Run by ctest (which sets ANATOMY_WASM_DIR), or by hand:
//   node --test tests/wasm/bench_cpu.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { loadBench } from './load_core.mjs';

test('benchCpu quick: every attention row validated, then timed', async () => {
  const core = await loadBench();
  const report = JSON.parse(core.benchCpu(JSON.stringify({ quick: true, model: false })));
  assert.equal(report.error, undefined, report.error);
  assert.equal(report.build.platform, 'wasm');
  assert.equal(report.kernel_isa, 'wasm-simd128');
  // The ceiling, then 2 prefill + 2 decode cases x 5 kernels, 2 recompute cases x 4 kernels.
  const [ceiling, ...attention] = report.rows;
  assert.deepEqual([ceiling.case, ceiling.kernel], ['ceiling', 'multiply_add']);
  assert.ok(ceiling.gflops > 0);
  assert.equal(attention.length, 2 * 5 + 2 * 5 + 2 * 4);
  for (const row of attention) {
    const where = `${row.case} T=${row.T} S=${row.S} ${row.kernel}`;
    assert.ok(row.validation.passed, `${where}: ${JSON.stringify(row.validation)}`);
    assert.ok(row.validation.max_error <= row.validation.tolerance, where);
    assert.ok(row.ms > 0, where);
  }
});

test('benchCpu rejects unknown options and bad JSON with a message', async () => {
  const core = await loadBench();
  assert.match(JSON.parse(core.benchCpu('{"quick": true, "tokens": 3}')).error, /unknown bench option 'tokens'/);
  assert.match(JSON.parse(core.benchCpu('{"quick": ')).error, /not valid JSON/);
  assert.match(JSON.parse(core.benchCpu('{"kernels": ["fastest"]}')).error, /fastest/);
});
