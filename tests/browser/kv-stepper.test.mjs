// The KV-cache stepper, in headless Chromium (see harness.mjs).
//
//   steps:    prefill 1,2,3, then decode 5 tokens: after every step the position
//             counter, the cache rows S and shape [1, Hkv, S, dh], the mask's offset
//             (history = S - T_new: 0 after the prefill, S - 1 after a decode step, whose
//             single row is all ones), and the check: max |cached - full| <= 1e-5 with the
//             argmax agreeing, badge PASS, at every step (also in the step log)
//   payload:  TinyLlama-1.1B's cache holds 11,264 scalars, 45,056 B (fp32) and
//             22,528 B (bf16) per token; a custom config the core refuses, and an
//             empty field, show a message
//   errors:   a prompt with a non-id, a next token outside the vocabulary: a message,
//             nothing stepped
//   chunk:    2 tokens appended after 3 cached: mask [[1,1,1,1,0],[1,1,1,1,1]] (history 3), the
//             check passes, the link keeps and replays the chunk as one step
//   URL:      a link's prompt and decoded steps are replayed on load
//   reset:    empties the cache and disables decoding until the next prefill
//   teardown: taking the widget off the page frees its DecodeSession
//   layout:   at 1280 px the summary's rows and the panels fill the width (no empty column),
//             at 360 px they stack; a one-token step draws its heatmaps' axis titles whole
//   words:    counts of one in the singular ("1 token", "S = 1 key", "1 layer × 1 KV head")
//
// Run: node --test tests/browser/kv-stepper.test.mjs (after building web/dist)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { assertNoProblems, openPage, startSite, waitForWidget } from './harness.mjs';

// The check's tolerance: cached and full logits are the same float32 sums (see the widget).
const tolerance = 1e-5;

const text = async (page, id) => (await page.getByTestId(id).textContent()).trim();

async function readStep(page) {
  return {
    position: Number(await text(page, 'kv-stepper-position')),
    rows: Number(await text(page, 'kv-stepper-cache-rows')),
    shape: JSON.parse(await text(page, 'kv-stepper-cache-shape')),
    history: Number(await text(page, 'kv-stepper-history')),
    mask: (await text(page, 'kv-stepper-mask-text')).split('\n').map((row) => row.trim().split(/\s+/).map(Number)),
    verdict: await text(page, 'kv-stepper-verdict'),
    maxDiff: Number(await text(page, 'kv-stepper-max-diff')),
    argmax: await text(page, 'kv-stepper-argmax'),
    greedy: Number(await text(page, 'kv-stepper-greedy')),
    log: await page.getByTestId('kv-stepper-log-row').evaluateAll((rows) => rows.map((row) => [...row.cells].map((c) => c.textContent.trim()))),
    status: await text(page, 'kv-stepper-status'),
  };
}

function assertCheckPassed(step, what) {
  assert.ok(Number.isFinite(step.maxDiff) && step.maxDiff <= tolerance, `${what}: max |cached - full| = ${step.maxDiff}`);
  assert.match(step.argmax, /agree/, `${what}: argmax`);
  assert.doesNotMatch(step.argmax, /DISAGREE/, `${what}: argmax`);
  assert.equal(step.verdict, 'PASS', `${what}: badge`);
}

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

test('kv-stepper prefills 1,2,3 and decodes 5 tokens, each matching a full recomputation', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
  t.after(close);
  assert.equal((await waitForWidget(page, 'kv-stepper'))?.ready, 'true', 'kv-stepper did not start');

  await page.getByTestId('kv-stepper-prompt').fill('1,2,3');
  await page.getByTestId('kv-stepper-prefill').click();
  let step = await readStep(page);
  assert.equal(step.position, 3);
  assert.equal(step.rows, 3);
  assert.equal(step.shape.length, 4);
  assert.deepEqual([step.shape[0], step.shape[2]], [1, 3], 'cache shape [B, Hkv, S, dh]');
  assert.equal(step.history, 0, 'prefill: no history');
  assert.deepEqual(step.mask, [[1, 0, 0], [1, 1, 0], [1, 1, 1]], 'prefill: the lower triangle');
  assertCheckPassed(step, 'prefill');
  assert.equal(step.log.length, 1);

  const decoded = [];
  for (let i = 1; i <= 5; i++) {
    const greedy = step.greedy;
    assert.ok(Number.isInteger(greedy) && greedy >= 0 && greedy < 32, `greedy token ${greedy}`);
    await page.getByTestId('kv-stepper-step').click();
    decoded.push(greedy);
    step = await readStep(page);
    const S = 3 + i, what = `decode step ${i}`;
    assert.equal(step.position, S, `${what}: position`);
    assert.equal(step.rows, S, `${what}: cache rows`);
    assert.deepEqual([step.shape[0], step.shape[2]], [1, S], `${what}: cache shape ${JSON.stringify(step.shape)}`);
    assert.equal(step.history, S - 1, `${what}: mask offset S - T_new`);
    assert.deepEqual(step.mask, [Array(S).fill(1)], `${what}: one row, every key visible`);
    assertCheckPassed(step, what);
    assert.equal(step.log.length, 1 + i, `${what}: step log`);
  }
  // Every row of the log: PASS, and the decoded ids are the greedy ones shown before each step.
  assert.deepEqual(step.log.map((row) => row.at(-1)), Array(6).fill('PASS'));
  assert.deepEqual(step.log.slice(1).map((row) => Number(row[1])), decoded);
  for (const row of step.log) assert.ok(Number(row[4]) <= tolerance, `log: max diff ${row[4]}`);
  assert.match(await text(page, 'kv-stepper-tokens'), new RegExp(`decoded ${decoded.join(', ')}`));

  // A typed token instead of the greedy one.
  await page.getByTestId('kv-stepper-token').fill('7');
  await page.getByTestId('kv-stepper-step').click();
  step = await readStep(page);
  assert.equal(step.position, 9);
  assert.equal(step.log.at(-1)[1], '7');
  assertCheckPassed(step, 'typed token 7');

  // Decoding is stored in the URL, to be replayed.
  await page.waitForFunction(() => new URLSearchParams(location.search).get('kv-stepper.steps')?.split(',').length === 6);
  assert.equal(new URL(page.url()).searchParams.get('kv-stepper.steps'), [...decoded, 7].join(','));
  assertNoProblems(problems, 'notebook.html (kv-stepper)');
});

test('kv-stepper payload calculator: TinyLlama-1.1B per-token bytes, and bad configs', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  await page.getByTestId('kv-stepper-preset').selectOption('tiny');
  assert.equal(await text(page, 'kv-stepper-scalars'), '64');  // 2 x 2 layers x 2 KV heads x 8
  await page.getByTestId('kv-stepper-preset').selectOption('tinyllama-1.1b');
  assert.equal(await text(page, 'kv-stepper-scalars'), '11,264');
  assert.equal(await text(page, 'kv-stepper-bytes-fp32'), '45,056 B');
  assert.equal(await text(page, 'kv-stepper-bytes-bf16'), '22,528 B');
  assert.equal(await text(page, 'kv-stepper-bytes-fp8'), '11,264 B');
  assert.equal(await page.getByTestId('kv-stepper-layers').inputValue(), '22');
  assert.equal(await page.getByTestId('kv-stepper-kv-heads').inputValue(), '4');
  assert.equal(await page.getByTestId('kv-stepper-head-dim').inputValue(), '64');

  // Total: bf16, 2048 tokens, batch 32 = 22,528 * 2048 * 32 bytes = 1.38 GiB.
  await page.getByTestId('kv-stepper-dtype').selectOption('bf16');
  await page.getByTestId('kv-stepper-context').fill('2048');
  await page.getByTestId('kv-stepper-batch').fill('32');
  assert.equal(await text(page, 'kv-stepper-total'), '1.38 GiB');
  assert.match(await text(page, 'kv-stepper-total-bytes'), /^\(1,476,395,008 bytes/);

  // Your own numbers: an odd head dim is refused by the core's config check.
  const status = page.getByTestId('kv-stepper-payload-status');
  await page.getByTestId('kv-stepper-head-dim').fill('63');
  assert.equal(await page.getByTestId('kv-stepper-preset').inputValue(), 'custom');
  assert.equal(await status.getAttribute('data-kind'), 'error');
  assert.match(await status.textContent(), /head_dim must be even/);
  assert.equal(await page.getByTestId('kv-stepper-head-dim').getAttribute('aria-invalid'), 'true');
  await page.getByTestId('kv-stepper-head-dim').fill('128');
  assert.equal(await status.getAttribute('data-kind'), 'info');
  assert.equal(await text(page, 'kv-stepper-scalars'), (2 * 22 * 4 * 128).toLocaleString('en-US'));
  await page.getByTestId('kv-stepper-layers').fill('');
  assert.equal(await status.getAttribute('data-kind'), 'error');
  assert.match(await status.textContent(), /Layers must be a whole number/);
  assert.match(await status.textContent(), /Still showing layers = 22, the last valid value\./);
  await page.getByTestId('kv-stepper-layers').fill('22');
  // A context past the limit, typed key by key: the result stays on the last valid
  // number, and the status line names it (not the prefix the field passed through).
  await page.getByTestId('kv-stepper-context').fill('');
  await page.getByTestId('kv-stepper-context').pressSequentially('1000000000000');
  assert.equal(await status.getAttribute('data-kind'), 'error');
  const message = await status.textContent();
  assert.match(message, /Context length must be a whole number from 1 to [\d,]+, not "1000000000000"\./);
  const still = /Still showing context length = ([\d,]+), the last valid value\./.exec(message);
  assert.ok(still, message);
  assert.match(await text(page, 'kv-stepper-total-bytes'), new RegExp(`× ${still[1]} tokens ×`), 'the result is the one the message names');
  assertNoProblems(problems, 'notebook.html (kv-stepper payload)');
});

test('kv-stepper explains a bad prompt or token, and reset empties the cache', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  const status = page.getByTestId('kv-stepper-status');
  const before = await readStep(page);  // the default prompt, prefilled on load

  await page.getByTestId('kv-stepper-prompt').fill('1,2,x');
  await page.getByTestId('kv-stepper-prefill').click();
  assert.equal(await status.getAttribute('data-kind'), 'error');
  assert.match(await status.textContent(), /"x" is not a token id/);
  assert.equal(await page.getByTestId('kv-stepper-prompt').getAttribute('aria-invalid'), 'true');
  assert.equal((await readStep(page)).position, before.position, 'a bad prompt changes nothing');

  await page.getByTestId('kv-stepper-token').fill('40');
  await page.getByTestId('kv-stepper-step').click();
  assert.equal(await status.getAttribute('data-kind'), 'error');
  assert.match(await status.textContent(), /"40" is not a token id/);
  assert.equal((await readStep(page)).position, before.position, 'a bad token steps nothing');

  await page.getByTestId('kv-stepper-reset').click();
  assert.equal(await text(page, 'kv-stepper-position'), '0');
  assert.equal(await text(page, 'kv-stepper-cache-rows'), '0');
  assert.ok(await page.getByTestId('kv-stepper-step').isDisabled(), 'nothing to decode from after a reset');
  await page.getByTestId('kv-stepper-prompt').fill('5');
  await page.getByTestId('kv-stepper-prefill').click();
  const step = await readStep(page);
  assert.equal(step.position, 1);
  assert.deepEqual(step.mask, [[1]]);
  assertCheckPassed(step, 'prefill after reset');
  assertNoProblems(problems, 'notebook.html (kv-stepper errors)');
});

test('kv-stepper replays a link: prompt and decoded steps', async (t) => {
  const { page, problems, close } = await openPage(
    site.browser, site.url('notebook.html?kv-stepper.prompt=4,5&kv-stepper.steps=7,8,9&kv-stepper.preset=tiny&kv-stepper.dtype=fp32&kv-stepper.context=64&kv-stepper.batch=2'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  const step = await readStep(page);
  assert.equal(step.position, 5);
  assert.equal(step.history, 4);
  assert.deepEqual(step.log.map((row) => row[1]), ['4, 5', '7', '8', '9']);
  assert.deepEqual(step.log.map((row) => row.at(-1)), Array(4).fill('PASS'));
  assert.equal(await page.getByTestId('kv-stepper-preset').inputValue(), 'tiny');
  // 64 scalars * 4 bytes * 64 tokens * 2 sequences
  assert.match(await text(page, 'kv-stepper-total-bytes'), /^\(32,768 bytes/);
  assertNoProblems(problems, 'notebook.html (kv-stepper link)');
});

test('kv-stepper appends a chunk after the cache: 2 new tokens after 3 cached use tril(diagonal = S - T)', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  assert.equal((await readStep(page)).position, 3, 'the default prompt, 1,2,3, prefilled on load');
  await page.getByTestId('kv-stepper-token').fill('4, 9');
  assert.equal(await page.getByTestId('kv-stepper-step').textContent(), 'Append 2 tokens');
  await page.getByTestId('kv-stepper-step').click();
  const step = await readStep(page);
  assert.equal(step.position, 5);
  assert.equal(step.rows, 5);
  assert.equal(step.history, 3);
  // S = 5 keys, T = 2 new queries at positions 3 and 4: row t sees keys 0 .. t + 3.
  assert.deepEqual(step.mask, [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]);
  assertCheckPassed(step, 'the chunk');
  assert.deepEqual(step.log.at(-1).slice(0, 4), ['append 1', '4, 9', '5', '3']);
  assert.match(step.status, /Appended 2 tokens at positions 3 to 4 in one pass through the cache: the mask has 2 rows over 5 keys, its diagonal shifted right by the 3 cached tokens/);
  assert.equal(await page.getByTestId('kv-stepper-step').textContent(), 'Decode next token');
  // The link keeps the chunk as one step, and replays it as one.
  await page.waitForFunction(() => new URLSearchParams(location.search).get('kv-stepper.steps') === '4+9');
  assertNoProblems(problems, 'notebook.html (kv-stepper chunk)');
  const linked = await openPage(site.browser, page.url());
  t.after(linked.close);
  await waitForWidget(linked.page, 'kv-stepper');
  const replayed = await readStep(linked.page);
  assert.deepEqual([replayed.position, replayed.history, replayed.mask], [5, 3, step.mask]);
  assert.deepEqual(replayed.log.map((row) => row[1]), ['1, 2, 3', '4, 9']);
  assertNoProblems(linked.problems, 'notebook.html (kv-stepper chunk, from its link)');
});

test('kv-stepper frees its DecodeSession when the widget leaves the page', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  const states = await page.evaluate(async () => {
    const host = document.querySelector('[data-widget="kv-stepper"]');
    const body = host.querySelector('.widget-body');
    const before = body.dataset.session;
    host.remove();
    await new Promise((resolve) => setTimeout(resolve, 50));  // the MutationObserver's turn
    return [before, body.dataset.session];
  });
  assert.deepEqual(states, ['live', 'deleted']);
  assertNoProblems(problems, 'notebook.html (kv-stepper teardown)');
});

// The panels fill both columns at 1280 px (no empty third column) and stack on a
// phone; a one-token step still draws its heatmaps' axis titles whole; counts of one read
// in the singular ("1 token", "1 new query, S = 1 key", "1 layer × 1 KV head").
for (const width of [1280, 360]) {
  test(`kv-stepper at ${width} px: the panels use the whole width`, async (t) => {
    const { page, problems, close } = await openPage(site.browser, site.url('notebook.html?kv-stepper.prompt=5'), { width, height: 800 });
    t.after(close);
    await waitForWidget(page, 'kv-stepper');
    const panels = await page.evaluate(() => {
      const grid = document.querySelector('[data-widget="kv-stepper"] .kv-panels');
      const box = (node) => { const r = node.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top }; };
      const summary = document.querySelector('[data-widget="kv-stepper"] .kv-summary');
      return { grid: box(grid), panels: [...grid.children].map(box), summary: box(summary), entries: [...summary.children].map(box) };
    });
    // Every row of the summary reaches its right edge: no entry sits alone with empty columns beside it.
    const rowEnds = new Map();
    for (const entry of panels.entries) rowEnds.set(Math.round(entry.top), Math.max(rowEnds.get(Math.round(entry.top)) ?? 0, entry.right));
    for (const [top, right] of rowEnds) {
      assert.ok(Math.abs(right - panels.summary.right) <= 2, `the summary's row at ${top} px ends at ${right} px, the summary at ${panels.summary.right} px`);
    }
    const [keys, mask, attention] = panels.panels;
    if (width === 1280) {
      assert.equal(keys.top, mask.top, 'keys and mask side by side');
      assert.ok(Math.abs(mask.right - panels.grid.right) <= 2,
        `the mask panel ends at ${mask.right} px, the panels' box at ${panels.grid.right} px: an empty column is left`);
    } else {
      for (const panel of [keys, mask]) assert.ok(Math.abs(panel.right - panels.grid.right) <= 2, `at 360 px each panel takes the full width: ${JSON.stringify(panel)}`);
    }
    assert.ok(Math.abs(attention.right - panels.grid.right) <= 2, 'the attention panel spans the grid');
    assertNoProblems(problems, `notebook.html at ${width} px`);
  });

  test(`kv-stepper at ${width} px: a one-token step draws its heatmaps' axis titles whole`, async (t) => {
    const { page, problems, close } = await openPage(site.browser, site.url('notebook.html?kv-stepper.prompt=5'), { width, height: 800 });
    t.after(close);
    await waitForWidget(page, 'kv-stepper');
    // The heatmaps draw their axis titles from x = 34 (the least left margin) and y = 30 (the top margin).
    const short = await page.evaluate(() => {
      const context = document.createElement('canvas').getContext('2d');
      context.font = '10px system-ui, sans-serif';
      const width = (text) => context.measureText(text).width;
      const canvases = [...document.querySelectorAll('[data-widget="kv-stepper"] canvas.heatmap-canvas')];
      const titles = [['channel →', 'position →'], ['key position →', 'query →']];
      return canvases.flatMap((canvas, i) => {
        const [col, row] = titles[i];
        const need = { width: 34 + width(col), height: 30 + width(row) };
        return canvas.clientWidth < need.width || canvas.clientHeight < need.height
          ? [`${canvas.getAttribute('aria-label').split('.')[0]}: ${canvas.clientWidth} x ${canvas.clientHeight} px, its titles need ${Math.ceil(need.width)} x ${Math.ceil(need.height)}`]
          : [];
      });
    });
    assert.deepEqual(short, [], `at ${width} px`);
    assertNoProblems(problems, `notebook.html at ${width} px`);
  });
}

test('kv-stepper says "1 token", "1 new query, S = 1 key" and "1 layer × 1 KV head"', async (t) => {
  const { page, close } = await openPage(site.browser, site.url('notebook.html?kv-stepper.prompt=5'));
  t.after(close);
  await waitForWidget(page, 'kv-stepper');
  assert.match(await text(page, 'kv-stepper-status'), /^Prefilled 1 token in one pass\./);
  assert.match(await text(page, 'kv-stepper-mask-offset'), /^Prefill: 1 new query, S = 1 key\./);
  assert.match(await text(page, 'kv-stepper-cache-bytes'), / × 1 token, /);
  await page.getByTestId('kv-stepper-step').click();
  assert.match(await text(page, 'kv-stepper-mask-offset'), /^Decode: 1 new query, S = 2 keys\. History = S − T_new = 1, so the diagonal sits 1 column right/);
  await page.getByTestId('kv-stepper-preset').selectOption('custom');
  await page.getByTestId('kv-stepper-layers').fill('1');
  await page.getByTestId('kv-stepper-kv-heads').fill('1');
  await page.getByTestId('kv-stepper-batch').fill('1');
  await page.getByTestId('kv-stepper-context').fill('1');
  assert.match(await text(page, 'kv-stepper-formula'), /^2 \(keys and values\) × 1 layer × 1 KV head × \d+ channels = [\d,]+ scalars per token\.$/);
  assert.match(await text(page, 'kv-stepper-total-bytes'), / × 1 token × 1 sequence, /);
});
