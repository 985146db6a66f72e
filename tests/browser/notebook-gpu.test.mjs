// The notebook's GPU figures in headless Chromium: on SwiftShader (a GPU emulated on the
// CPU) and in a Chromium that grants no adapter.
//
//   checks      "Run on your GPU" names the adapter and every check of every kernel passes
//   tiles       for every mask kind of the gallery, the flash kernel's own tile record
//               (skipped, partial, full) equals the gallery's counts tile for tile, and the
//               core's checks of the record and the output pass
//   row         the stepped row ends on the probabilities a softmax written here computes
//               from the core's inputs (the kernel's m and l, not the core's steps), and
//               stepping moves the formula
//   cost        eager and flash are each measured at three sizes or more, decode too, every
//               point checked against the core first; eager stops where its score matrix
//               would not fit, as said before trying
//   no adapter  the page says so in one sentence, the tile figure computes on the CPU
//               when asked, and the cost figure times the core's CPU kernels when asked
//               (three sizes or more each, each checked first); 0 console errors
//
// Without an adapter on the SwiftShader side the tests that need one print SKIPPED.
// SCREENSHOT_DIR=/some/dir saves the three figures as PNGs.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadKernelChecks } from '../../wasm/load-node.mjs';
import { assertNoProblems, openPage, startSite, webgpuArgs } from './harness.mjs';

const figure = (page, name) => page.locator(`[data-widget="${name}"]`);

/** Waits for "Run on your GPU" to end: no adapter, or its verdict. */
async function checked(page) {
  await figure(page, 'gpu-check').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => {
    const host = document.querySelector('[data-widget="gpu-check"]');
    return host?.dataset.gpu === 'none' || host?.dataset.failed !== undefined;
  }, null, { timeout: 240_000 });
  return figure(page, 'gpu-check').evaluate((host) => ({ ...host.dataset }));
}

async function saveScreenshot(locator, name) {
  if (!process.env.SCREENSHOT_DIR) return;
  await locator.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, `${name}.png`) });
}

/** The softmax of one row, written here: q . k / sqrt(D) over the row's visible keys. */
function rowSoftmax(inputs, T, S, D, row) {
  const [r0, r1, r2, r3] = inputs.ranges.slice(4 * row, 4 * row + 4);
  const sees = (s) => (s >= r0 && s < r1) || (s >= r2 && s < r3);
  const scores = Array.from({ length: S }, (_, s) => {
    if (!sees(s)) return null;
    let dot = 0;
    for (let d = 0; d < D; d++) dot += inputs.q[row * D + d] * inputs.k[s * D + d];
    return dot / Math.sqrt(D);
  });
  const top = Math.max(...scores.filter((x) => x !== null));
  const total = scores.reduce((sum, x) => sum + (x === null ? 0 : Math.exp(x - top)), 0);
  return scores.map((x) => (x === null ? 0 : Math.exp(x - top) / total));
}

/** The cost figure's points: eager and flash at three sizes or more and decode too, every one checked first. */
function assertCostFigure(shown, limit) {
  const points = JSON.parse(shown.points);
  for (const p of points.prefill) console.log(`prefill T = ${String(p.T).padStart(5)} ${p.role.padEnd(6)} ${p.ms.toFixed(2).padStart(9)} ms  ${(p.bytes / 2 ** 20).toFixed(1)} MiB  ${p.error === 0 ? 'checked' : 'FAILED'}`);
  for (const p of points.decode) console.log(`decode  S = ${String(p.S).padStart(5)} ${p.ms.toFixed(3).padStart(9)} ms  ${p.error === 0 ? 'checked' : 'FAILED'}`);
  console.log(limit);
  assert.equal(shown.done, 'true');
  for (const role of ['eager', 'flash']) {
    const sizes = points.prefill.filter((p) => p.role === role && p.error === 0 && p.ms > 0);
    assert.ok(sizes.length >= 3, `${role}: ${sizes.length} sizes`);
  }
  assert.ok(points.decode.filter((p) => p.error === 0 && p.ms > 0).length >= 3);
  assert.ok([...points.prefill, ...points.decode].every((p) => p.error === 0), 'every point passed its check');
  // Flash's memory grows linearly, eager's by T squared.
  const eager = points.prefill.filter((p) => p.role === 'eager');
  assert.ok(eager.at(-1).bytes / eager[0].bytes > (eager.at(-1).T / eager[0].T) ** 2 / 2);
}

describe('the notebook\'s GPU figures on a WebGPU device', () => {
  let site, opened, state;
  before(async () => {
    site = await startSite({ args: webgpuArgs });
    opened = await openPage(site.browser, site.url('notebook.html#your-gpu'));
    state = await checked(opened.page);
  });
  after(async () => {
    await opened?.close();
    await site?.close();
  });
  const needsAdapter = (t) => {
    if (state.gpu !== 'none') return false;
    console.log('SKIPPED: this Chromium grants no WebGPU adapter (--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader)');
    t.skip('no WebGPU adapter');
    return true;
  };

  test('Run on your GPU names the adapter, and every check passes', async (t) => {
    if (needsAdapter(t)) return;
    const { page } = opened;
    const named = await page.getByTestId('gpu-check-adapter').textContent();
    const summary = await page.getByTestId('gpu-check-summary').textContent();
    console.log(named);
    console.log(summary, `(${state.pageMs} ms after the notebook opened)`);
    assert.match(named, /^Running on \S+ \S+.*(f16|f32).*subgroups/);
    const rows = await page.$$eval('[data-testid="gpu-check-table"] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.ok(rows.length >= 100, `${rows.length} checks`);
    assert.deepEqual(rows.filter((r) => r[5] !== 'PASS').map((r) => r.join(' ')), []);
    assert.equal(state.failed, '0');
    assert.equal(Number(state.checks), rows.length);
    assert.match(summary, new RegExp(`^All ${rows.length} checks passed in \\d+\\.\\d s`));
    await saveScreenshot(figure(page, 'gpu-check'), 'gpu-check');
  });

  test('the flash kernel\'s own tiles equal the gallery\'s counts for every mask kind', async (t) => {
    if (needsAdapter(t)) return;
    const { page } = opened;
    await figure(page, 'mask-gallery').scrollIntoViewIfNeeded();
    await page.getByTestId('mask-gallery-kind').waitFor();
    await figure(page, 'flash-tiles').scrollIntoViewIfNeeded();
    const kinds = await page.$$eval('[data-testid="mask-gallery-kind"] option', (options) => options.map((o) => o.value));
    assert.ok(kinds.length >= 7, kinds.join());
    const lines = [];
    for (const kind of kinds) {
      await page.getByTestId('mask-gallery-kind').selectOption(kind);
      await page.waitForFunction(() => {
        const gallery = document.querySelector('[data-widget="mask-gallery"]').dataset.spec;
        const tiles = document.querySelector('[data-widget="flash-tiles"]');
        return (tiles.dataset.spec === gallery && tiles.dataset.agree !== undefined) || (tiles.dataset.gpu ?? 'passed') !== 'passed';
      }, null, { timeout: 60_000 });
      const shown = await figure(page, 'flash-tiles').evaluate((host) => ({ ...host.dataset }));
      assert.equal(shown.mode, 'gpu', `the figure runs on the GPU (its verdict: ${shown.gpu})`);
      const gallery = await page.$$eval(['skipped', 'partial', 'full'].map((s) => `[data-testid="mask-gallery-${s}"]`).join(','),
        (nodes) => nodes.map((n) => Number(n.textContent.replace(/\D/g, ''))));
      const kernel = JSON.parse(shown.kernelCounts);
      lines.push(`${kind.padEnd(16)} kernel ${kernel.skipped}/${kernel.partial}/${kernel.full}  gallery ${gallery.join('/')}  checks failed ${shown.checksFailed}`);
      assert.deepEqual([kernel.skipped, kernel.partial, kernel.full], gallery, kind);
      assert.equal(shown.agree, 'true', kind);
      assert.equal(shown.checksFailed, '0', kind);
      assert.match(await page.getByTestId('flash-tiles-agreement').textContent(), /they agree, tile for tile/);
    }
    console.log(`skipped/partial/full tiles, the kernel's record against the gallery:\n${lines.join('\n')}`);
    await page.getByTestId('mask-gallery-kind').selectOption('sliding_window');
    await page.waitForFunction(() => JSON.parse(document.querySelector('[data-widget="flash-tiles"]').dataset.spec ?? '{}').kind === 'sliding_window');
    await saveScreenshot(figure(page, 'flash-tiles'), 'flash-tiles');
  });

  test('the stepped row ends on the probabilities of a plain softmax computed here', async (t) => {
    if (needsAdapter(t)) return;
    const { page } = opened;
    const host = figure(page, 'flash-tiles');
    await host.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('[data-widget="flash-tiles"]').dataset.rowProbs !== undefined);
    const spec = JSON.parse(await host.getAttribute('data-spec'));
    const row = Number(await page.getByTestId('flash-tiles-row').inputValue());
    const probs = JSON.parse(await host.getAttribute('data-row-probs'));
    const { tile_q: _q, tile_k: _k, ...mask } = spec;
    const checks = await loadKernelChecks();
    const inputs = checks.kernelInputs({ shape: { B: 1, Hq: 1, Hkv: 1, T: spec.T, S: spec.S, D: 8 }, mask });
    const want = rowSoftmax(inputs, spec.T, spec.S, 8, row);
    const worst = Math.max(...want.map((p, s) => Math.abs(p - probs[s])));
    console.log(`row ${row} of ${spec.kind}: the kernel's m and l against a softmax written here, largest difference ${worst.toExponential(2)}`);
    assert.ok(worst <= 1e-5, `${worst}`);
    assert.match(await page.getByTestId('flash-tiles-ending').textContent(), /the same probabilities/);
    // Stepping back one tile shows that tile's numbers.
    const before = await page.getByTestId('flash-tiles-formula').textContent();
    await page.getByTestId('flash-tiles-prev').click();
    const label = await page.getByTestId('flash-tiles-step-label').textContent();
    const after = await page.getByTestId('flash-tiles-formula').textContent();
    assert.notEqual(after, before);
    assert.match(after, /^Tile \d+: keys \d+ to \d+/);
    assert.match(label, /^\d+ of \d+$/);
  });

  test('what attention costs: eager and flash at three sizes or more, and decode, each checked first', async (t) => {
    if (needsAdapter(t)) return;
    const { page, problems } = opened;
    const host = figure(page, 'gpu-cost');
    await host.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('[data-widget="gpu-cost"]')?.dataset.done !== undefined, null, { timeout: 280_000 });
    const shown = await host.evaluate((node) => ({ ...node.dataset }));
    const points = JSON.parse(shown.points);
    assertCostFigure(shown, await page.getByTestId('gpu-cost-limit').textContent());
    assert.equal(shown.engine, 'gpu');
    for (const id of ['eager', 'flash', 't-squared'])
      assert.equal(await page.locator(`[data-testid="gpu-cost-time-chart"] [data-series="${id}"]`).count(), 1, id);
    assert.equal(await page.locator('[data-testid="gpu-cost-decode-chart"] [data-series="decode"]').count(), 1);
    await saveScreenshot(host, 'gpu-cost');
    assertNoProblems(problems, 'notebook.html on SwiftShader');
  });
});

describe('the notebook in a browser that grants no WebGPU adapter', () => {
  test('it says so in one sentence, the tiles come from the CPU when asked, and no error reaches the console', async () => {
    const site = await startSite({ args: ['--disable-features=WebGPU'] });
    try {
      const { page, problems, close } = await openPage(site.browser, site.url('notebook.html#your-gpu'));
      const state = await checked(page);
      assert.equal(state.gpu, 'none');
      // The figure's sentence for a page without a GPU, and no other of its sentences.
      const said = await figure(page, 'gpu-check').locator('[data-when-gpu]:visible').allTextContents();
      console.log(said.join('\n'));
      assert.equal(said.length, 1);
      assert.match(said[0], /^No GPU here: [^.]*WebGPU[^.]*, so the figures below offer what the core computes on the CPU instead\.$/);
      await figure(page, 'flash-tiles').scrollIntoViewIfNeeded();
      await page.getByTestId('flash-tiles-cpu').click();
      await page.waitForFunction(() => document.querySelector('[data-widget="flash-tiles"]').dataset.rowProbs !== undefined, null, { timeout: 60_000 });
      const tiles = await figure(page, 'flash-tiles').evaluate((host) => ({ ...host.dataset }));
      assert.equal(tiles.mode, 'cpu');
      assert.equal(tiles.agree, 'true');
      assert.ok(Number(tiles.probsError) <= 1e-5, tiles.probsError);
      await figure(page, 'gpu-cost').scrollIntoViewIfNeeded();
      await page.waitForFunction(() => document.querySelector('[data-widget="gpu-cost"]').dataset.gpu === 'none');
      const costSaid = await figure(page, 'gpu-cost').locator('p.status[data-when-gpu]:visible').allTextContents();
      assert.equal(costSaid.length, 1);
      assert.match(costSaid[0], /^No GPU here: the figure can time the core's own kernels on your CPU instead/);
      // Asked, it times the core's CPU kernels, each checked first.
      await page.getByTestId('gpu-cost-cpu').click();
      await page.waitForFunction(() => document.querySelector('[data-widget="gpu-cost"]').dataset.done !== undefined, null, { timeout: 240_000 });
      const cost = await figure(page, 'gpu-cost').evaluate((host) => ({ ...host.dataset }));
      assert.equal(cost.engine, 'cpu');
      assertCostFigure(cost, await page.getByTestId('gpu-cost-limit').textContent());
      await saveScreenshot(figure(page, 'gpu-cost'), 'gpu-cost-cpu');
      assertNoProblems(problems, 'notebook.html without WebGPU');
      await close();
    } finally {
      await site.close();
    }
  });

  test('a link keeps the tile figure\'s state: the CPU asked for, the row and the key tile', async () => {
    const site = await startSite({ args: ['--disable-features=WebGPU'] });
    try {
      const query = 'mask-gallery.kind=sliding_window&flash-tiles.cpu=1&flash-tiles.row=40&flash-tiles.step=1';
      const { page, problems, close } = await openPage(site.browser, site.url(`notebook.html?${query}#masks`));
      await figure(page, 'flash-tiles').scrollIntoViewIfNeeded();
      await page.waitForFunction(() => document.querySelector('[data-widget="flash-tiles"]')?.dataset.rowProbs !== undefined, null, { timeout: 60_000 });
      assert.equal(await figure(page, 'flash-tiles').getAttribute('data-mode'), 'cpu');
      assert.equal(await page.getByTestId('flash-tiles-row').inputValue(), '40');
      assert.match(await page.getByTestId('flash-tiles-step-label').textContent(), /^2 of \d+$/);
      assert.match(await page.getByTestId('flash-tiles-formula').textContent(), /^Tile 1: keys 16 to 31/);
      // Stepping writes the new step to the URL.
      await page.getByTestId('flash-tiles-next').click();
      await page.waitForFunction(() => new URLSearchParams(location.search).get('flash-tiles.step') === '2');
      assertNoProblems(problems, 'notebook.html from a link, without WebGPU');
      await close();
    } finally {
      await site.close();
    }
  });
});
