// The trained model (llama2.c's stories260K), in headless Chromium against the
// native tool: the probabilities the page draws, the tokens typed through the KV
// cache, the greedy continuation and the head summary must be those `attn probe`
// computes for the same text; the chapter must not fetch the model or its module
// before the reader asks; a broken file gets a message and the widget stays usable.
//
// stories260K is read where it lies (../shared/models/stories260K, copied into
// web/dist/models by scripts/build-web.sh). Without it the file fails naming the
// folder, unless ANATOMY_NO_SHARED_MODELS=1: then each of its tests is skipped.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test as nodeTest } from 'node:test';
import { assertNoProblems, distDir, formatViolations, layoutWidth, openPage, repoRoot, runAxe, startSite, waitForWidget, waitForWidgets } from './harness.mjs';
import { stories260KOrSkip } from '../shared-models.mjs';

const shared = stories260KOrSkip();
const { model, tokenizer } = shared;
const test = shared.skip ? (name) => nodeTest(name, { skip: shared.skip }) : nodeTest;
if (!shared.skip && !fs.existsSync(path.join(distDir(), 'models', 'stories260K', 'stories260K.bin')))
  throw new Error('web/dist has no models/stories260K: run scripts/build-web.sh (it copies the model beside the page)');

const attn = process.env.ATTN || path.join(repoRoot, 'build', 'native', 'native', 'attn');
// The native build's projections use this machine's fused multiply-add (core/CMakeLists.txt,
// ANATOMY_KERNEL_FLAGS); wasm has none, so the two differ by float32 rounding, which five
// layers grow to about 2e-6 in a probability. A wrong pairing, mask or cache moves them by 1e-2 or more.
const tolerance = 1e-5;
const defaultText = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.';

let site;
before(async () => { site = await startSite(); });
after(() => site?.close());

/** `attn probe` on stories260K: the trace, as the widget should show it. */
function probe(text, extra = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trained-model-'));
  try {
    const file = path.join(dir, 'probe.json');
    execFileSync(attn, ['probe', '--model', model, '--tokenizer', tokenizer, '--prompt', text, '--output', file, ...extra]);
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Shows layer l, head h and returns the main heatmap's [T][T] matrix once it is on screen. */
async function shown(page, layer, head) {
  await page.selectOption('[data-testid="trained-model-layer"]', String(layer));
  await page.selectOption('[data-testid="trained-model-head"]', String(head));
  await page.waitForFunction(([l, h]) => {
    const main = document.querySelector('[data-testid="trained-model-heatmap-main"]');
    return main && main.dataset.layer === String(l) && main.dataset.head === String(h);
  }, [layer, head]);
  return JSON.parse(await page.getAttribute('[data-testid="trained-model-heatmap-main"]', 'data-probabilities'));
}

/** Largest |page - native| over every layer and head. */
async function worstDifference(page, trace) {
  let worst = 0;
  for (let layer = 0; layer < trace.config.n_layers; layer++)
    for (let head = 0; head < trace.config.n_heads; head++) {
      const matrix = await shown(page, layer, head);
      const expected = trace.layers[layer].probabilities[0][head];
      assert.equal(matrix.length, expected.length, `layer ${layer} head ${head}: ${matrix.length} positions, native ${expected.length}`);
      matrix.forEach((row, t) => row.forEach((p, s) => (worst = Math.max(worst, Math.abs(p - expected[t][s])))));
    }
  return worst;
}

/** Chapter 1 with trained-model built; with `everyWidget`, every other widget too (each scrolled past). */
async function openTrained(t, { everyWidget = false } = {}) {
  // With every widget the test watches the requests too: in a new context, nothing cached.
  const requests = [];
  const opened = await openPage(site.browser, site.url('index.html'), { fresh: everyWidget });
  t.after(opened.close);
  if (everyWidget) opened.page.on('request', (request) => requests.push(request.url()));
  // Every widget of the chapter in a new context, on 2 busy cores: up to 30 s.
  const trainedModel = everyWidget ? (await waitForWidgets(opened.page, 30000)).find((w) => w.name === 'trained-model') : await waitForWidget(opened.page, 'trained-model');
  assert.equal(trainedModel?.ready, 'true');
  return { ...opened, requests };
}

test('trained-model loads nothing until asked, then shows attn probe\'s probabilities for every layer and head', async (t) => {
  const { page, problems, requests } = await openTrained(t, { everyWidget: true });
  const early = requests.filter((url) => /attention_trained|trained-explorer|stories260K|tok512/.test(url));
  assert.deepEqual(early, [], 'the chapter fetched the trained model or its code before the widget was used');

  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-heatmap-main"][data-probabilities]');
  assert.ok(requests.some((url) => /attention_trained[^/]*\.wasm$/.test(url)), 'the trained module was not fetched on use');

  const trace = probe(defaultText);
  const worst = await worstDifference(page, trace);
  assert.ok(worst <= tolerance, `largest difference from attn probe: ${worst}`);
  // The axis and readout use the tokenizer's text.
  const line = await page.locator('.sequence-line').last().textContent();
  assert.match(line, /"BOS" "␣Once" "␣upon" "␣a" "␣time"/);
  const info = await page.getByTestId('trained-model-info').textContent();
  assert.match(info, /5 layers, width 64, 8 query heads sharing 4 KV heads of 8 channels, SwiGLU 172, vocabulary 512/);
  assertNoProblems(problems, 'index.html with trained-model open');
});

test('trained-model\'s first view paints its main heatmap first, then the followed row and the pair of heads, for the same text', async (t) => {
  const { page, problems } = await openTrained(t);
  await page.getByTestId('trained-model-load').click();
  await page.waitForFunction(() => performance.getEntriesByName('anatomy:trained-model-view-paint').length > 0, null, { timeout: 20000 });
  const [firstPaint, viewPaint] = await page.evaluate(() =>
    ['anatomy:trained-model-first-paint', 'anatomy:trained-model-view-paint'].map((name) => performance.getEntriesByName(name)[0].startTime));
  assert.ok(firstPaint < viewPaint, `the main heatmap (${firstPaint} ms) before the rest (${viewPaint} ms)`);
  // What came a frame later is of the same run: the last query followed, layer 0's heads 0 and 1
  // compared, with the largest gap between them that attn probe's probabilities give.
  const trace = probe(defaultText);
  const T = trace.tokens[0].length;
  assert.match(await page.locator('[data-widget="trained-model"] .view-follow h3').textContent(), new RegExp(`^Query ${T - 1} \\(.*\\) reads keys 0 to ${T - 1}`));
  assert.equal(await page.getByTestId('trained-model-follow-detail').locator('tbody tr').count(), T);
  const compare = page.locator('[data-widget="trained-model"] .view-compare');
  assert.equal(await compare.locator('h3').textContent(), 'Heads 0 and 1 share KV head 0');
  const [a, b] = [0, 1].map((h) => trace.layers[0].probabilities[0][h]);
  const gap = Math.max(...a.flatMap((row, r) => row.map((p, c) => Math.abs(p - b[r][c]))));
  const shown = Number((await compare.textContent()).match(/the largest gap here is ([0-9.e-]+)/)[1]);
  assert.ok(Math.abs(shown - gap) < 1e-3, `largest gap ${shown} on the page, ${gap} from attn probe`);
  assertNoProblems(problems, 'index.html with trained-model\'s first view');
});

test('trained-model completes its first view and head summary when the reader changes the view before the first view is complete', async (t) => {
  const { page, problems } = await openTrained(t);
  // Layer 1 chosen in the task that draws the first heatmap (a MutationObserver's callback
  // runs at its end), before the followed row and the pair are drawn a frame later.
  await page.evaluate(() => {
    const widget = document.querySelector('[data-widget="trained-model"]');
    const observer = new MutationObserver(() => {
      const layer = widget.querySelector('[data-testid="trained-model-layer"]');
      if (!widget.querySelector('[data-testid="trained-model-heatmap-main"][data-probabilities]') || !layer) return;
      observer.disconnect();
      layer.value = '1';
      layer.dispatchEvent(new Event('change'));
    });
    observer.observe(widget, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-probabilities'] });
  });
  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-patterns"] table');
  assert.equal(await page.getAttribute('[data-testid="trained-model-heatmap-main"]', 'data-layer'), '1');
  assert.match(await page.locator('[data-testid="trained-model-heatmap-pair-a"] canvas.heatmap-canvas').getAttribute('aria-label'), /^Layer 1, head 0\./);
  assert.match(await page.locator('[data-widget="trained-model"] .view-follow h3').textContent(), /^Query \d+ /);
  assertNoProblems(problems, 'index.html after an early change of layer');
});

test('trained-model runs typed text through the cache: only the changed tokens again, the same numbers as a full pass', async (t) => {
  const { page, problems } = await openTrained(t);
  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-heatmap-main"][data-probabilities]');
  const text = `${defaultText} One day`;
  await page.getByTestId('trained-model-text').fill(text);
  await page.waitForFunction(() => /came from the KV cache/.test(document.querySelector('[data-testid="trained-model-status"]').textContent));
  const status = await page.getByTestId('trained-model-status').textContent();
  const trace = probe(text);
  const T = trace.tokens[0].length;
  const kept = Number(status.match(/the first (\d+) came from the KV cache/)[1]);
  assert.ok(kept >= T - 3 && kept < T, `${status} (T = ${T})`);
  const worst = await worstDifference(page, trace);
  assert.ok(worst <= tolerance, `largest difference from a full attn probe pass: ${worst}`);
  // The next-token guess is the probe's.
  assert.equal(Number(await page.getByTestId('trained-model-next').getAttribute('data-next-id')), trace.probe.top_next[0].id);
  // An empty box leaves BOS alone: one row, and the summary says why it has no scores.
  await page.getByTestId('trained-model-text').fill('');
  await page.waitForFunction(() => /BOS alone/.test(document.querySelector('[data-testid="trained-model-status"]').textContent));
  await page.waitForFunction(() => /at least one token after BOS/.test(document.querySelector('[data-testid="trained-model-findings"]').textContent));
  assert.deepEqual(JSON.parse(await page.getAttribute('[data-testid="trained-model-heatmap-main"]', 'data-probabilities')), [[1]]);
  // Too long a text is refused with a message, and the last view stays.
  await page.getByTestId('trained-model-text').fill('Once upon a time. '.repeat(40));
  await page.waitForFunction(() => /at most 128/.test(document.querySelector('[data-testid="trained-model-status"]').textContent));
  assert.equal(await page.getByTestId('trained-model-text').getAttribute('aria-invalid'), 'true');
  assertNoProblems(problems, 'index.html after typing');
});

test('trained-model generates attn probe\'s greedy continuation, one row at a time through the cache', async (t) => {
  const { page, problems } = await openTrained(t);
  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-heatmap-main"][data-probabilities]');
  await page.getByTestId('trained-model-generate').click();
  await page.waitForFunction(() => /Greedy decoding/.test(document.querySelector('[data-testid="trained-model-status"]').textContent), null, { timeout: 20000 });
  const trace = probe(defaultText, ['--generate', '24']);
  const continuation = trace.probe.continuation;
  const value = await page.getByTestId('trained-model-text').inputValue();
  assert.ok(value.startsWith(defaultText), value);
  assert.equal(value.slice(defaultText.length).trim(), continuation.text.trim());
  const matrix = JSON.parse(await page.getAttribute('[data-testid="trained-model-heatmap-main"]', 'data-probabilities'));
  assert.equal(matrix.length, trace.tokens[0].length + continuation.ids.length, 'one row per prompt and generated token');
  assertNoProblems(problems, 'index.html after generating');
});

test('trained-model\'s head summary is the core\'s measurement, and says only what it shows', async (t) => {
  const { page, problems } = await openTrained(t);
  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-patterns"] table');
  const patterns = probe(defaultText, ['--head-patterns']).probe.head_patterns;
  const findings = await page.getByTestId('trained-model-findings').locator('li').allTextContents();
  const [previous, first, self, induction] = patterns.patterns;
  assert.ok(previous.showing.length > 0 && first.showing.length === 0 && induction.showing.length === 0,
    'stories260K: previous-token heads, no sink, no induction (the page\'s text relies on it)');
  assert.match(findings[0], new RegExp(`^${previous.showing.length} of 40 heads give the previous token`));
  assert.match(findings[0], new RegExp(`layer ${previous.strongest.layer}, head ${previous.strongest.head} at ${previous.strongest.score.toFixed(3)}`));
  assert.match(findings[1], /^No attention sink/);
  assert.match(findings[3], /^No induction head/);
  assert.equal(findings[2].startsWith('No head that reads itself'), self.showing.length === 0);
  // The table ranks by the chosen pattern; its first row is the strongest head.
  const top = page.getByTestId('trained-model-patterns').locator('tbody tr').first();
  assert.equal(await top.getAttribute('data-layer'), String(previous.strongest.layer));
  assert.equal(await top.getAttribute('data-head'), String(previous.strongest.head));
  await page.selectOption('[data-testid="trained-model-rank"]', 'first_token');
  assert.equal(await page.getByTestId('trained-model-patterns').locator('tbody tr').first().getAttribute('data-layer'), String(first.strongest.layer));
  // A row's button shows that head in the explorer above.
  await page.getByTestId('trained-model-patterns').locator('tbody tr').first().getByRole('button').click();
  await page.waitForFunction(([l, h]) => {
    const main = document.querySelector('[data-testid="trained-model-heatmap-main"]');
    return main.dataset.layer === String(l) && main.dataset.head === String(h);
  }, [first.strongest.layer, first.strongest.head]);
  assertNoProblems(problems, 'index.html with the head summary');
});

test('trained-model open passes axe and fits a 360 px screen', async (t) => {
  const opened = await openPage(site.browser, site.url('index.html'), { width: 360, height: 800 });
  t.after(opened.close);
  const { page, problems } = opened;
  await waitForWidget(page, 'trained-model');
  await page.getByTestId('trained-model-load').click();
  await page.waitForSelector('[data-testid="trained-model-patterns"] table');
  const severe = (await runAxe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(severe.length, 0, formatViolations(severe));
  const layout = await layoutWidth(page);
  assert.ok(layout.scrollWidth <= layout.viewport, `the page is ${layout.scrollWidth} px wide at 360 px: ${JSON.stringify(layout.offenders)}`);
  assertNoProblems(problems, 'index.html at 360 px with trained-model open');
});

test('trained-model names what is wrong with a broken file and stays usable; another model opens without a reload', async (t) => {
  const { page, problems } = await openTrained(t);
  const bytes = fs.readFileSync(model);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trained-model-bad-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const truncated = path.join(dir, 'truncated.bin');
  fs.writeFileSync(truncated, bytes.subarray(0, 100000));
  // Junk whose first 4 bytes pass for a longest piece of 27 bytes: the first piece's length is what gives it away.
  const junk = path.join(dir, 'junk.bin');
  fs.writeFileSync(junk, Buffer.concat([Buffer.from([27, 0, 0, 0]), Buffer.alloc(4), Buffer.from('not a tokenizer at all, only text')]));
  const doorStatus = () => page.getByTestId('trained-model-door-status').textContent();
  const failure = async () => {
    await page.waitForFunction(() => /could not be opened/.test(document.querySelector('[data-testid="trained-model-door-status"]').textContent));
    return doorStatus();
  };
  await page.locator('details summary', { hasText: 'Open a model file' }).click();
  await page.getByTestId('trained-model-model-file').setInputFiles(truncated);
  await page.getByTestId('trained-model-tokenizer-file').setInputFiles(tokenizer);
  await page.getByTestId('trained-model-open').click();
  assert.match(await failure(), /truncated\.bin could not be opened: the model file: .*bytes/);
  await page.getByTestId('trained-model-model-file').setInputFiles(model);
  await page.getByTestId('trained-model-tokenizer-file').setInputFiles(junk);
  await page.getByTestId('trained-model-open').click();
  const message = await failure();
  assert.match(message, /stories260K\.bin could not be opened: .*piece 0 gives its length as \d+ bytes, outside 0 to the header's longest piece, 27: not a llama2\.c tokenizer\.bin/);
  assert.doesNotMatch(message, /-\d/, 'no negative numbers in the message');
  // Still usable: the right files open.
  await page.getByTestId('trained-model-tokenizer-file').setInputFiles(tokenizer);
  await page.getByTestId('trained-model-open').click();
  await page.waitForSelector('[data-testid="trained-model-heatmap-main"][data-probabilities]');
  assert.equal(await doorStatus(), '');
  // And another model can be opened after it, with no reload: the door stays above the model.
  const renamed = path.join(dir, 'again.bin');
  fs.writeFileSync(renamed, bytes);
  await page.locator('details summary', { hasText: 'Open another model file' }).click();
  await page.getByTestId('trained-model-model-file').setInputFiles(renamed);
  await page.getByTestId('trained-model-open').click();
  await page.waitForFunction(() => /^again:/.test(document.querySelector('[data-testid="trained-model-info"]')?.textContent ?? ''));
  await page.waitForSelector('[data-testid="trained-model-heatmap-main"][data-probabilities]');
  assert.equal(await page.getByTestId('trained-model-info').count(), 1, 'one model shown at a time');
  assertNoProblems(problems, 'index.html after a broken file');
});

test('trained-model says so when its wasm module cannot be fetched, and does not hang', async (t) => {
  const opened = await openPage(site.browser, site.url('index.html'));
  t.after(opened.close);
  const { page, problems } = opened;
  // The module is compiled ahead of its glue (lib/wasm-compile.ts): a failure there must still reach the widget.
  await page.route(/attention_trained[^/]*\.wasm$/, (route) => route.fulfill({ status: 404, body: 'gone' }));
  await waitForWidget(page, 'trained-model');
  await page.getByTestId('trained-model-load').click();
  await page.waitForFunction(() => /could not be opened/.test(document.querySelector('[data-testid="trained-model-door-status"]').textContent), null, { timeout: 10000 });
  assert.match(await page.getByTestId('trained-model-door-status').textContent(), /stories260K could not be opened: .*attention_trained.*HTTP 404/);
  assert.equal(await page.getByTestId('trained-model-load').isEnabled(), true, 'the button is usable again');
  assert.deepEqual(problems.pageErrors, []);
});
