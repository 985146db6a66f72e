// The WebGPU kernels (web/src/gpu/) on the GPU page, in headless Chromium on SwiftShader
// (a GPU emulated on the CPU), checked by the core (core/verify/kernel_cases.hpp):
//
//   checks     the page names the adapter, and every check of every kernel on every case
//              passes: outputs and probabilities against the core's fp64 reference, hidden
//              cells exactly 0, the flash kernel's tile record against the core's tile rule
//              and softmax for every mask kind; the log prints each check's error and tolerance
//   suite      attn verify's checks on the tiny model (with and without sinks) with its
//              attention on the device, in L + 1 rounds
//   broken     three broken kernels, built from the page's own sources, each fail the check
//              named for what they break: a key tile one key short (v1), a mask that admits
//              the next key (v0; and then attn verify's d and e3), a decode merge that
//              forgets to rescale its chunks (v2)
//   limits     a shape past the adapter's limits gets a sentence before anything is dispatched
//   no adapter a Chromium that grants none: the page says so in one sentence, no console error
//
// Without an adapter (a browser whose WebGPU is off) the tests that need one print SKIPPED
// and why. Run by ctest, or by hand after building the page:
//   scripts/build-web.sh && node --test tests/browser/webgpu.test.mjs
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertNoProblems, openPage, startSite, webgpuArgs } from './harness.mjs';

const done = (page) => page.waitForFunction(() => {
  const adapter = document.querySelector('#gpu-adapter');
  return adapter?.dataset.adapter === 'none' || /passed|FAILED/.test(document.querySelector('#gpu-suite-summary')?.textContent ?? '') ||
    /stopped/.test(adapter?.textContent ?? '');
}, null, { timeout: 240_000 });

/** Runs the page's checks again with one kernel source edited: `find` must occur exactly once. */
function checkBroken(page, { version, find, replace, cases }) {
  return page.evaluate(async ({ version, find, replace, cases }) => {
    const edit = (source, v) => {
      if (v !== version) return source;
      const count = source.split(find).length - 1;
      if (count !== 1) throw new Error(`the edit finds ${JSON.stringify(find)} ${count} times in ${v}`);
      return source.replace(find, replace);
    };
    const rows = await window.attentionAnatomyGpu.check({ versions: [version], cases, edit });
    return rows.map((r) => ({ case: r.kernelCase.id, name: r.record.name, passed: r.record.passed, error: r.record.max_abs_error, compares: r.record.compares }));
  }, { version, find, replace, cases });
}

describe('the WebGPU kernels, checked by the core', () => {
  let site, opened, adapter;
  before(async () => {
    site = await startSite({ args: webgpuArgs });
    opened = await openPage(site.browser, site.url('gpu.html'));
    await done(opened.page);
    adapter = await opened.page.$eval('#gpu-adapter', (node) => node.dataset.adapter);
  });
  after(async () => {
    await opened?.close();
    await site?.close();
  });
  const needsAdapter = (t) => {
    if (adapter !== 'none') return false;
    console.log('SKIPPED: this Chromium grants no WebGPU adapter (--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader)');
    t.skip('no WebGPU adapter');
    return true;
  };

  test('the page names the adapter, and every kernel passes every check on every case', async (t) => {
    if (needsAdapter(t)) return;
    const { page, problems } = opened;
    const named = await page.textContent('#gpu-adapter');
    console.log(named);
    assert.match(named, /^Running on \S+ \S+/);
    const rows = await page.$$eval('#gpu-checks tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    for (const [kernel, kase, check, error, tolerance, result] of rows)
      console.log(`${kernel.padEnd(10)} ${kase.padEnd(26)} ${check.padEnd(18)} ${error.padStart(10)} ${tolerance.padStart(12)}  ${result}`);
    console.log(await page.textContent('#gpu-summary'));
    assert.deepEqual(rows.filter((r) => r[5] !== 'PASS').map((r) => r.join(' ')), []);
    assert.ok(rows.every((r) => /^\d\.\d{3}e[+-]\d+$/.test(r[3])), 'every error is a finite number');
    // Every version ran; every mask kind's tile record was checked; eager's probabilities too.
    for (const version of ['v0_eager', 'v1_flash', 'v2_decode'])
      assert.ok(rows.some((r) => r[0] === version && r[2] === 'out_matches_core'), `${version} ran`);
    const tiled = new Set(rows.filter((r) => r[2] === 'tiles_as_core').map((r) => r[1]));
    for (const kase of ['tiny-causal', 'tiny-kv-offset', 'full', 'sliding-window', 'sink-window-sinks', 'prefix-lm', 'chunked', 'document'])
      assert.ok(tiled.has(kase), `the tile record on ${kase}`);
    assert.ok(rows.some((r) => r[0] === 'v0_eager' && r[2] === 'hidden_cells_zero'));
    assert.ok(rows.length >= 100, `${rows.length} checks`);
    assertNoProblems(problems, 'gpu.html on SwiftShader');
  });

  test('attn verify\'s checks pass on the tiny model with its attention on the device, in L + 1 rounds', async (t) => {
    if (needsAdapter(t)) return;
    const { page } = opened;
    const rows = await page.$$eval('#gpu-suite tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    for (const [model, id, check, error, tolerance, result] of rows)
      console.log(`${model.padEnd(12)} ${id.padEnd(3)} ${check.padEnd(30)} ${error.padStart(10)} ${tolerance.padStart(12)}  ${result}`);
    const summary = await page.textContent('#gpu-suite-summary');
    console.log(summary);
    assert.deepEqual(rows.filter((r) => r[0] === 'tiny').map((r) => r[1]), ['a', 'b', 'd', 'e1', 'e2', 'e3', 'f2', 'g', 'h2']);
    assert.deepEqual(rows.filter((r) => r[0] === 'tiny, sinks').map((r) => r[1]), ['a', 'b', 'd', 'e1', 'e2', 'e3', 'f2', 'g', 'h2']);
    assert.deepEqual(rows.filter((r) => r[5] !== 'PASS').map((r) => r.join(' ')), []);
    assert.match(summary, /^All 18 checks passed, in 3 and 3 rounds, on \d+ attentions computed on the GPU\.$/);
  });

  test('with a mask that admits the next key, attn verify\'s checks d and e3 fail on the device', async (t) => {
    if (needsAdapter(t)) return;
    const results = await opened.page.evaluate(async () => {
      const edit = (source, version) => (version === 'v0_eager' ? source.replace('key < ranges.y', 'key <= ranges.y') : source);
      const runs = await window.attentionAnatomyGpu.suite({ edit });
      return runs.map((r) => r.checks.filter((c) => !c.passed).map((c) => c.id));
    });
    console.log('attn verify with the leaking mask, failing:', JSON.stringify(results));
    assert.equal(results.length, 2);
    for (const failing of results) {
      assert.ok(failing.includes('d'), JSON.stringify(failing));
      assert.ok(failing.includes('e3'), JSON.stringify(failing));
    }
  });

  test('a key tile one key short fails v1_flash\'s output check', async (t) => {
    if (needsAdapter(t)) return;
    const rows = await checkBroken(opened.page, {
      version: 'v1_flash', find: 'let last = min(shape.S, first + BC);', replace: 'let last = min(shape.S, first + BC - 1u);',
      cases: ['tinyllama-group8', 'sliding-window'],
    });
    const failed = rows.filter((r) => !r.passed).map((r) => `${r.case} ${r.name}`);
    console.log('tile boundary off by one:', failed.join(', '));
    assert.ok(failed.includes('tinyllama-group8 out_matches_core'), JSON.stringify(rows));
  });

  test('a mask that admits the next key fails v0_eager\'s hidden-cells check', async (t) => {
    if (needsAdapter(t)) return;
    const rows = await checkBroken(opened.page, {
      version: 'v0_eager', find: 'key < ranges.y', replace: 'key <= ranges.y', cases: ['tiny-causal'],
    });
    const failed = rows.filter((r) => !r.passed).map((r) => `${r.case} ${r.name}`);
    console.log('a mask one key too wide:', failed.join(', '));
    assert.ok(failed.includes('tiny-causal hidden_cells_zero'), JSON.stringify(rows));
    assert.ok(failed.includes('tiny-causal out_matches_core'), JSON.stringify(rows));
  });

  test('a decode merge that forgets to rescale its chunks fails v2_decode\'s output check', async (t) => {
    if (needsAdapter(t)) return;
    const rows = await checkBroken(opened.page, {
      version: 'v2_decode', find: 'acc[d] += chunk_acc[at * DH + d] * rescale;', replace: 'acc[d] += chunk_acc[at * DH + d];',
      cases: ['decode-group8'],
    });
    const failed = rows.filter((r) => !r.passed).map((r) => `${r.case} ${r.name}`);
    console.log('a merge without the rescale:', failed.join(', '));
    assert.deepEqual(failed, ['decode-group8 out_matches_core'], JSON.stringify(rows));
  });

  test('a shape past the adapter\'s limits gets a sentence before any dispatch', async (t) => {
    if (needsAdapter(t)) return;
    const problems = await opened.page.evaluate(() => {
      const problem = window.attentionAnatomyGpu.problem;
      return {
        huge: problem('v0_eager', { B: 1, Hq: 32, Hkv: 4, T: 16384, S: 16384, D: 64 }),
        flash: problem('v1_flash', { B: 1, Hq: 32, Hkv: 4, T: 16384, S: 16384, D: 64 }),
        decode: problem('v2_decode', { B: 1, Hq: 32, Hkv: 4, T: 2, S: 100, D: 64 }),
        heads: problem('v1_flash', { B: 1, Hq: 6, Hkv: 4, T: 8, S: 8, D: 64 }),
        wide: problem('v1_flash', { B: 1, Hq: 4, Hkv: 4, T: 8, S: 8, D: 256 }),
      };
    });
    console.log(problems);
    assert.match(problems.huge, /^v0_eager needs 32768\.0 MiB for the score matrix \[B, Hq, T, S\]; this adapter's largest storage buffer is \d+\.\d MiB/);
    assert.equal(problems.flash, null, 'flash never writes the score matrix');
    assert.match(problems.decode, /one query per sequence \(T = 1\), not 2/);
    assert.match(problems.heads, /6 query heads do not divide among 4 KV heads/);
    assert.match(problems.wide, /head size 256 is over 128/);
  });
});

describe('a browser that grants no WebGPU adapter', () => {
  test('the page says so in one sentence, with no console error', async () => {
    const site = await startSite({ args: ['--disable-features=WebGPU'] });
    try {
      const { page, problems, close } = await openPage(site.browser, site.url('gpu.html'));
      await done(page);
      assert.equal(await page.$eval('#gpu-adapter', (node) => node.dataset.adapter), 'none');
      const said = await page.textContent('#gpu-adapter');
      console.log(said);
      assert.match(said, /no WebGPU|no WebGPU adapter/);
      assert.equal(await page.$$eval('#gpu-checks tbody tr', (rows) => rows.length), 0);
      assertNoProblems(problems, 'gpu.html without WebGPU');
      await close();
    } finally {
      await site.close();
    }
  });
});
