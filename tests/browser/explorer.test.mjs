// The attention explorer, against the native tool: the probabilities the page
// shows must be those `attn verify --export-trace` writes for the same ids, and the
// cells drawn as forbidden must be exactly the causal upper triangle.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, openPage, repoRoot, startSite, waitForWidget } from './harness.mjs';

const attn = process.env.ATTN || path.join(repoRoot, 'build', 'native', 'native', 'attn');
let site;
before(async () => { site = await startSite(); });
after(() => site?.close());

function nativeTrace(ids) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'explorer-'));
  try {
    const file = path.join(dir, 'trace.json');
    execFileSync(attn, ['verify', '--tokens', ids.join(','), '--batch', '2', '--export-trace', file]);
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Sets a select by test id and waits until the main heatmap shows that view.
async function show(page, { batch, layer, head }) {
  await page.selectOption('[data-testid="explorer-batch"]', String(batch));
  await page.selectOption('[data-testid="explorer-layer"]', String(layer));
  await page.selectOption('[data-testid="explorer-head"]', String(head));
  await page.waitForFunction(([b, l, h]) => {
    const main = document.querySelector('[data-testid="explorer-heatmap-main"]');
    return main && main.dataset.batch === String(b) && main.dataset.layer === String(l) && main.dataset.head === String(h);
  }, [batch, layer, head]);
  return JSON.parse(await page.getAttribute('[data-testid="explorer-heatmap-main"]', 'data-probabilities'));
}

for (const ids of [[1, 2, 3, 4, 5, 6], [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 23, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5, 0]]) {
  test(`explorer shows the probabilities of attn verify for ${ids.length} ids, every layer, head and sequence`, async () => {
    const trace = nativeTrace(ids);
    const { page, problems, close } = await openPage(site.browser, site.url(`index.html?explorer.tokens=${ids.join(',')}`));
    try {
      assert.equal((await waitForWidget(page, 'explorer'))?.ready, 'true');
      let worst = 0;
      for (let batch = 0; batch < 2; batch++)
        for (let layer = 0; layer < trace.config.n_layers; layer++)
          for (let head = 0; head < trace.config.n_heads; head++) {
            const shown = await show(page, { batch, layer, head });
            const expected = trace.layers[layer].probabilities[batch][head];
            assert.equal(shown.length, ids.length);
            shown.forEach((row, t) => row.forEach((p, s) => (worst = Math.max(worst, Math.abs(p - expected[t][s])))));
          }
      assert.ok(worst <= 1e-6, `largest difference from attn verify: ${worst}`);
      assertNoProblems(problems, 'index.html');
    } finally {
      await close();
    }
  });
}

test('explorer draws exactly the upper triangle as forbidden, and forbidden cells hold zero', async () => {
  const { page, close } = await openPage(site.browser, site.url('index.html?explorer.tokens=7,7,7,7,7'));
  try {
    await waitForWidget(page, 'explorer');
    // The table view lists every cell; forbidden ones are marked, not shown as 0.
    const table = page.locator('[data-testid="explorer-heatmap-main"]');
    await table.getByRole('button', { name: 'Show layer 0, head 0 as a table' }).click();
    const cells = await table.locator('table tbody tr').evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.classList.contains('masked'))));
    assert.equal(cells.length, 5);
    cells.forEach((row, t) => row.forEach((masked, s) => assert.equal(masked, s > t, `cell (${t}, ${s})`)));
    const p = JSON.parse(await table.getAttribute('data-probabilities'));
    p.forEach((row, t) => row.forEach((value, s) => { if (s > t) assert.equal(value, 0); }));
    assert.deepEqual(p[0], [1, 0, 0, 0, 0]);
    // The row sums the text asks the reader to check: shown, and the rows' own sums.
    const sums = page.getByTestId('explorer-row-sums');
    const shown = JSON.parse(await sums.getAttribute('data-sums'));
    assert.deepEqual(shown, p.map((row) => row.reduce((a, b) => a + b, 0)));
    assert.ok(shown.every((sum) => Math.abs(sum - 1) <= 1e-6), JSON.stringify(shown));
    assert.match(await sums.textContent(), /^Row sums: each of the 5 rows adds up to (between 0\.\d{7} and 1\.\d{7}|[01]\.\d{7}): (exactly 1\.|1 to within \d\.\de-\d+, the float32 rounding of the softmax\.)$/);
  } finally {
    await close();
  }
});

test('explorer rejects a bad id with a message and keeps the last good view', async () => {
  const { page, close } = await openPage(site.browser, site.url('index.html'));
  try {
    await waitForWidget(page, 'explorer');
    const before = await page.getAttribute('[data-testid="explorer-heatmap-main"]', 'data-probabilities');
    await page.fill('[data-testid="explorer-tokens"]', '1,2,99');
    await page.dispatchEvent('[data-testid="explorer-tokens"]', 'change');
    await page.waitForFunction(() => document.querySelector('[data-testid="explorer-tokens"]').getAttribute('aria-invalid') === 'true');
    assert.match(await page.textContent('[data-testid="explorer-status"]'), /99/);
    assert.equal(await page.getAttribute('[data-testid="explorer-heatmap-main"]', 'data-probabilities'), before);
  } finally {
    await close();
  }
});

test('explorer names one id in the singular, and names each heatmap in its buttons', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('index.html?explorer.tokens=5'));
  t.after(close);
  await waitForWidget(page, 'explorer');
  const explorer = page.locator('[data-widget="explorer"]');
  assert.match(await explorer.textContent(), /sequence 0 is your 1 id, sequence 1 shifts/);
  // Four heatmaps (the chosen head, the two heads of its pair, their difference): each button says which.
  const names = await explorer.locator('.heatmap-actions button').evaluateAll((buttons) => buttons.map((b) => b.textContent.replace(/\s+/g, ' ').trim()));
  assert.deepEqual(names, [
    'Show layer 0, head 0 as a table', 'Save layer 0, head 0 as PNG', 'Save layer 0, head 0 as SVG',
    'Show layer 0, head 0 in the comparison as a table', 'Save layer 0, head 0 in the comparison as PNG', 'Save layer 0, head 0 in the comparison as SVG',
    'Show layer 0, head 1 in the comparison as a table', 'Save layer 0, head 1 in the comparison as PNG', 'Save layer 0, head 1 in the comparison as SVG',
    'Show layer 0, head 0 minus head 1 as a table', 'Save layer 0, head 0 minus head 1 as PNG', 'Save layer 0, head 0 minus head 1 as SVG',
  ]);
  // The accessible name is the whole text; what is drawn stays short.
  await explorer.getByRole('button', { name: 'Save layer 0, head 0 as PNG' }).waitFor();
  const drawn = await explorer.locator('[data-testid="explorer-heatmap-main"] .heatmap-actions button').evaluateAll((buttons) => buttons.map((b) => {
    const copy = b.cloneNode(true);
    copy.querySelectorAll('.visually-hidden').forEach((n) => n.remove());
    const hidden = [...b.querySelectorAll('.visually-hidden')].every((n) => n.getBoundingClientRect().width <= 1);
    return `${copy.textContent.trim()}${hidden ? '' : ' (context drawn too)'}`;
  }));
  assert.deepEqual(drawn, ['Show as a table', 'PNG', 'SVG']);
  assertNoProblems(problems, 'index.html?explorer.tokens=5');
});

test('the tooltip of the bottom-right cell stays inside the heatmap and the viewport, at 1280 and 360 px', async (t) => {
  const ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];
  for (const [width, height] of [[1280, 800], [360, 740]]) {
    const { page, problems, close } = await openPage(site.browser, site.url(`index.html?explorer.tokens=${ids.join(',')}`), { width, height });
    t.after(close);
    await waitForWidget(page, 'explorer');
    const main = page.locator('[data-testid="explorer-heatmap-main"]');
    const canvas = main.locator('.heatmap-canvas');
    // The heatmap's last row at the bottom of the viewport: no room below the pointer there.
    await canvas.evaluate((node) => node.scrollIntoView({ block: 'end' }));
    const rows = JSON.parse(await main.getAttribute('data-probabilities')).length;
    assert.equal(rows, ids.length);
    // The canvas is 30 px of labels, rows x cell, and 2 px; the cells end 2 px before its right edge.
    const box = await canvas.boundingBox();
    const cell = (box.height - 32) / rows;
    await page.mouse.move(box.x + box.width - 2 - cell / 2, box.y + box.height - 2 - cell / 2);
    const tooltip = main.locator('.heatmap-tooltip');
    await tooltip.waitFor({ state: 'visible' });
    assert.match(await tooltip.textContent(), new RegExp(`query ${ids.length - 1} .*→ key ${ids.length - 1} `), 'the tooltip is the bottom-right cell\'s');
    const { tip, stage, viewport } = await main.evaluate((figure) => {
      const stageNode = figure.querySelector('.heatmap-stage');
      const s = stageNode.getBoundingClientRect();
      return {
        tip: figure.querySelector('.heatmap-tooltip').getBoundingClientRect().toJSON(),
        // What shows of the stage (it scrolls sideways): its padding box less a scroll bar.
        stage: { left: s.left + stageNode.clientLeft, top: s.top + stageNode.clientTop, right: s.left + stageNode.clientLeft + stageNode.clientWidth, bottom: s.top + stageNode.clientTop + stageNode.clientHeight },
        viewport: { right: document.documentElement.clientWidth, bottom: document.documentElement.clientHeight },
      };
    });
    const inside = (outer, what) => {
      for (const side of ['left', 'top']) assert.ok(tip[side] >= (outer[side] ?? 0) - 0.5, `${width} px: the tooltip's ${side} ${tip[side]} is outside ${what} (${outer[side] ?? 0})`);
      for (const side of ['right', 'bottom']) assert.ok(tip[side] <= outer[side] + 0.5, `${width} px: the tooltip's ${side} ${tip[side]} is outside ${what} (${outer[side]})`);
    };
    inside(viewport, 'the viewport');
    inside(stage, 'the heatmap, which cuts off what leaves it');
    assertNoProblems(problems, `index.html at ${width} px`);
    await close();
  }
});
