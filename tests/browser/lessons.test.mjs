// The chapter widgets soft-lookup, rope (RoPE), cost and source-reader in headless
// Chromium, checked against what the maths says they must show:
//
//   soft-lookup  moving the query (keyboard and mouse) changes the weights; the weights
//       add up to 1 (to 1e-9: the core's softmax in float64); at the largest
//       scale the key with the largest q.k gets > 0.999; at the smallest every
//       key gets 1/N to within 5 % (scores of about ±3, times 0.01, move e^s by
//       about 3 %); keys can be added and removed; the view comes back from the URL.
//   rope  q.k after RoPE is the same along every diagonal m - n: the spread is
//       < 1e-5 (the core rotates in float64, so it is ~1e-15 in practice); running
//       the half-split weights with interleaved pairing leaves row 0 exactly
//       unchanged (nothing turns at position 0) and changes every later row;
//       hovering the angle heatmap gives the angle in radians.
//   cost  d = T = 4096: projections 549,755,813,888 and QK^T + PV 274,877,906,944,
//       crossover 8192; with 8 KV heads the crossover is 4096 + 1024 = 5120;
//       bad input (d < 1, heads not divisible) gets a message, not numbers.
//   refusals  a value outside -9..9 in soft-lookup is refused with its range (never clamped);
//       rope's status line follows what part b shows (the model's q and k or yours)
//       across the button and layer or head changes, a lone id of 1000 is out of range,
//       absurd q entries are refused; cost refuses a width the heads do not divide
//       (no fractional d_kv) and says "1 KV head"; at 360 px the RoPE angle rows stay
//       at least 12 px high and no cost-chart label lies on a line.
//   source-reader  the source reader shows an operation's shape contract, as its header
//       declares it, above the code; a view of decoder_layer()'s calls shows none.
// Each widget's host carries data-updated-ms, the time its last update took;
// the tests print it after each interaction.
//
// Run by ctest, or by hand after building the page:
//   (cd web && npm ci && npm run build) && node --test tests/browser/lessons.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import fs from 'node:fs';
import path from 'node:path';
import { assertNoProblems, openPage, repoRoot, startSite, waitForWidget } from './harness.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

/** Opens `pageName` (with `query`), waits for widget `name` and checks it started. */
async function openWidget(t, pageName, name, query = '') {
  const opened = await openPage(site.browser, site.url(pageName + query));
  t.after(opened.close);
  const widget = await waitForWidget(opened.page, name, 15000);
  assert.ok(widget, `${pageName} has no [data-widget="${name}"]`);
  assert.equal(widget.ready, 'true', `${name} did not start: ${widget.message}`);
  return opened;
}

/** The widget's data-updated-ms, printed with what was done. */
async function reportTime(page, name, what) {
  const ms = await page.$eval(`[data-widget="${name}"]`, (host) => Number(host.dataset.updatedMs));
  assert.ok(Number.isFinite(ms) && ms >= 0, `${name} has no data-updated-ms after ${what}`);
  console.log(`  ${name} ${what}: updated in ${ms.toFixed(2)} ms`);
  return ms;
}

/** Sets a range or number input by script and fires input + change, as a user's change would. */
function setInput(page, testid, value) {
  return page.getByTestId(testid).evaluate((node, value) => {
    node.value = String(value);
    node.dispatchEvent(new Event('input', { bubbles: true }));
    node.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
}

// ---------------------------------------------------------------- soft-lookup

const softLookupWeights = (page) => page.$$eval('[data-testid^="soft-lookup-weight-"]', (cells) => cells.map((c) => Number(c.dataset.value)));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const maxChange = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

/** The query and keys as the plane shows them, and the key with the largest q.k. */
async function softLookupPoints(page) {
  return page.evaluate(() => {
    const point = (node) => ({ x: Number(node.dataset.x), y: Number(node.dataset.y) });
    const query = point(document.querySelector('[data-testid="soft-lookup-query"]'));
    const keys = [...document.querySelectorAll('[data-testid^="soft-lookup-key-"]')].map(point);
    const dots = keys.map((k) => query.x * k.x + query.y * k.y);
    return { query, keys, best: dots.indexOf(Math.max(...dots)) };
  });
}

describe('soft-lookup soft lookup', () => {
  test('moving the query changes the weights, which add up to 1', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'soft-lookup');
    const first = await softLookupWeights(page);
    assert.ok(first.length >= 2, 'no weights shown');
    assert.ok(Math.abs(sum(first) - 1) < 1e-9, `weights add up to ${sum(first)}`);

    // Keyboard: ten steps left.
    await page.getByTestId('soft-lookup-query').focus();
    for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowLeft');
    const keyed = await softLookupWeights(page);
    assert.ok(maxChange(first, keyed) > 1e-3, `arrow keys left the weights at ${keyed}`);
    assert.ok(Math.abs(sum(keyed) - 1) < 1e-9, `weights add up to ${sum(keyed)} after arrow keys`);
    assert.equal((await softLookupPoints(page)).query.x, 0.2, 'ten steps of 0.1 left from x = 1.2');
    await reportTime(page, 'soft-lookup', 'arrow key');

    // Mouse: drag the query down and left.
    const box = await page.getByTestId('soft-lookup-query').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x - 80, box.y + 120, { steps: 6 });
    await page.mouse.up();
    const dragged = await softLookupWeights(page);
    const { query } = await softLookupPoints(page);
    assert.ok(query.x < 0.2 && query.y < 0.6, `the drag left the query at (${query.x}, ${query.y})`);
    assert.ok(maxChange(keyed, dragged) > 1e-3, 'dragging left the weights unchanged');
    assert.ok(Math.abs(sum(dragged) - 1) < 1e-9, `weights add up to ${sum(dragged)} after the drag`);
    await reportTime(page, 'soft-lookup', 'drag');
    assertNoProblems(problems, 'notebook.html');
  });

  test('a large scale gives a hard lookup, a small one the mean', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'soft-lookup');
    await setInput(page, 'soft-lookup-scale', 2); // log10(scale): 100
    const { best, keys } = await softLookupPoints(page);
    const sharp = await softLookupWeights(page);
    assert.ok(sharp[best] > 0.999, `at scale 100 the largest-q·k key ${best} has weight ${sharp[best]} (${sharp})`);
    await reportTime(page, 'soft-lookup', 'scale 100');

    await setInput(page, 'soft-lookup-scale', -2); // 0.01
    const flat = await softLookupWeights(page);
    const n = keys.length;
    assert.ok(flat.every((w) => Math.abs(w - 1 / n) < 0.05 / n), `at scale 0.01 the weights are ${flat}, not about 1/${n}`);
    // ... and the mix is then close to the plain mean row.
    const [mixed, mean] = await Promise.all(['soft-lookup-mixed', 'soft-lookup-mean'].map((id) =>
      page.getByTestId(id).evaluate((row) => JSON.parse(row.dataset.value))));
    assert.ok(maxChange(mixed, mean) < 0.02, `mix ${mixed} is far from the mean ${mean} at scale 0.01`);
    assertNoProblems(problems, 'notebook.html');
  });

  test('keys can be added and removed, and the view lives in the URL', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'soft-lookup', '?soft-lookup.q=-1,1.5&soft-lookup.s=10');
    const { query } = await softLookupPoints(page);
    assert.deepEqual(query, { x: -1, y: 1.5 }, 'the query did not come from the URL');
    const n = (await softLookupWeights(page)).length;
    await page.getByTestId('soft-lookup-add').click();
    assert.equal((await softLookupWeights(page)).length, n + 1, 'Add a key did not add one');
    await page.getByTestId('soft-lookup-key-0').focus();
    await page.keyboard.press('Delete');
    const after = await softLookupWeights(page);
    assert.equal(after.length, n, 'Delete on a focused key did not remove it');
    assert.ok(Math.abs(sum(after) - 1) < 1e-9);
    // The URL is written at most every 250 ms, later on a busy machine.
    await page.waitForFunction((n) => new URLSearchParams(location.search).get('soft-lookup.k')?.split(';').length === n, n);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('soft-lookup.k').split(';').length, n, `soft-lookup.k in the URL: ${url.searchParams.get('soft-lookup.k')}`);
    assert.equal(url.searchParams.get('soft-lookup.s'), '10');
    assertNoProblems(problems, 'notebook.html');
  });

  test('a value outside -9..9 is refused with its range, not clamped', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'soft-lookup');
    const mixed = () => page.getByTestId('soft-lookup-mixed').evaluate((row) => row.dataset.value);
    const status = page.getByTestId('soft-lookup-status');
    const field = page.getByTestId('soft-lookup-value-0-0');
    const before = await mixed();
    await field.fill('32');
    assert.equal(await field.getAttribute('aria-invalid'), 'true', '32 was taken');
    assert.equal(await status.getAttribute('role'), 'alert');
    assert.match(await status.textContent(), /from -9 to 9, not "32"\. Still showing number 1 of k1's value = 1, the last valid value\./);
    assert.equal(await mixed(), before, 'the lookup changed while the field holds a refused value');
    // Moving the query recomputes with the value in use, and the message stays.
    await page.getByTestId('soft-lookup-query').focus();
    await page.keyboard.press('ArrowLeft');
    assert.equal(await status.getAttribute('role'), 'alert', 'moving the query hid the problem');
    await field.fill('-0.5');
    assert.equal(await field.getAttribute('aria-invalid'), null);
    assert.equal(await status.getAttribute('role'), 'status');
    assert.notEqual(await mixed(), before);
    assertNoProblems(problems, 'notebook.html (soft-lookup range)');
  });
});

// ---------------------------------------------------------------- rope

const ropeDeviation = (page) => page.getByTestId('rope-deviation').evaluate((node) => Number(node.dataset.value));
const ropeRowMax = (page) => page.getByTestId('rope-pairing-readout').evaluate((node) => JSON.parse(node.dataset.rowMax));

describe('rope RoPE', () => {
  test('q·k after RoPE depends only on the offset m − n', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope');
    const deviation = await ropeDeviation(page);
    assert.ok(Number.isFinite(deviation) && deviation < 1e-5, `spread along a diagonal: ${deviation}`);
    console.log(`  rope diagonal spread with the model's q and k: ${deviation.toExponential(2)}`);

    // Any q and k: the identity is about rotations, not about these vectors.
    await page.getByTestId('rope-q').fill('1, -2, 0.5, 3, 0, 1, -1, 2');
    await page.getByTestId('rope-k').fill('0.3, 0.3, -4, 1, 2, -0.5, 0, 1');
    const own = await ropeDeviation(page);
    assert.ok(own < 1e-5, `spread along a diagonal with typed vectors: ${own}`);
    await reportTime(page, 'rope', 'typed k');
    await page.getByTestId('rope-q').fill('1, 2, 3');
    assert.match(await page.getByTestId('rope-status').textContent(), /8 numbers/, 'a short q gets no message');
    assert.equal(await page.getByTestId('rope-status').getAttribute('role'), 'alert');
    assertNoProblems(problems, 'index.html');
  });

  test('interleaved pairing on half-split weights: row 0 unchanged, later rows changed', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope');
    for (const layer of ['0', '1']) {
      await page.getByTestId('rope-layer').selectOption(layer);
      const rows = await ropeRowMax(page);
      assert.equal(rows[0], 0, `layer ${layer}: row 0 changed by ${rows[0]}`);
      for (let r = 1; r < rows.length; r++) assert.ok(rows[r] > 1e-6, `layer ${layer}: row ${r} did not change (${rows[r]})`);
      await reportTime(page, 'rope', `layer ${layer}`);
    }
    await page.getByTestId('rope-tokens').fill('7,7,7,7,7');
    const rows = await ropeRowMax(page);
    assert.equal(rows.length, 5);
    assert.equal(rows[0], 0);
    await reportTime(page, 'rope', 'new tokens (two forward passes)');
    assertNoProblems(problems, 'index.html');
  });

  test('the angle heatmap and clocks give exact angles', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope');
    // Keyboard on the angle heatmap: one step right is pair 0, position 1, angle 1 rad.
    const canvas = page.getByTestId('rope-angles').locator('canvas.heatmap-canvas');
    await canvas.focus();
    await page.keyboard.press('ArrowRight');
    const readout = await page.getByTestId('rope-angles').locator('.heatmap-readout').textContent();
    assert.match(readout, /pair 0 .*position 1: angle .*= 1\.000000 rad/, readout);
    // Hover: the tooltip says the same kind of thing.
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + box.width - 10, box.y + box.height - 10);
    const tooltip = page.getByTestId('rope-angles').locator('.heatmap-tooltip');
    assert.match(await tooltip.textContent(), /pair 3 .*position 31: angle .* rad/);
    await setInput(page, 'rope-clock-position', 31);
    assert.match(await page.getByTestId('rope-clocks').textContent(), /31\.000 rad/, 'pair 0 at position 31 turned 31 rad');
    await reportTime(page, 'rope', 'clock position');
    assertNoProblems(problems, 'index.html');
  });

  test('the view comes back from the URL and goes back into it', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope', '?rope.tokens=1,2,3&rope.layer=1&rope.head=3&rope.show=mod&rope.p=12');
    assert.equal(await page.getByTestId('rope-tokens').inputValue(), '1,2,3');
    assert.equal(await page.getByTestId('rope-layer').inputValue(), '1');
    assert.equal(await page.getByTestId('rope-head').inputValue(), '3');
    assert.equal(await page.getByTestId('rope-show').inputValue(), 'mod');
    assert.equal(await page.getByTestId('rope-clock-position').inputValue(), '12');
    const rows = await ropeRowMax(page);
    assert.equal(rows.length, 3);
    assert.equal(rows[0], 0);
    await page.getByTestId('rope-head').selectOption('2');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('rope.head') === '2');
    assert.equal(new URL(page.url()).searchParams.get('rope.head'), '2');
    assertNoProblems(problems, 'index.html');
  });

  test('the status line says whose q and k part b shows', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope');
    const status = page.getByTestId('rope-status');
    const text = () => status.textContent();
    await page.getByTestId('rope-q').fill('1, -2, 0.5, 3, 0, 1, -1, 2');
    assert.match(await text(), /your own q/);
    await page.getByTestId('rope-use-model').click();
    assert.doesNotMatch(await text(), /your own/, 'the button went back to the model, the status line did not');
    assert.match(await text(), /Part b shows the model's q and k from layer 0, head 0\./);
    await page.getByTestId('rope-layer').selectOption('1');
    await page.getByTestId('rope-head').selectOption('2');
    assert.match(await text(), /Part b shows the model's q and k from layer 1, head 2\./);
    await page.getByTestId('rope-k').fill('0.3, 0.3, -4, 1, 2, -0.5, 0, 1');
    await page.getByTestId('rope-head').selectOption('3');
    assert.match(await text(), /part c shows layer 1, head 3\. Part b shows your own q and k/);
    assertNoProblems(problems, 'index.html (rope status)');
  });

  test('absurd q entries and a lone out-of-range id are refused with the range', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'rope');
    const status = page.getByTestId('rope-status');
    const text = () => status.textContent();
    // Absurd entries are refused, with the range; the readout never reaches 1e+285.
    await page.getByTestId('rope-q').fill('1e140, 1, 1, 1, 1, 1, 1, 1');
    assert.equal(await status.getAttribute('role'), 'alert');
    assert.match(await text(), /q's number 1 is 1e140: each number must be from −1000 to 1000\./);
    assert.doesNotMatch(await page.getByTestId('rope-deviation').textContent(), /e\+/);

    // A lone id of 1000: out of range, with the range, not "type at least two ids".
    await page.getByTestId('rope-tokens').fill('1000');
    assert.match(await text(), /"1000" is not a token id: it is out of range, ids are whole numbers from 0 to \d+\./);
    assert.doesNotMatch(await text(), /at least/);
    assertNoProblems(problems, 'index.html (rope ranges)');
  });

  test('at 360 px the angle heatmap keeps rows at least 12 px high', async (t) => {
    const opened = await openPage(site.browser, site.url('index.html'), { width: 360, height: 800 });
    t.after(opened.close);
    const { page, problems } = opened;
    await waitForWidget(page, 'rope', 15000);
    const canvas = page.locator('[data-testid^="rope-angles"]:not([hidden]) canvas.heatmap-canvas');
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    const tooltip = page.locator('[data-testid^="rope-angles"]:not([hidden]) .heatmap-tooltip');
    // Down the last column, a pixel at a time: how many pixels each cell's tooltip lasts.
    const runs = [];
    let last = null;
    for (let y = Math.ceil(box.y) + 1; y < Math.min(box.y + box.height, box.y + 140); y++) {
      await page.mouse.move(box.x + box.width - 6, y);
      const text = (await tooltip.isVisible()) ? await tooltip.textContent() : null;
      if (text !== null && text === last) runs[runs.length - 1] += 1;
      else if (text !== null) runs.push(1);
      last = text;
    }
    assert.ok(runs.length >= 2, `the tooltip named ${runs.length} cells down the last column`);
    const rowPx = Math.max(...runs);
    console.log(`  rope angle heatmap at 360 px: rows ${rowPx} px high`);
    assert.ok(rowPx >= 12, `rows of ${rowPx} px at 360 px`);
    assertNoProblems(problems, 'index.html (rope at 360 px)');
  });
});

// ---------------------------------------------------------------- cost

const cell = (page, testid) => page.getByTestId(testid).evaluate((node) => ({ text: node.textContent, value: Number(node.dataset.value) }));

describe('cost cost', () => {
  test('d = T = 4096: the worked numbers and the crossover', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'cost');
    assert.equal((await cell(page, 'cost-projections')).text, '549,755,813,888');
    assert.equal((await cell(page, 'cost-attention')).text, '274,877,906,944');
    const crossover = await cell(page, 'cost-crossover');
    assert.equal(crossover.value, 8192);
    assert.equal(crossover.text.replace(/,/g, ''), '8192');
    assert.match(await page.getByTestId('cost-chart').locator('svg').getAttribute('aria-label'), /cross at T = 8,192/);
    assert.equal((await cell(page, 'cost-decode-bytes')).text, '67,108,864'); // 2 * 4096 * 4096 * 2 bytes
    await reportTime(page, 'cost', 'first draw');

    await page.getByTestId('cost-kv').fill('8');
    const gqa = await cell(page, 'cost-crossover');
    assert.equal(gqa.value, 5120, `with 8 KV heads the crossover is ${gqa.value}`);
    assert.equal(gqa.text.replace(/,/g, ''), '5120');
    assert.equal((await cell(page, 'cost-projections')).text, '343,597,383,680'); // 2Td(2d + 2d/4)
    assert.equal((await cell(page, 'cost-attention')).text, '274,877,906,944');   // GQA leaves 4T^2 d alone
    await reportTime(page, 'cost', 'KV heads 8');
    assertNoProblems(problems, 'notebook.html');
  });

  test('bad input gets a message', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'cost');
    const status = page.getByTestId('cost-status');
    await page.getByTestId('cost-d').fill('0');
    assert.match(await status.textContent(), /model width d must be a whole number from 1/);
    assert.equal(await status.getAttribute('role'), 'alert');
    assert.equal(await page.getByTestId('cost-d').getAttribute('aria-invalid'), 'true');
    await page.getByTestId('cost-d').fill('4096');
    await page.getByTestId('cost-kv').fill('7');
    assert.match(await status.textContent(), /multiple of n_kv_heads/);
    assert.equal((await cell(page, 'cost-crossover')).value, 8192, 'a bad input must leave the last good numbers');
    await page.getByTestId('cost-kv').fill('16');
    assert.equal(await status.getAttribute('role'), 'status');
    assert.equal((await cell(page, 'cost-crossover')).value, 6144);
    await page.waitForFunction(() => new URLSearchParams(location.search).get('cost.kv') === '16');
    assert.equal(new URL(page.url()).searchParams.get('cost.kv'), '16');
    assertNoProblems(problems, 'notebook.html');
  });

  test('a width the query heads do not divide is refused; no fractional widths', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'cost');
    const status = page.getByTestId('cost-status');
    await page.getByTestId('cost-kv').fill('8');
    for (const d of ['1', '100']) {
      await page.getByTestId('cost-d').fill(d);
      assert.equal(await status.getAttribute('role'), 'alert', `d = ${d} was taken`);
      assert.match(await status.textContent(), new RegExp(`d = ${d} does not split evenly into 32 query heads: .*Make d a multiple of 32 \\(e\\.g\\. \\d+ or \\d+\\)`));
      assert.match(await status.textContent(), /Still showing d = 4,096, query heads = 32, KV heads = 8 and T = 4,096, the last valid values\./);
      assert.equal(await page.getByTestId('cost-d').getAttribute('aria-invalid'), 'true');
      assert.equal((await cell(page, 'cost-crossover')).value, 5120, `d = ${d} changed the numbers`);
    }
    // Still responsive; every width shown is whole.
    await page.getByTestId('cost-d').fill('96');
    assert.equal(await status.getAttribute('role'), 'status');
    assert.match(await status.textContent(), /each head is d \/ n_heads = 3 wide, so K and V are d_kv = 3 · 8 = 24 wide/);
    assert.doesNotMatch(await page.locator('[data-widget="cost"]').textContent(), /d_kv = \d*\.\d/);
    await page.getByTestId('cost-heads').fill('1');
    await page.getByTestId('cost-kv').fill('1');
    assert.match(await status.textContent(), /1 query head, 1 KV head:/);
    assertNoProblems(problems, 'notebook.html (cost widths)');
  });

  test('at 360 px no chart label lies on a line', async (t) => {
    const opened = await openPage(site.browser, site.url('notebook.html'), { width: 360, height: 800 });
    t.after(opened.close);
    const { page, problems } = opened;
    await waitForWidget(page, 'cost', 15000);
    for (const chart of ['cost-chart', 'cost-decode-chart']) {
      await page.getByTestId(chart).scrollIntoViewIfNeeded();
      const found = await page.getByTestId(chart).evaluate((root) => {
        const svg = root.querySelector('svg');
        const labels = [...svg.querySelectorAll('text.chart-line-label, text.chart-marker-label')]
          .map((node) => ({ text: node.textContent, box: node.getBoundingClientRect() }));
        const hits = [];
        for (const line of svg.querySelectorAll('path.chart-line, line.chart-marker')) {
          const ctm = line.getScreenCTM(), length = line.getTotalLength();
          for (let at = 0; at <= length; at += 1) {
            const p = line.getPointAtLength(at).matrixTransform(ctm);
            for (const { text, box } of labels)
              if (p.x > box.left + 1 && p.x < box.right - 1 && p.y > box.top + 1 && p.y < box.bottom - 1) hits.push(text);
          }
        }
        return { labels: labels.map((l) => l.text), hits: [...new Set(hits)] };
      });
      assert.ok(found.labels.length >= 3, `${chart} has labels ${found.labels}`);
      assert.deepEqual(found.hits, [], `${chart}: labels on a line at 360 px`);
    }
    assertNoProblems(problems, 'notebook.html (cost at 360 px)');
  });
});

// ---------------------------------------------------------------- source-reader
describe('source-reader source reader', () => {
  test('fetches a file\'s text when it first shows it, and shows the core\'s file as it is', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'source-reader', '?source-reader.op=gqa_scores');
    const widget = page.locator('[data-widget="source-reader"]');
    const sourceFiles = () => page.evaluate(() => performance.getEntriesByType('resource')
      .map((r) => r.name.split('/').pop()).filter((f) => f.startsWith('core-source-')));
    assert.deepEqual((await sourceFiles()).map((f) => f.replace(/-[^-]+\.js$/, '')), ['core-source-attention'],
      'only the shown file\'s text is fetched');
    const shown = async () => ({
      file: await widget.locator('.source-reader-file').textContent(),
      lines: await widget.locator('.source-reader-line .source-reader-lc').allTextContents(),
    });
    const matchesCore = ({ file, lines }) => {
      const text = fs.readFileSync(path.join(repoRoot, file), 'utf8').replace(/\n$/, '').split('\n');
      assert.deepEqual(lines, text, `${file} as the reader shows it`);
    };
    matchesCore(await shown());
    assert.ok(await widget.locator('mark.source-reader-line').count() > 0, 'the operation\'s lines are highlighted');

    await widget.getByRole('option', { name: 'RoPE' }).click();
    await page.waitForFunction(() => document.querySelector('[data-widget="source-reader"] .source-reader-file')?.textContent === 'core/ops/rope.cpp'
      && document.querySelector('[data-widget="source-reader"] .source-reader-code')?.getAttribute('aria-busy') === null);
    matchesCore(await shown());
    assert.equal((await sourceFiles()).length, 2, 'one more file fetched');
    assertNoProblems(problems, 'index.html');
  });

  test('says so in place of the code when a file cannot be fetched', async (t) => {
    const { page, problems, close } = await openPage(site.browser, site.url('index.html?source-reader.op=rope'));
    t.after(close);
    await page.route('**/core-source-rope-*.js', (route) => route.abort());
    await page.reload();
    await page.locator('[data-widget="source-reader"]').scrollIntoViewIfNeeded();
    const message = page.locator('[data-widget="source-reader"] .source-reader-code .status.error');
    await message.waitFor({ timeout: 15_000 });
    assert.match(await message.textContent(), /^Could not load core\/ops\/rope\.cpp: /);
    // The rest of the reader still works.
    await page.locator('[data-widget="source-reader"]').getByRole('option', { name: 'RMSNorm' }).click();
    await page.waitForFunction(() => document.querySelector('[data-widget="source-reader"] .source-reader-file')?.textContent === 'core/ops/rms_norm.cpp'
      && document.querySelector('[data-widget="source-reader"] .source-reader-line'));
    assert.deepEqual(problems.pageErrors, []);
  });
  test('shows the shape contract of the operation from its header', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'source-reader', '?source-reader.op=gqa_scores');
    const widget = page.locator('[data-widget="source-reader"]');
    const contracts = widget.locator('.source-reader-contract');
    assert.deepEqual(await contracts.allTextContents(), ['attention_scores() q: [B, Hq, T, dh], k: [B, Hkv, S, dh] -> [B, Hq, T, S]']);
    assert.match(await contracts.first().getAttribute('title'), /^Declared in core\/ops\/attention\.hpp, line \d+$/);
    // The call in decoder_layer() is a piece of decoder_layer.hpp, no function of its own: no contract.
    await widget.getByRole('button', { name: 'Call in decoder_layer()' }).click();
    assert.equal(await widget.locator('.source-reader-contracts').isHidden(), true);
    // RoPE's definition holds two functions with contracts.
    await widget.getByRole('option', { name: 'RoPE' }).click();
    const rope = await contracts.allTextContents();
    assert.deepEqual(rope.map((text) => text.split(' ')[0]), ['rope_angles()', 'apply_rope()']);
    assert.ok(rope.every((text) => /\[.*->.*\[/.test(text)), `RoPE's contracts: ${rope.join('; ')}`);
    assertNoProblems(problems, 'index.html');
  });
});
