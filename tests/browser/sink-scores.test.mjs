// The notebook's sink-scores figure (web/src/widgets/sink-scores) in headless Chromium:
// for every model it shows, each head's first-token score (and, for the model with learned
// sink logits, its share to the sink) is what the stream module computes under Node on
// the same text and files, number for number; its findings quote the strongest of them;
// Qwen3's table holds the figures the notebook's prose quotes; the bars draw the tables'
// numbers with the 0.3 and 0.5 marks; on the sink experiment's text the strongest head
// scores what attn train recorded natively for it, and the prose quotes both; a text longer than the
// models' trained positions gets a message and the last good tables stay; the URL keeps
// the text.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, openPage, repoRoot, startSite, waitForWidget } from './harness.mjs';
import { loadNotebook } from '../../wasm/load-node.mjs';
import { safetensorsHeader } from '../../web/src/lib/safetensors.mjs';

const modelsDir = path.join(repoRoot, 'web', 'public', 'models');

let site, stream;
before(async () => {
  site = await startSite();
  stream = await loadNotebook();
});
after(() => site?.close());

/** The stream module's headScores under Node for the shipped folder `id` on `text`. */
function nodeScores(id, text) {
  const dir = path.join(modelsDir, id);
  const session = new stream.StreamSession();
  try {
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
    const loaded = JSON.parse(session.loadCheckpoint(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')), bytes,
      safetensorsHeader(bytes, 'model.safetensors').header, JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'))));
    assert.equal(loaded.error, undefined, loaded.error);
    return JSON.parse(session.headScores({ text }));
  } finally {
    session.delete();
  }
}

async function open(t, query = '') {
  const opened = await openPage(site.browser, site.url(`notebook.html${query}#sinks`), { width: 1280, height: 800 });
  t.after(opened.close);
  const widget = await waitForWidget(opened.page, 'sink-scores', 20_000);
  assert.equal(widget.ready, 'true', widget.message);
  // The figure is built at once and its three models load after: wait for their tables (or an error).
  await opened.page.waitForFunction(() => document.querySelector('[data-widget="sink-scores"] .sink-scores-model') ||
    document.querySelector('[data-testid="sink-scores-status"][data-kind="error"]'), null, { timeout: 60_000 });
  const error = await opened.page.locator('[data-testid="sink-scores-status"][data-kind="error"]').count();
  if (error) assert.fail(`the figure says: ${await opened.page.getByTestId('sink-scores-status').textContent()}`);
  return opened;
}

/** Every table of the figure, by test id: its cells' scores as [row][column]. */
const tables = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-widget="sink-scores"] table[data-testid]')]
  .map((table) => [table.dataset.testid, [...table.querySelectorAll('tbody tr')].map((row) => [...row.querySelectorAll('td')].map((td) => Number(td.dataset.score)))])));

test('every head\'s score is the stream module\'s on the same text, and the findings quote the strongest', async (t) => {
  const { page, problems } = await open(t);
  const text = await page.getByTestId('sink-scores-text').inputValue();
  const shown = await tables(page);
  const models = await page.evaluate(() => [...document.querySelectorAll('.sink-scores-model')].map((m) => m.dataset.model));
  assert.ok(models.length >= 3, models.join(', '));
  for (const id of models) {
    const expected = nodeScores(id, text);
    assert.deepEqual(shown[`sink-scores-${id}`], expected.first_token.heads, `${id}: first-token scores`);
    const strongest = Number(await page.locator(`p.finding[data-model="${id}"][data-strongest]`).getAttribute('data-strongest'));
    assert.equal(strongest, Math.max(...expected.first_token.heads.flat()));
    if (expected.learned_sink) {
      assert.deepEqual(shown[`sink-scores-${id}-learned`], expected.learned_sink.heads, `${id}: learned sink shares`);
      assert.ok(expected.learned_sink.heads.flat().every((v) => v > 0 && v < 1), `${id}: every share inside (0, 1)`);
    } else {
      assert.equal(shown[`sink-scores-${id}-learned`], undefined, `${id} has no learned sinks`);
    }
  }
  assert.ok(models.some((id) => nodeScores(id, text).learned_sink), 'one model has learned sink logits');
  // Qwen3's published figures, as the notebook's prose quotes them (56%, 43%, 68%, 77% from layer 6 on).
  const qwen = shown['sink-scores-qwen3'][0];
  const prose = await page.locator('#sinks + p').textContent();
  for (const [value, percent] of [[qwen[2], '56%'], [qwen[3], '43%'], [qwen[4], '68%'], [qwen[5], '77%']]) {
    assert.equal(`${Math.round(value * 100)}%`, percent);
    assert.ok(prose.includes(percent), `the prose quotes ${percent}`);
  }
  // The bars draw the tables' numbers, every head in layer order, with a line at each mark.
  // Each figure draws once it knows its width (a ResizeObserver's callback), which it
  // learns only once laid out: near the viewport (the notebook's sections skip layout far
  // from it, content-visibility), and a frame or more later on a busy machine.
  await page.evaluate(async () => {
    for (const figure of document.querySelectorAll('[data-widget="sink-scores"] .score-bars')) {
      figure.scrollIntoView({ block: 'center' });
      for (const deadline = performance.now() + 10_000; !figure.querySelector('svg') && performance.now() < deadline;)
        await new Promise((resolve) => requestAnimationFrame(resolve));
    }
  });
  const bars = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-widget="sink-scores"] .score-bars')]
    .map((figure) => [figure.dataset.testid, {
      scores: [...figure.querySelectorAll('rect.score-bar')].map((bar) => Number(bar.dataset.score)),
      marks: [...figure.querySelectorAll('.score-mark-label')].map((label) => label.textContent),
    }])));
  for (const id of models) {
    assert.deepEqual(bars[`sink-scores-${id}-bars`]?.scores, shown[`sink-scores-${id}`].flat(), `${id}: the bars`);
    assert.deepEqual(bars[`sink-scores-${id}-bars`].marks, ['0.3', '0.5: a sink']);
    if (shown[`sink-scores-${id}-learned`]) assert.deepEqual(bars[`sink-scores-${id}-learned-bars`].scores, shown[`sink-scores-${id}-learned`].flat());
  }
  assert.deepEqual(bars['sink-scores-qwen3-bars'].scores, qwen);
  assertNoProblems(problems, 'the sink-scores figure');
});

test('the score depends on the text: the experiment\'s text gives what attn train recorded, and the prose quotes both', async (t) => {
  const { page, problems } = await open(t);
  const strongestOf = async (id) => Number(await page.locator(`p.finding[data-model="${id}"][data-strongest]`).getAttribute('data-strongest'));
  const onFigureText = await strongestOf('shakespeare-4-layers');
  const quoted = await page.locator('[data-experiment]').evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [n.dataset.model, Number(n.dataset.experiment)])));
  await page.getByTestId('sink-scores-experiment-text').click();
  await page.waitForFunction(() => /GREMIO/.test(document.querySelector('[data-testid="sink-scores-text"]').value));
  for (const id of ['shakespeare', 'shakespeare-4-layers', 'shakespeare-learned-sinks']) {
    // attn train scores every head natively on the same text when it writes the record.
    const record = JSON.parse(fs.readFileSync(path.join(modelsDir, id, 'training.json'), 'utf8'));
    const recorded = record.head_patterns.patterns.find((p) => p.name === 'first_token').strongest;
    const shown = await strongestOf(id);
    assert.ok(Math.abs(shown - recorded.score) <= 1e-4, `${id}: the page ${shown} on the experiment's text, attn train ${recorded.score}`);
    // What the figure said on its own text of the same head on the experiment's.
    const tables = await page.locator(`table[data-testid="sink-scores-${id}"] td[data-score]`).evaluateAll((cells) => cells.map((c) => Number(c.dataset.score)));
    assert.ok(tables.includes(quoted[id]), `${id}: the figure quoted ${quoted[id]} for the experiment's text`);
  }
  const record = JSON.parse(fs.readFileSync(path.join(modelsDir, 'shakespeare-4-layers', 'training.json'), 'utf8'));
  const claim = (name) => page.locator(`[data-claim="${name}"]`).textContent();
  assert.equal(await claim('sinks-4-layers-figure'), onFigureText.toFixed(3));
  assert.equal(await claim('sinks-4-layers-experiment'), record.head_patterns.patterns.find((p) => p.name === 'first_token').strongest.score.toFixed(3));
  assert.notEqual(onFigureText.toFixed(3), (await strongestOf('shakespeare-4-layers')).toFixed(3), 'the two texts give different scores');
  assert.match(await page.locator('p.finding[data-model="shakespeare-4-layers"][data-experiment]').textContent(), /the text the sink experiment scores its heads on/);
  assertNoProblems(problems, 'the sink-scores figure on the experiment\'s text');
});

test('a text longer than the trained positions gets a message, the tables stay, and the URL keeps a good text', async (t) => {
  const { page, problems } = await open(t);
  const before = await tables(page);
  await page.getByTestId('sink-scores-text').fill('x'.repeat(80));
  await page.waitForFunction(() => /cannot read this text/.test(document.querySelector('[data-testid="sink-scores-status"]').textContent));
  assert.equal(await page.getByTestId('sink-scores-text').getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await tables(page), before, 'the last good tables stay');
  await page.getByTestId('sink-scores-text').fill('To be, or not to be: that is the question.');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('sink-scores.text') === 'To be, or not to be: that is the question.');
  assert.notDeepEqual(await tables(page), before);
  assertNoProblems(problems, 'the sink-scores figure after bad input');
});
