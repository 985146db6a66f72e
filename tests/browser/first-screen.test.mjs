// The chapters' first screen (first-screen, web/src/widgets/first-screen/first-screen.ts) in headless Chromium:
// it is on screen at 1280 and 360 px, drawn before any other widget's code or the
// chapters' core is fetched, shows the head the training record names, says what the
// numbers show (checked against the whole checkpoint's forward in chapter 1's module,
// under Node), follows the pointer and the keyboard, and refuses text the model cannot
// read with a message while the last good line stays drawn.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, distDir, openPage, repoRoot, startSite } from './harness.mjs';
import { loadCore } from '../../wasm/load-node.mjs';
import { loadCheckpoint } from '../../web/src/lib/checkpoint-load.mjs';

const shipped = path.join(repoRoot, 'web', 'public', 'models', 'shakespeare');
const record = JSON.parse(fs.readFileSync(path.join(shipped, 'training.json'), 'utf8'));

let site;
before(async () => { site = await startSite(); });
after(() => site?.close());

/** The host's settings as the built page has them: {head, pattern, text}. */
function hostOf(page) {
  const html = fs.readFileSync(path.join(distDir(), page), "utf8");
  const tag = html.match(/<figure[^>]*data-widget="first-screen"[^>]*>/)[0];
  const attr = (name) => tag.match(new RegExp(`${name}="([^"]*)"`))[1];
  return { head: Number(attr('data-head')), pattern: attr('data-pattern'), text: attr('data-text') };
}

/** The pattern's mean weight for `head` of layer 0 on `text`, from the whole checkpoint (attention_core). */
async function wholeModelScore(text, head, pattern) {
  const module = await loadCore();
  const session = new module.CheckpointSession();
  const read = (file) => fs.readFileSync(path.join(shipped, file));
  const files = { config: read('config.json').toString(), model: new Uint8Array(read('model.safetensors')), tokenizer: read('tokenizer.json').toString() };
  assert.equal(JSON.parse(loadCheckpoint(session, files)).error, undefined);
  const rows = JSON.parse(session.forward(text, { capture: ['probabilities'] })).layers[0].probabilities[0][head];
  session.delete();
  let sum = 0;
  for (let t = 1; t < rows.length; t += 1) sum += rows[t][pattern === 'previous' ? t - 1 : t];
  return sum / (rows.length - 1);
}

async function ready(page) {
  await page.waitForSelector('[data-widget="first-screen"][data-ready]', { timeout: 10_000 });
  assert.equal(await page.getAttribute('[data-widget="first-screen"]', 'data-ready'), 'true');
}

for (const [pageName, patternName] of [['index.html', 'previous_token'], ['notebook.html', 'self']]) {
  test(`${pageName}: the first screen shows the record's strongest ${patternName} head and says what its numbers are`, async (t) => {
    const host = hostOf(pageName);
    const strongest = record.head_patterns.patterns.find((p) => p.name === patternName).strongest;
    assert.deepEqual([0, host.head], [strongest.layer, strongest.head], `the record's strongest ${patternName} head`);

    const { page, problems, close } = await openPage(site.browser, site.url(pageName), { width: 1280, height: 800, fresh: true });
    t.after(close);
    await ready(page);
    const summary = await page.getByTestId('first-screen-summary').textContent();
    const expected = Math.round((await wholeModelScore(host.text, host.head, host.pattern)) * 100);
    assert.match(summary, new RegExp(`head ${host.head} .* ${expected}% `), summary);
    const chars = await page.locator('[data-testid="first-screen-drawing"] text').allTextContents();
    assert.equal(chars.length, 1 + [...host.text].length);
    assert.ok(await page.locator('[data-testid="first-screen-drawing"] path').count() >= [...host.text].length / 2, 'arcs are drawn');
    assertNoProblems(problems, pageName);
  });
}

for (const view of [{ width: 1280, height: 800 }, { width: 360, height: 740 }]) {
  test(`at ${view.width} px the figure is on the first screen, drawn before any other widget's code or the core is fetched`, async (t) => {
    const { page, problems, close } = await openPage(site.browser, site.url('index.html'), { ...view, fresh: true });
    t.after(close);
    await ready(page);
    await page.waitForTimeout(500);  // anything the page would fetch eagerly has started by now
    const box = await page.getByTestId('first-screen-drawing').boundingBox();
    assert.ok(box && box.y < view.height, `the drawing starts at y = ${box?.y}, below the first screen`);
    const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name.split('/').pop()));
    const early = fetched.filter((f) => /^(attention_core|explorer|rope|trained-model|core-)/.test(f));
    assert.deepEqual(early, [], `fetched before any widget came near: ${fetched.join(', ')}`);
    // Scrolling to the explorer brings its code and the core.
    await page.locator('[data-widget="explorer"]').scrollIntoViewIfNeeded();
    await page.waitForSelector('[data-widget="explorer"][data-ready="true"]', { timeout: 10_000 });
    const later = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name.split('/').pop()));
    assert.ok(later.some((f) => f.startsWith('attention_core')) && later.some((f) => f.startsWith('explorer')), later.join(', '));
    assertNoProblems(problems, `index.html at ${view.width} px`);
  });
}

for (const pageName of ['index.html', 'notebook.html']) {
  test(`${pageName}: the figure is built from what the head started while the page parsed, each file fetched once`, async (t) => {
    const { page, problems, close } = await openPage(site.browser, site.url(pageName), { width: 1280, height: 800, fresh: true });
    t.after(close);
    await ready(page);
    const { left, started, resources } = await page.evaluate(() => ({
      left: [...Object.keys(self.anatomyEarly?.compiled ?? {}), ...Object.keys(self.anatomyEarly?.fetched ?? {})],
      started: self.anatomyEarly !== undefined,
      resources: performance.getEntriesByType('resource').map((r) => ({ file: r.name.split('/').pop(), start: r.startTime })),
    }));
    assert.ok(started, 'the head script did not run: no anatomyEarly');
    assert.deepEqual(left, [], 'early starts the page never took (it fetched its own instead)');
    const scriptStart = await page.evaluate(() => performance.getEntriesByName('anatomy:script-start')[0].startTime);
    for (const pattern of [/^attention_first_layer-.*\.wasm$/, /^config\.json$/, /^tokenizer\.json$/, /^first-layer\.safetensors$/]) {
      const hits = resources.filter((r) => pattern.test(r.file));
      assert.equal(hits.length, 1, `${pattern}: fetched ${hits.length} times`);
      assert.ok(hits[0].start < scriptStart, `${hits[0].file} was requested at ${hits[0].start} ms, after the page's script started (${scriptStart} ms)`);
    }
    assertNoProblems(problems, pageName);
  });
}

test('the figure follows the pointer and the keyboard, and refuses text it cannot read', async (t) => {
  const { page, problems, close } = await openPage(site.browser, site.url('index.html'), { fresh: true });
  t.after(close);
  await ready(page);
  const readout = page.getByTestId('first-screen-readout');
  const input = page.getByTestId('first-screen-text');
  assert.match(await readout.textContent(), /^Character 45, “\.”, reads “k” \d+%/);

  await page.getByTestId('first-screen-drawing').focus();
  await page.keyboard.press('ArrowLeft');
  assert.match(await readout.textContent(), /^Character 44, “k”, reads “a” \d+%/);
  await page.keyboard.press('Home');
  assert.match(await readout.textContent(), /^Character 1, “B”, reads /);

  // The pointer over the third character (a cell's centre, from the drawn text's position).
  const third = await page.locator('[data-testid="first-screen-drawing"] text').nth(3).boundingBox();
  await page.mouse.move(third.x + third.width / 2, third.y + third.height / 2);
  assert.match(await readout.textContent(), /^Character 3, “f”, reads /);

  await input.fill('To be, or not to be');
  assert.match(await readout.textContent(), /^Character 19, “e”, reads “b” \d+%/);
  const drawn = await page.getByTestId('first-screen-drawing').innerHTML();
  await input.fill('To be, or not to bé');
  assert.match(await page.getByTestId('first-screen-status').textContent(), /the model never saw "é".*Still showing “To be, or not to be”/);
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByTestId('first-screen-drawing').innerHTML(), drawn, 'the last good line stays drawn');
  await input.fill('x'.repeat(64));
  assert.match(await page.getByTestId('first-screen-status').textContent(), /at most 63 characters/);
  await input.fill('');
  assert.match(await page.getByTestId('first-screen-status').textContent(), /Type at least one character/);
  await input.fill('Romeo');
  assert.equal(await page.getByTestId('first-screen-status').textContent(), '');
  assert.equal(await input.getAttribute('aria-invalid'), null);
  assertNoProblems(problems, 'index.html');
});

test('when its weights cannot be fetched, the figure says so and the rest of the page still builds', async (t) => {
  const { page, close } = await openPage(site.browser, site.url('index.html'), { fresh: true });
  t.after(close);
  await page.route('**/first-layer.safetensors', (route) => route.abort());
  await page.reload();
  await page.waitForSelector('[data-widget="first-screen"][data-ready]', { timeout: 10_000 });
  assert.equal(await page.getAttribute('[data-widget="first-screen"]', 'data-ready'), 'error');
  assert.match(await page.locator('[data-widget="first-screen"] .status').textContent(), /This widget failed to start: .*first-layer\.safetensors/);
  await page.locator('[data-widget="rope"]').scrollIntoViewIfNeeded();
  await page.waitForSelector('[data-widget="rope"][data-ready="true"]', { timeout: 10_000 });
});

/**
 * A server that sends `page` only up to the end of the line after first-screen's figure (the build's
 * inline import of the page's script, vite.config.ts) and the rest when release() is
 * called; every other file comes from the site's own server.
 */
async function heldPageServer(pageName) {
  const html = fs.readFileSync(path.join(distDir(), pageName), 'utf8');
  const figureEnd = html.indexOf('</figure>', html.indexOf('data-widget="first-screen"'));
  const cut = html.indexOf('\n', html.indexOf('\n', figureEnd) + 1) + 1;
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  const server = http.createServer(async (request, response) => {
    if (request.url === `/${pageName}`) {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.write(html.slice(0, cut));
      await released;
      response.end(html.slice(cut));
      return;
    }
    const upstream = await fetch(site.url(request.url.slice(1)));
    response.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
    response.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/${pageName}`,
    release,
    close: () => { release(); server.closeAllConnections(); server.close(); },
  };
}

for (const pageName of ['index.html', 'notebook.html']) {
  test(`${pageName}: the figure is drawn while the rest of the page is still arriving, and the rest is built after`, async (t) => {
    const held = await heldPageServer(pageName);
    t.after(held.close);
    const { page, problems, close } = await openPage(site.browser, held.url, { width: 1280, height: 800, waitUntil: 'commit', fresh: true });
    t.after(close);
    // Only the head and the first screen have arrived: the page's script must already run.
    const drawn = await page.waitForFunction(() => document.querySelector('[data-widget="first-screen"]')?.dataset.ready === 'true'
      && performance.getEntriesByName('anatomy:first-screen').length > 0, null, { timeout: 10_000 }).then(() => true, () => false);
    assert.equal(await page.evaluate(() => document.readyState), 'loading', 'the page arrived in full before the check');
    assert.ok(drawn, 'first-screen was not drawn while the page was still arriving: the page\'s script waits for the whole HTML');
    held.release();
    await page.waitForFunction(() => document.readyState === 'complete', null, { timeout: 10_000 });
    const other = pageName === 'index.html' ? 'rope' : 'soft-lookup';
    await page.locator(`[data-widget="${other}"]`).scrollIntoViewIfNeeded();
    await page.waitForSelector(`[data-widget="${other}"][data-ready="true"]`, { timeout: 10_000 });
    assert.equal(await page.locator('[data-widget="first-screen"] .first-screen-drawing').count(), 1, 'first-screen was built once');
    assertNoProblems(problems, pageName);
  });
}
