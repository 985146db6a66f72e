// The trace viewer, against a real `attn probe` trace: a tiny checkpoint written
// by `attn export-checkpoint`, probed on a sentence, opened through the file input.
// The page must show the file's own numbers (probabilities, token text, sink
// statistics, next tokens, continuation), read them out on hover and keyboard, pick a
// head from the sink plot, and refuse broken files with one line while staying usable
// and saying which file it still shows. Before any file it asks for one, with no empty selects.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, formatViolations, openPage, repoRoot, runAxe, startSite, waitForWidget } from './harness.mjs';

const attn = process.env.ATTN || path.join(repoRoot, 'build', 'native', 'native', 'attn');
const prompt = 'the cat sat on the mat';
let site, workDir, probeFile, probe;

before(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-viewer-'));
  const model = path.join(workDir, 'model');
  probeFile = path.join(workDir, 'probe.json');
  execFileSync(attn, ['export-checkpoint', model, '--config', 'tiny', '--seed', '3']);
  execFileSync(attn, ['probe', '--model', model, '--prompt', prompt, '--generate', '4', '--output', probeFile]);
  probe = JSON.parse(fs.readFileSync(probeFile, 'utf8'));
  site = await startSite();
});
after(async () => {
  await site?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

/** Writes a changed copy of the probe trace and returns its path. */
function variant(name, change) {
  const copy = structuredClone(probe);
  change(copy);
  const file = path.join(workDir, name);
  fs.writeFileSync(file, JSON.stringify(copy));
  return file;
}

// The page's label rules (web/src/widgets/shared/token-text.ts), restated: marks for space,
// newline and tab, at most 12 characters with the ellipsis.
function axisLabel(text) {
  const marks = { ' ': '␣', '\n': '↵', '\t': '⇥' };
  const chars = Array.from(text, (c) => marks[c] ?? c);
  return chars.length <= 12 ? chars.join('') : chars.slice(0, 11).join('') + '…';
}

// A token in the heatmap's readout: in quotes, marked, with the marks it uses named.
function namedLabel(text) {
  const marks = { ' ': '␣', '\n': '↵', '\t': '⇥' };
  const names = { ' ': 'a space', '\n': 'a newline', '\t': 'a tab' };
  const used = [...new Set(Array.from(text).filter((c) => c in names))];
  return `"${Array.from(text, (c) => marks[c] ?? c).join('')}"` + (used.length ? ` (${used.map((c) => `${marks[c]} is ${names[c]}`).join(', ')})` : '');
}

// formatNumber of web/src/lib/dom.ts, as the heatmap readout prints p.
function formatP(p) {
  return p !== 0 && Math.abs(p) < 1e-4 ? p.toExponential(2) : p.toFixed(4);
}

async function openTraceViewer(t) {
  const opened = await openPage(site.browser, site.url('index.html'));
  t.after(opened.close);
  assert.equal((await waitForWidget(opened.page, 'trace-viewer'))?.ready, 'true');
  return opened;
}

/** Chooses a file in trace-viewer's input and waits for the status line to say how it went. */
async function chooseFile(page, file) {
  const before = await page.textContent('[data-testid="trace-viewer-status"]');
  await page.setInputFiles('[data-testid="trace-viewer-file"]', file);
  await page.waitForFunction((before) => document.querySelector('[data-testid="trace-viewer-status"]').textContent !== before, before);
  return {
    kind: await page.getAttribute('[data-testid="trace-viewer-status"]', 'data-kind'),
    text: await page.textContent('[data-testid="trace-viewer-status"]'),
  };
}

async function showHead(page, layer, head) {
  await page.selectOption('[data-testid="trace-viewer-layer"]', String(layer));
  await page.selectOption('[data-testid="trace-viewer-head"]', String(head));
  await page.waitForFunction(([l, h]) => {
    const main = document.querySelector('[data-testid="trace-viewer-heatmap-main"]');
    return main.dataset.layer === String(l) && main.dataset.head === String(h);
  }, [layer, head]);
  return JSON.parse(await page.getAttribute('[data-testid="trace-viewer-heatmap-main"]', 'data-probabilities'));
}

test('trace-viewer shows an attn probe trace: probabilities, token text, summary and sink plot', async (t) => {
  const { page, problems } = await openTraceViewer(t);
  const opened = await chooseFile(page, probeFile);
  assert.equal(opened.kind, 'info', opened.text);
  assert.match(opened.text, /^Opened probe\.json/);
  const { n_layers: L, n_heads: H } = probe.config;
  const tokenText = probe.token_text[0];
  const T = tokenText.length;

  // Every layer and head: the heatmap holds the file's probabilities, exactly (the page parses the same JSON).
  for (let layer = 0; layer < L; layer++)
    for (let head = 0; head < H; head++)
      assert.deepEqual(await showHead(page, layer, head), probe.layers[layer].probabilities[0][head], `layer ${layer}, head ${head}`);

  // The keyboard readout of one cell names both tokens and prints the file's p.
  await showHead(page, 1, 2);
  const main = page.locator('[data-testid="trace-viewer-heatmap-main"]');
  await main.locator('canvas.heatmap-canvas').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const readout = await main.locator('.heatmap-readout').textContent();
  const p = probe.layers[1].probabilities[0][2][3][1];
  assert.equal(readout, `layer 1, head 2, query 3 (${namedLabel(tokenText[3])}) → key 1 (${namedLabel(tokenText[1])}): p = ${formatP(p)}`);

  // Axis labels: the token text, spaces marked (the table view lists exactly what the canvas draws).
  await main.getByRole('button', { name: 'Show layer 1, head 2 as a table' }).click();
  const columns = await main.locator('table thead th').allTextContents();
  const rows = await main.locator('table tbody th').allTextContents();
  assert.deepEqual(columns.slice(1), tokenText.map(axisLabel));
  assert.deepEqual(rows, tokenText.map(axisLabel));
  assert.ok(columns.includes('␣') && columns.includes('<s>'), `labels: ${columns.join(' ')}`);
  assert.equal(await page.isVisible('[data-testid="trace-viewer-token-key"]'), true);
  // The token list quotes every piece in full.
  assert.equal(await page.textContent('[data-testid="trace-viewer-token-rows"] li'), `sequence 0: ${tokenText.map((x) => JSON.stringify(x)).join(' ')}`);

  // The sink plot: one dot per layer and head holding sink_stats, the layer means, the even-spread line.
  const plot = page.locator('[data-testid="trace-viewer-sink-plot"]');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="trace-viewer-sink-plot"] circle[data-layer]').length === n, L * H);
  const dots = await plot.locator('circle[data-layer]').evaluateAll((nodes) =>
    nodes.map((n) => ({ layer: Number(n.dataset.layer), head: Number(n.dataset.head), value: Number(n.dataset.value) })));
  const seen = new Set(dots.map((d) => `${d.layer},${d.head}`));
  assert.equal(seen.size, L * H);
  for (const d of dots) assert.equal(d.value, probe.sink_stats[d.layer][d.head], `sink dot layer ${d.layer} head ${d.head}`);
  assert.equal(Number(await page.getAttribute('[data-testid="trace-viewer-sink-baseline"]', 'data-value')), probe.probe.sinks.uniform_baseline);
  assert.deepEqual(JSON.parse(await page.getAttribute('[data-testid="trace-viewer-sink-mean"]', 'data-values')), probe.probe.sinks.layer_mean);
  const legend = await plot.locator('.sink-legend').textContent();
  for (const entry of ['one query head', 'mean over the layer', 'even spread']) assert.ok(legend.includes(entry), `legend: ${legend}`);
  const axisTitles = await plot.locator('.sink-axis-title').allTextContents();
  assert.deepEqual(axisTitles.sort(), ['layer', 'mean weight on position 0']);
  // The text alternative: the table lists every value, and the plot's name gives the range.
  const tableRows = await page.locator('[data-testid="trace-viewer-sink-table"] tbody tr').count();
  assert.equal(tableRows, L);
  assert.match(await page.getAttribute('[data-testid="trace-viewer-sink-svg"]', 'aria-label'), new RegExp(`${L} layers by ${H} query heads`));

  // Keyboard on the plot: the readout follows the focused head; Enter shows it in the heatmaps.
  await page.focus('[data-testid="trace-viewer-sink-svg"]');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  const sinkReadout = await page.textContent('[data-testid="trace-viewer-sink-readout"]');
  assert.match(sinkReadout, new RegExp(`^Layer 0, head 1: queries ${probe.probe.sinks.queries_from} to ${probe.probe.sinks.queries_to} put ${probe.sink_stats[0][1].toFixed(3)} `));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const main = document.querySelector('[data-testid="trace-viewer-heatmap-main"]');
    return main.dataset.layer === '0' && main.dataset.head === '1';
  });
  // Clicking a dot picks its layer and head too.
  await plot.locator('circle[data-layer="1"][data-head="3"]').click();
  await page.waitForFunction(() => {
    const main = document.querySelector('[data-testid="trace-viewer-heatmap-main"]');
    return main.dataset.layer === '1' && main.dataset.head === '3';
  });
  assert.equal(await page.inputValue('[data-testid="trace-viewer-layer"]'), '1');
  assert.equal(await page.inputValue('[data-testid="trace-viewer-head"]'), '3');

  // The probe's summary: checkpoint, prompt, the five next tokens with their probabilities, the continuation, cache vs full pass.
  const summary = await page.textContent('[data-testid="trace-viewer-probe-summary"]');
  assert.ok(summary.includes(JSON.stringify(prompt)), summary);
  assert.ok(summary.includes(probe.probe.model.path), summary);
  const top = await page.locator('[data-testid="trace-viewer-top-next"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({ token: tr.querySelector('code').textContent, id: Number(tr.dataset.tokenId), probability: Number(tr.dataset.probability) })));
  assert.deepEqual(top, probe.probe.top_next.map((x) => ({ token: JSON.stringify(x.token_text), id: x.id, probability: x.probability })));
  assert.equal(top.length, 5);
  const continuation = await page.textContent('[data-testid="trace-viewer-continuation"]');
  assert.ok(continuation.includes(JSON.stringify(probe.probe.continuation.text)), continuation);
  assert.match(await page.textContent('[data-testid="trace-viewer-cached-vs-full"]'), new RegExp(`agrees at all ${T} positions`));
  // Where and how it ran: the file's device, cache size and rates, in words.
  const run = await page.textContent('[data-testid="trace-viewer-probe-run"]');
  const { device, cache, timing } = probe.probe;
  assert.ok(run.includes(`CPU: ${device.name}, ${device.threads_used} of ${device.hardware_threads} threads`), run);
  assert.ok(run.includes(`${cache.dtype}: ${cache.tokens} tokens × `), run);
  assert.ok(run.includes(`(${timing.decode_steps} steps)`), run);
  assert.equal(timing.decode_steps, 3); // --generate 4: the 4th token is never fed back
  const checkIds = await page.locator('[data-testid="trace-viewer-checks"] tbody tr td:first-child').allTextContents();
  assert.deepEqual(checkIds, probe.checks.map((c) => c.id));

  // Nothing the viewer added trips axe (the sink table open, so it is scanned too). The heatmap's
  // own table goes back to hidden first: its scrolling box is not focusable (web/src/lib/heatmap.ts).
  await main.getByRole('button', { name: 'Hide the table of layer 1, head 3' }).click();
  await page.locator('.sink-table-details summary').click();
  const violations = (await runAxe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(violations.length, 0, formatViolations(violations));
  assertNoProblems(problems, 'index.html with a probe trace');
});

test('trace-viewer marks whitespace in labels and cuts long tokens short, quoting them in full elsewhere', async (t) => {
  const { page, problems } = await openTraceViewer(t);
  const pieces = ['\n', '\tab', ' internationalization'];
  const file = variant('odd-tokens.json', (trace) => pieces.forEach((text, i) => (trace.token_text[0][i + 1] = text)));
  assert.equal((await chooseFile(page, file)).kind, 'info');
  const main = page.locator('[data-testid="trace-viewer-heatmap-main"]');
  await main.getByRole('button', { name: /^Show layer \d+, head \d+ as a table$/ }).click();
  const rows = await main.locator('table tbody th').allTextContents();
  assert.deepEqual(rows.slice(1, 4), ['↵', '⇥ab', '␣internatio…']);
  const list = await page.textContent('[data-testid="trace-viewer-token-rows"] li');
  for (const text of pieces) assert.ok(list.includes(JSON.stringify(text)), list);
  assertNoProblems(problems, 'index.html with odd token text');
});

const broken = [
  {
    name: 'logits_positions out of range',
    change: (trace) => (trace.logits_positions = [trace.tokens[0].length]),
    message: /logits_positions\[0\] should be an integer from 0 to 23, but is 24/,
  },
  {
    name: 'logits_positions longer than the logits',
    change: (trace) => (trace.logits_positions = [22, 23]),
    message: /logits\[0\] has 1 entry, but should have 2 \(one per entry of logits_positions\)/,
  },
  {
    name: 'sink_stats of the wrong shape',
    change: (trace) => trace.sink_stats[1].pop(),
    message: /sink_stats\[1\] has 3 entries, but should have 4 \(config\.n_heads query heads\)/,
  },
  {
    name: 'a probe field of the wrong type',
    change: (trace) => (trace.probe.top_next[0].probability = 'high'),
    message: /probe\.top_next\[0\]\.probability should be a finite number/,
  },
  {
    name: 'a cache total that is not tokens x bytes per token',
    change: (trace) => (trace.probe.cache.total_bytes += 1),
    message: /probe\.cache\.total_bytes is \d+, but \d+ tokens of \d+ bytes make \d+/,
  },
  {
    name: 'an unknown device kind',
    change: (trace) => (trace.probe.device.kind = 'tpu'),
    message: /probe\.device\.kind should be "cpu" or "cuda", but is "tpu"/,
  },
];

test('trace-viewer refuses broken probe traces with one line and stays usable', async (t) => {
  const { page, problems } = await openTraceViewer(t);
  assert.equal((await chooseFile(page, probeFile)).kind, 'info');
  const shown = await showHead(page, 0, 0);
  for (const { name, change, message } of broken) {
    const status = await chooseFile(page, variant(`${name.replace(/\W+/g, '-')}.json`, change));
    assert.equal(status.kind, 'error', `${name}: ${status.text}`);
    assert.match(status.text, message, name);
    assert.ok(!status.text.includes('\n'), `${name}: the message is one line`);
    // The last good trace stays on screen and still answers its controls.
    assert.deepEqual(JSON.parse(await page.getAttribute('[data-testid="trace-viewer-heatmap-main"]', 'data-probabilities')), shown);
    assert.deepEqual(await showHead(page, 1, 3), probe.layers[1].probabilities[0][3]);
    await showHead(page, 0, 0);
  }
  // A fixed file opens again; a verify trace (the page's own) has no sink plot or probe summary.
  assert.equal((await chooseFile(page, probeFile)).kind, 'info');
  await page.click('[data-testid="trace-viewer-load-own"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="trace-viewer-status"]').textContent.startsWith("Opened the page's own trace"));
  assert.equal(await page.isVisible('[data-testid="trace-viewer-sink-plot"]'), false);
  assert.equal(await page.locator('[data-testid="trace-viewer-probe-summary"]').count(), 0);
  assert.equal(await page.isVisible('[data-testid="trace-viewer-token-key"]'), false);
  assertNoProblems(problems, 'index.html after broken traces');
});

// Before a trace opens the viewer asks for one and shows no empty controls; a
// broken file after a good one says so, and says which file the page still shows.
test('trace-viewer asks for a trace and shows no empty selects before one is open', async (t) => {
  const { page, problems } = await openTraceViewer(t);
  const selects = await page.locator('[data-widget="trace-viewer"] select').evaluateAll((nodes) =>
    nodes.filter((n) => n.getClientRects().length > 0 && !n.disabled).map((n) => `${n.dataset.testid}: ${n.options.length} options`));
  assert.deepEqual(selects, [], 'selects on show before a trace is open');
  const status = await page.textContent('[data-testid="trace-viewer-status"]');
  assert.match(status, /^No trace open yet\. Choose a trace file/);
  assert.equal(await page.isVisible('[data-testid="trace-viewer-shown"]'), false);
  // The display's code (summary, sink plot, the trace's validation) comes with the first trace.
  const displayFetched = () => page.evaluate(() => performance.getEntriesByType('resource').some((e) => /\/trace-display-[^/]*\.js$/.test(e.name)));
  assert.equal(await displayFetched(), false, 'the display\'s code was fetched before a trace was opened');
  assert.equal(await chooseFile(page, probeFile).then((s) => s.kind), 'info');
  assert.equal(await page.isVisible('[data-testid="trace-viewer-layer"]'), true);
  assert.equal(await displayFetched(), true, 'the display\'s code was not fetched when a trace opened');
  assertNoProblems(problems, 'index.html, trace-viewer before and after a trace');
});

test('trace-viewer says which file it still shows after a broken one', async (t) => {
  const { page, problems } = await openTraceViewer(t);
  assert.equal((await chooseFile(page, probeFile)).kind, 'info');
  assert.match(await page.textContent('[data-testid="trace-viewer-shown"]'), /^Showing probe\.json \(/);
  const broken = variant('broken-after-good.json', (trace) => (trace.probe.device.kind = 'tpu'));
  const status = await chooseFile(page, broken);
  assert.equal(status.kind, 'error');
  assert.match(status.text, /^Could not open broken-after-good\.json: .*Still showing probe\.json \(/);
  assert.ok(!status.text.includes('\n'), 'one line');
  const shown = await page.textContent('[data-testid="trace-viewer-shown"]');
  assert.match(shown, /^Still showing the previous trace, probe\.json \(.*\): broken-after-good\.json did not open\.$/);
  // A good file again: the line names it, and no longer as the previous one.
  assert.equal((await chooseFile(page, probeFile)).kind, 'info');
  assert.match(await page.textContent('[data-testid="trace-viewer-shown"]'), /^Showing probe\.json \(/);
  assertNoProblems(problems, 'index.html, trace-viewer after a broken trace');
});
