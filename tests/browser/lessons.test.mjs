// The chapter widgets W2 (soft lookup), W4 (RoPE), W6 (cost) and W7 (source reader) in headless
// Chromium, checked against what the maths says they must show:
//
//   W2  moving the query (keyboard and mouse) changes the weights; the weights
//       add up to 1 (to 1e-9: the core's softmax in float64); at the largest
//       scale the key with the largest q.k gets > 0.999; at the smallest every
//       key gets 1/N to within 5 % (scores of about ±3, times 0.01, move e^s by
//       about 3 %); keys can be added and removed; the view comes back from the URL.
//   W4  q.k after RoPE is the same along every diagonal m - n: the spread is
//       < 1e-5 (the core rotates in float64, so it is ~1e-15 in practice); running
//       the half-split weights with interleaved pairing leaves row 0 exactly
//       unchanged (nothing turns at position 0) and changes every later row;
//       hovering the angle heatmap gives the angle in radians.
//   W6  d = T = 4096: projections 549,755,813,888 and QK^T + PV 274,877,906,944,
//       crossover 8192; with 8 KV heads the crossover is 4096 + 1024 = 5120;
//       bad input (d < 1, heads not divisible) gets a message, not numbers.
//   W7  the source reader shows an operation's shape contract, as its header
//       declares it, above the code; a view of decoder_layer()'s calls shows none.
// Each widget's host carries data-updated-ms, the time its last update took;
// the tests print it after each interaction.
//
// Run by ctest, or by hand after building the page:
//   (cd web && npm ci && npm run build) && node --test tests/browser/lessons.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { assertNoProblems, openPage, startSite, waitForWidgets } from './harness.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

/** Opens `pageName` (with `query`), waits for the widgets and checks `name` started. */
async function openWidget(t, pageName, name, query = '') {
  const opened = await openPage(site.browser, site.url(pageName + query));
  t.after(opened.close);
  const widgets = await waitForWidgets(opened.page, 15000);
  const widget = widgets.find((w) => w.name === name);
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

// ---------------------------------------------------------------- W2

const w2Weights = (page) => page.$$eval('[data-testid^="w2-weight-"]', (cells) => cells.map((c) => Number(c.dataset.value)));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const maxChange = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

/** The query and keys as the plane shows them, and the key with the largest q.k. */
async function w2Points(page) {
  return page.evaluate(() => {
    const point = (node) => ({ x: Number(node.dataset.x), y: Number(node.dataset.y) });
    const query = point(document.querySelector('[data-testid="w2-query"]'));
    const keys = [...document.querySelectorAll('[data-testid^="w2-key-"]')].map(point);
    const dots = keys.map((k) => query.x * k.x + query.y * k.y);
    return { query, keys, best: dots.indexOf(Math.max(...dots)) };
  });
}

describe('W2 soft lookup', () => {
  test('moving the query changes the weights, which add up to 1', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'w2');
    const first = await w2Weights(page);
    assert.ok(first.length >= 2, 'no weights shown');
    assert.ok(Math.abs(sum(first) - 1) < 1e-9, `weights add up to ${sum(first)}`);

    // Keyboard: ten steps left.
    await page.getByTestId('w2-query').focus();
    for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowLeft');
    const keyed = await w2Weights(page);
    assert.ok(maxChange(first, keyed) > 1e-3, `arrow keys left the weights at ${keyed}`);
    assert.ok(Math.abs(sum(keyed) - 1) < 1e-9, `weights add up to ${sum(keyed)} after arrow keys`);
    assert.equal((await w2Points(page)).query.x, 0.2, 'ten steps of 0.1 left from x = 1.2');
    await reportTime(page, 'w2', 'arrow key');

    // Mouse: drag the query down and left.
    const box = await page.getByTestId('w2-query').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x - 80, box.y + 120, { steps: 6 });
    await page.mouse.up();
    const dragged = await w2Weights(page);
    const { query } = await w2Points(page);
    assert.ok(query.x < 0.2 && query.y < 0.6, `the drag left the query at (${query.x}, ${query.y})`);
    assert.ok(maxChange(keyed, dragged) > 1e-3, 'dragging left the weights unchanged');
    assert.ok(Math.abs(sum(dragged) - 1) < 1e-9, `weights add up to ${sum(dragged)} after the drag`);
    await reportTime(page, 'w2', 'drag');
    assertNoProblems(problems, 'notebook.html (W2)');
  });

  test('a large scale gives a hard lookup, a small one the mean', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'w2');
    await setInput(page, 'w2-scale', 2); // log10(scale): 100
    const { best, keys } = await w2Points(page);
    const sharp = await w2Weights(page);
    assert.ok(sharp[best] > 0.999, `at scale 100 the largest-q·k key ${best} has weight ${sharp[best]} (${sharp})`);
    await reportTime(page, 'w2', 'scale 100');

    await setInput(page, 'w2-scale', -2); // 0.01
    const flat = await w2Weights(page);
    const n = keys.length;
    assert.ok(flat.every((w) => Math.abs(w - 1 / n) < 0.05 / n), `at scale 0.01 the weights are ${flat}, not about 1/${n}`);
    // ... and the mix is then close to the plain mean row.
    const [mixed, mean] = await Promise.all(['w2-mixed', 'w2-mean'].map((id) =>
      page.getByTestId(id).evaluate((row) => JSON.parse(row.dataset.value))));
    assert.ok(maxChange(mixed, mean) < 0.02, `mix ${mixed} is far from the mean ${mean} at scale 0.01`);
    assertNoProblems(problems, 'notebook.html (W2)');
  });

  test('keys can be added and removed, and the view lives in the URL', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'w2', '?w2.q=-1,1.5&w2.s=10');
    const { query } = await w2Points(page);
    assert.deepEqual(query, { x: -1, y: 1.5 }, 'the query did not come from the URL');
    const n = (await w2Weights(page)).length;
    await page.getByTestId('w2-add').click();
    assert.equal((await w2Weights(page)).length, n + 1, 'Add a key did not add one');
    await page.getByTestId('w2-key-0').focus();
    await page.keyboard.press('Delete');
    const after = await w2Weights(page);
    assert.equal(after.length, n, 'Delete on a focused key did not remove it');
    assert.ok(Math.abs(sum(after) - 1) < 1e-9);
    await page.waitForTimeout(400); // the URL is written at most every 250 ms
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('w2.k').split(';').length, n, `w2.k in the URL: ${url.searchParams.get('w2.k')}`);
    assert.equal(url.searchParams.get('w2.s'), '10');
    assertNoProblems(problems, 'notebook.html (W2)');
  });
});

// ---------------------------------------------------------------- W4

const w4Deviation = (page) => page.getByTestId('w4-deviation').evaluate((node) => Number(node.dataset.value));
const w4RowMax = (page) => page.getByTestId('w4-pairing-readout').evaluate((node) => JSON.parse(node.dataset.rowMax));

describe('W4 RoPE', () => {
  test('q·k after RoPE depends only on the offset m − n', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'w4');
    const deviation = await w4Deviation(page);
    assert.ok(Number.isFinite(deviation) && deviation < 1e-5, `spread along a diagonal: ${deviation}`);
    console.log(`  w4 diagonal spread with the model's q and k: ${deviation.toExponential(2)}`);

    // Any q and k: the identity is about rotations, not about these vectors.
    await page.getByTestId('w4-q').fill('1, -2, 0.5, 3, 0, 1, -1, 2');
    await page.getByTestId('w4-k').fill('0.3, 0.3, -4, 1, 2, -0.5, 0, 1');
    const own = await w4Deviation(page);
    assert.ok(own < 1e-5, `spread along a diagonal with typed vectors: ${own}`);
    await reportTime(page, 'w4', 'typed k');
    await page.getByTestId('w4-q').fill('1, 2, 3');
    assert.match(await page.getByTestId('w4-status').textContent(), /8 numbers/, 'a short q gets no message');
    assert.equal(await page.getByTestId('w4-status').getAttribute('role'), 'alert');
    assertNoProblems(problems, 'index.html (W4)');
  });

  test('interleaved pairing on half-split weights: row 0 unchanged, later rows changed', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'w4');
    for (const layer of ['0', '1']) {
      await page.getByTestId('w4-layer').selectOption(layer);
      const rows = await w4RowMax(page);
      assert.equal(rows[0], 0, `layer ${layer}: row 0 changed by ${rows[0]}`);
      for (let r = 1; r < rows.length; r++) assert.ok(rows[r] > 1e-6, `layer ${layer}: row ${r} did not change (${rows[r]})`);
      await reportTime(page, 'w4', `layer ${layer}`);
    }
    await page.getByTestId('w4-tokens').fill('7,7,7,7,7');
    const rows = await w4RowMax(page);
    assert.equal(rows.length, 5);
    assert.equal(rows[0], 0);
    await reportTime(page, 'w4', 'new tokens (two forward passes)');
    assertNoProblems(problems, 'index.html (W4)');
  });

  test('the angle heatmap and clocks give exact angles', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'w4');
    // Keyboard on the angle heatmap: one step right is pair 0, position 1, angle 1 rad.
    const canvas = page.getByTestId('w4-angles').locator('canvas.heatmap-canvas');
    await canvas.focus();
    await page.keyboard.press('ArrowRight');
    const readout = await page.getByTestId('w4-angles').locator('.heatmap-readout').textContent();
    assert.match(readout, /pair 0 .*position 1: angle .*= 1\.000000 rad/, readout);
    // Hover: the tooltip says the same kind of thing.
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + box.width - 10, box.y + box.height - 10);
    const tooltip = page.getByTestId('w4-angles').locator('.heatmap-tooltip');
    assert.match(await tooltip.textContent(), /pair 3 .*position 31: angle .* rad/);
    await setInput(page, 'w4-clock-position', 31);
    assert.match(await page.getByTestId('w4-clocks').textContent(), /31\.000 rad/, 'pair 0 at position 31 turned 31 rad');
    await reportTime(page, 'w4', 'clock position');
    assertNoProblems(problems, 'index.html (W4)');
  });

  test('the view comes back from the URL and goes back into it', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'w4', '?w4.tokens=1,2,3&w4.layer=1&w4.head=3&w4.show=mod&w4.p=12');
    assert.equal(await page.getByTestId('w4-tokens').inputValue(), '1,2,3');
    assert.equal(await page.getByTestId('w4-layer').inputValue(), '1');
    assert.equal(await page.getByTestId('w4-head').inputValue(), '3');
    assert.equal(await page.getByTestId('w4-show').inputValue(), 'mod');
    assert.equal(await page.getByTestId('w4-clock-position').inputValue(), '12');
    const rows = await w4RowMax(page);
    assert.equal(rows.length, 3);
    assert.equal(rows[0], 0);
    await page.getByTestId('w4-head').selectOption('2');
    await page.waitForTimeout(400); // the URL is written at most every 250 ms
    assert.equal(new URL(page.url()).searchParams.get('w4.head'), '2');
    assertNoProblems(problems, 'index.html (W4)');
  });
});

// ---------------------------------------------------------------- W6

const cell = (page, testid) => page.getByTestId(testid).evaluate((node) => ({ text: node.textContent, value: Number(node.dataset.value) }));

describe('W6 cost', () => {
  test('d = T = 4096: the worked numbers and the crossover', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'w6');
    assert.equal((await cell(page, 'w6-projections')).text, '549,755,813,888');
    assert.equal((await cell(page, 'w6-attention')).text, '274,877,906,944');
    const crossover = await cell(page, 'w6-crossover');
    assert.equal(crossover.value, 8192);
    assert.equal(crossover.text.replace(/,/g, ''), '8192');
    assert.match(await page.getByTestId('w6-chart').locator('svg').getAttribute('aria-label'), /cross at T = 8,192/);
    assert.equal((await cell(page, 'w6-decode-bytes')).text, '67,108,864'); // 2 * 4096 * 4096 * 2 bytes
    await reportTime(page, 'w6', 'first draw');

    await page.getByTestId('w6-kv').fill('8');
    const gqa = await cell(page, 'w6-crossover');
    assert.equal(gqa.value, 5120, `with 8 KV heads the crossover is ${gqa.value}`);
    assert.equal(gqa.text.replace(/,/g, ''), '5120');
    assert.equal((await cell(page, 'w6-projections')).text, '343,597,383,680'); // 2Td(2d + 2d/4)
    assert.equal((await cell(page, 'w6-attention')).text, '274,877,906,944');   // GQA leaves 4T^2 d alone
    await reportTime(page, 'w6', 'KV heads 8');
    assertNoProblems(problems, 'notebook.html (W6)');
  });

  test('bad input gets a message', async (t) => {
    const { page, problems } = await openWidget(t, 'notebook.html', 'w6');
    const status = page.getByTestId('w6-status');
    await page.getByTestId('w6-d').fill('0');
    assert.match(await status.textContent(), /model width d must be a whole number from 1/);
    assert.equal(await status.getAttribute('role'), 'alert');
    assert.equal(await page.getByTestId('w6-d').getAttribute('aria-invalid'), 'true');
    await page.getByTestId('w6-d').fill('4096');
    await page.getByTestId('w6-kv').fill('7');
    assert.match(await status.textContent(), /multiple of n_kv_heads/);
    assert.equal((await cell(page, 'w6-crossover')).value, 8192, 'a bad input must leave the last good numbers');
    await page.getByTestId('w6-kv').fill('16');
    assert.equal(await status.getAttribute('role'), 'status');
    assert.equal((await cell(page, 'w6-crossover')).value, 6144);
    await page.waitForTimeout(400);
    assert.equal(new URL(page.url()).searchParams.get('w6.kv'), '16');
    assertNoProblems(problems, 'notebook.html (W6)');
  });
});

// ---------------------------------------------------------------- W7
describe('W7 source reader', () => {
  test('shows the shape contract of the operation from its header', async (t) => {
    const { page, problems } = await openWidget(t, 'index.html', 'w7', '?w7.op=gqa_scores');
    const widget = page.locator('[data-widget="w7"]');
    const contracts = widget.locator('.w7-contract');
    assert.deepEqual(await contracts.allTextContents(), ['attention_scores() q: [B, Hq, T, dh], k: [B, Hkv, S, dh] -> [B, Hq, T, S]']);
    assert.match(await contracts.first().getAttribute('title'), /^Declared in core\/ops\/attention\.hpp, line \d+$/);
    // The call in decoder_layer() is a piece of decoder_layer.hpp, no function of its own: no contract.
    await widget.getByRole('button', { name: 'Call in decoder_layer()' }).click();
    assert.equal(await widget.locator('.w7-contracts').isHidden(), true);
    // RoPE's definition holds two functions with contracts.
    await widget.getByRole('option', { name: 'RoPE' }).click();
    const rope = await contracts.allTextContents();
    assert.deepEqual(rope.map((text) => text.split(' ')[0]), ['rope_angles()', 'apply_rope()']);
    assert.ok(rope.every((text) => /\[.*->.*\[/.test(text)), `RoPE's contracts: ${rope.join('; ')}`);
    assertNoProblems(problems, 'index.html (W7)');
  });
});
