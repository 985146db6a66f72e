// The notebook's multi-head figure (web/src/widgets/multi-head) in headless Chromium:
// its four heads' probabilities, one position's concatenated heads and o_proj's output
// are the whole Shakespeare checkpoint's layer 0 (attention_core's forward under Node),
// number for number; the causality check says what it found, for the default text and
// after edits; bad input gets a message and the last good figure stays; the URL keeps
// the text, the replacement character and the followed position.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, openPage, repoRoot, startSite, waitForWidget } from './harness.mjs';
import { loadCore } from '../../wasm/load-node.mjs';
import { loadCheckpoint } from '../../web/src/lib/checkpoint-load.mjs';

const shipped = path.join(repoRoot, 'web', 'public', 'models', 'shakespeare');
const config = JSON.parse(fs.readFileSync(path.join(shipped, 'config.json'), 'utf8'));
const H = config.num_attention_heads, D = config.hidden_size;

let site, forward;
before(async () => {
  site = await startSite();
  const module = await loadCore();
  const session = new module.CheckpointSession();
  const read = (file) => fs.readFileSync(path.join(shipped, file));
  const files = { config: read('config.json').toString(), model: new Uint8Array(read('model.safetensors')), tokenizer: read('tokenizer.json').toString() };
  assert.equal(JSON.parse(loadCheckpoint(session, files)).error, undefined);
  forward = (text) => JSON.parse(session.forward(text, { capture: ['probabilities', 'head_outputs', 'attention_update'] })).layers[0];
});
after(() => site?.close());

/** What the figure shows, as numbers: each head's matrix, the followed position, its concatenation and update. */
const shownNumbers = (page) => page.evaluate(() => {
  const host = document.querySelector('[data-widget="multi-head"]');
  const concat = host.querySelector('[data-testid="multi-head-concat"]');
  return {
    heads: [...host.querySelectorAll('.heatmap[data-probabilities]')].map((h) => JSON.parse(h.dataset.probabilities)),
    position: Number(concat.dataset.position),
    merged: JSON.parse(concat.dataset.merged),
    update: JSON.parse(concat.dataset.update),
  };
});

/** The figure's numbers against the whole checkpoint's layer 0 on `text`: a list of what differs. */
function differences(shown, text) {
  const layer = forward(text);
  const out = [];
  if (shown.heads.length !== H) out.push(`${shown.heads.length} heatmaps, not ${H}`);
  shown.heads.forEach((matrix, h) => {
    if (JSON.stringify(matrix) !== JSON.stringify(layer.probabilities[0][h])) out.push(`head ${h}'s probabilities`);
  });
  const t = shown.position;
  const merged = layer.head_outputs[0].flatMap((head) => head[t]);  // [H][T][dh] -> position t's heads side by side
  if (JSON.stringify(shown.merged) !== JSON.stringify(merged)) out.push(`position ${t}'s concatenated heads`);
  if (JSON.stringify(shown.update) !== JSON.stringify(layer.attention_update[0][t])) out.push(`position ${t}'s o_proj output`);
  if (shown.update.length !== D || !shown.update.every(Number.isFinite)) out.push(`position ${t}'s output is not ${D} finite numbers`);
  return out;
}

async function open(t, query = '') {
  const opened = await openPage(site.browser, site.url(`notebook.html${query}#mha`), { width: 1280, height: 800 });
  t.after(opened.close);
  const widget = await waitForWidget(opened.page, 'multi-head', 20_000);
  assert.equal(widget.ready, 'true', widget.message);
  return opened;
}

const text = (page) => page.getByTestId('multi-head-text').inputValue();
const verdict = (page) => page.getByTestId('multi-head-verdict');

test('the figure is the whole checkpoint\'s layer 0, and its causality check holds', async (t) => {
  const { page, problems } = await open(t);
  const shown = await shownNumbers(page);
  const line = await text(page);
  assert.deepEqual(differences(shown, line), []);
  assert.equal(shown.position, [...line].length, 'the last position is followed at first');
  assert.match(await page.getByTestId('multi-head-shapes').textContent(),
    new RegExp(`x \\[${[...line].length + 1}, ${D}\\] → q \\[${H} heads, ${[...line].length + 1}, ${config.head_dim}\\], k and v \\[${config.num_key_value_heads} KV heads`));

  // The check: T cells, every one "=" but the last, and a verdict that says so.
  const cells = await page.getByTestId('multi-head-check-cells').locator('.check-cell').allTextContents();
  assert.equal(cells.length, [...line].length + 1);
  assert.deepEqual(cells.slice(0, -1).filter((c) => c !== '='), []);
  assert.equal(cells.at(-1), '≠');
  assert.equal(await verdict(page).getAttribute('data-holds'), 'true');
  assert.match(await verdict(page).textContent(), /^Causality holds\. .* bit for bit; position \d+, the last, changed by up to \d/);
  // The change it reports is the checkpoint's: the last row of the two runs' outputs.
  const changed = [...line].slice(0, -1).join('') + 'x';
  const a = forward(line).attention_update[0].at(-1), b = forward(changed).attention_update[0].at(-1);
  const largest = Math.max(...a.map((v, i) => Math.abs(v - b[i])));
  assert.ok(largest > 0);
  assert.ok(Math.abs(Number(await verdict(page).getAttribute('data-last-change')) - largest) <= 1e-6 * largest);
  assertNoProblems(problems, 'notebook.html with the multi-head figure');
});

test('editing the text, the followed position and the last character recomputes every part', async (t) => {
  const { page, problems } = await open(t);
  const edited = 'O Romeo, Romeo! wherefore';
  await page.getByTestId('multi-head-text').fill(edited);
  await page.getByTestId('multi-head-at').fill('3');
  const shown = await shownNumbers(page);
  assert.equal(shown.position, 3);
  assert.deepEqual(differences(shown, edited), []);
  assert.match(await page.getByTestId('multi-head-concat-title').textContent(), /^Position 3, "R": 4 heads of 16 numbers/);

  await page.getByTestId('multi-head-last').fill('!');
  assert.equal(await verdict(page).getAttribute('data-holds'), 'true');
  assert.match(await verdict(page).textContent(), /"e" changed to "!"/);

  // Nothing to compare: the same character, two characters, one the model never saw.
  await page.getByTestId('multi-head-last').fill('e');
  assert.match(await verdict(page).textContent(), /already ends in "e": choose another character/);
  await page.getByTestId('multi-head-last').fill('ab');
  assert.equal(await verdict(page).textContent(), 'Type exactly one character to put in place of the last one.');
  assert.equal(await page.getByTestId('multi-head-last').getAttribute('aria-invalid'), 'true');
  await page.getByTestId('multi-head-last').fill('é');
  assert.match(await verdict(page).textContent(), /never saw "é"/);
  assert.equal(await page.getByTestId('multi-head-check-cells').locator('.check-cell').count(), 0);

  // A text the model cannot read: a message, and the last good figure stays.
  await page.getByTestId('multi-head-text').fill('naïve');
  assert.match(await page.getByTestId('multi-head-status').textContent(), /never saw "ï".*Still showing the last text the model could read\./);
  assert.deepEqual(differences(await shownNumbers(page), edited), []);
  await page.getByTestId('multi-head-at').fill('99');
  assert.equal(await page.getByTestId('multi-head-at').getAttribute('aria-invalid'), 'true');
  assertNoProblems(problems, 'the multi-head figure after edits');
});

test('a shared link restores the text, the replacement character and the followed position', async (t) => {
  const query = `?multi-head.text=${encodeURIComponent('First Citizen:')}&multi-head.last=${encodeURIComponent('?')}&multi-head.at=5`;
  const { page, problems } = await open(t, query);
  assert.equal(await text(page), 'First Citizen:');
  assert.equal(await page.getByTestId('multi-head-last').inputValue(), '?');
  const shown = await shownNumbers(page);
  assert.equal(shown.position, 5);
  assert.deepEqual(differences(shown, 'First Citizen:'), []);
  assert.match(await verdict(page).textContent(), /":" changed to "\?"/);
  assertNoProblems(problems, 'a shared link to the multi-head figure');
});
