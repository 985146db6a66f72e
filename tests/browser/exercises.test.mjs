// The exercises page in headless Chromium (see harness.mjs), used the way a learner
// uses it: code typed into the CodeMirror editor, the Run button, the report.
//
//   python:      the Python signature sits beside the JavaScript one, with the tools/judge.py command
//   syntax:      a syntax error names its line; a thrown exception its message and line
//   network:     the learner's code cannot reach the network: fetch, XMLHttpRequest, WebSocket,
//                EventSource and importScripts throw saying so, code with import() is refused
//                before it runs; no request leaves the page
//   diagnosis:   two known mistakes come back with the judge's named diagnosis; axe finds
//                nothing serious in the page with a report and its hints open; code that only
//                some failing tests show as a mistake gets a diagnosis that counts them, as
//                the tests' own "Looks like" lines do
//   persistence: code and the passed state survive a reload; export then import carries
//                them to a fresh browser profile; a malformed file is refused with a message
//   keyboard:    Ctrl+Enter in the editor runs the exercise and adds no line (CodeMirror's
//                default keymap binds it to "insert a blank line"; the page's binding wins)
//   restore:     the last run's report (verdict, diagnosis) comes back after a reload,
//                saying it is the kept one and whether the code changed since
//   lean:        the chapter pages load no CodeMirror; each page fetches its own wasm module
// What is timed (a verdict's delay, the page answering during an endless loop, Stop) is in
// exercises-timing.test.mjs, which runs alone. The solutions typed in come from
// the exercise folders (exercises/NN-<id>/: solution.js and the mistakes' edits of it).
// Run by ctest (ANATOMY_WEB_DIST set), or by hand after building the page:
//   (cd web && npm ci && npm run build) && node --test tests/browser/exercises.test.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { assertNoProblems, distDir, formatViolations, openPage, runAxe, screenshot, startSite } from './harness.mjs';
import { editorText, openExercise, run, setCode, solution } from './exercise-page.mjs';

let site;
before(async () => {
  if (!fs.existsSync(path.join(distDir(), 'exercises.html'))) {
    assert.fail(`${distDir()} has no exercises.html: rebuild the page (cd web && npm ci && npm run build)`);
  }
  site = await startSite();
});
after(async () => {
  await site?.close();
});

test('the Python signature is shown beside the JavaScript one, with the command that judges it', async (t) => {
  const { page, problems, close } = await openExercise(site, 'softmax');
  t.after(close);
  const js = page.getByTestId('js-signature');
  const python = page.getByTestId('python-signature');
  assert.equal(await js.textContent(), 'function softmax(x)');
  assert.match(await python.textContent(), /^def softmax\(x: np\.ndarray\) -> np\.ndarray:\n {4}# x \[R, C\] -> \[R, C\]$/);
  const [jsBox, pythonBox] = [await js.boundingBox(), await python.boundingBox()];
  assert.ok(pythonBox.x > jsBox.x + jsBox.width && Math.abs(pythonBox.y - jsBox.y) < 1, 'side by side at 1280 px');
  assert.match(await page.locator('.python-help').textContent(), /python3 tools\/judge\.py softmax my_softmax\.py/);
  await page.getByRole('link', { name: /One decode step/ }).click();
  assert.match(await python.textContent(), /^def decode_step\(q: np\.ndarray, k_cache: np\.ndarray/);
  assert.match(await page.locator('.python-help').textContent(), /python3 tools\/judge\.py decodeStep my_decode_step\.py/);
  assertNoProblems(problems, 'exercises.html');
});

test('a syntax error names its line; a thrown exception its message and line', async (t) => {
  const { page, problems, close } = await openExercise(site, 'softmax');
  t.after(close);
  await setCode(page, 'function softmax(x) {\n  const y = 1;\n  return x +* y;\n}\n');
  await run(page);
  const syntax = await page.getByTestId('syntax-error').textContent();
  assert.match(syntax, /line 3, column 13/);
  assert.match(syntax, /Unexpected token '\*'/);
  assert.equal(await page.locator('.cm-error-line').textContent(), '  return x +* y;', 'the editor marks the line');

  await setCode(page, '// first line\nfunction softmax(x) {\n  return x.map((row) => row.missing.length);\n}\n');
  await run(page);
  const report = await page.getByTestId('results').textContent();
  assert.match(report, /TypeError: Cannot read properties of undefined \(reading 'length'\) \(line 3, column \d+\)/);
  await page.getByRole('button', { name: 'Show line 3' }).first().click();
  assert.match(await page.locator('.cm-error-line').textContent(), /row\.missing\.length/);
  assertNoProblems(problems, 'exercises.html');
});

test('the sandbox has no network: each way to one throws saying so, and code with import() is refused', async (t) => {
  const { page, problems, close } = await openExercise(site, 'softmax');
  t.after(close);
  // The page says so where it explains the worker.
  assert.match(await page.locator('main').textContent(), /The worker has no network/);
  await setCode(page, [
    'function softmax(x) {',
    '  const tried = [];',
    '  const attempt = (what, f) => { try { f(); tried.push(`${what} ran`); } catch (e) { tried.push(e.message); } };',
    "  attempt('fetch', () => fetch('http://example.com/a'));",
    "  attempt('XMLHttpRequest', () => { const r = new XMLHttpRequest(); r.open('GET', 'http://example.com/b'); r.send(); });",
    "  attempt('WebSocket', () => new WebSocket('ws://example.com/c'));",
    "  attempt('EventSource', () => new EventSource('http://example.com/d'));",
    "  attempt('importScripts', () => importScripts('http://example.com/e.js'));",
    "  attempt('restore', () => { delete self.fetch; self.fetch = 1; fetch('http://example.com/g'); });",
    "  throw new Error(tried.join('; '));",
    '}',
  ].join('\n'));
  await run(page);
  const report = await page.getByTestId('results').textContent();
  for (const name of ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts'])
    assert.match(report, new RegExp(`${name} is switched off: exercise code runs with no network`), name);
  assert.doesNotMatch(report, / ran\b/);
  // import() is syntax, not a function to switch off: code that holds it does not run at all.
  await setCode(page, "function softmax(x) {\n  import('http://example.com/f.js');\n  return x;\n}\n");
  await run(page);
  assert.match(await page.getByTestId('results').textContent(), /import\(\) is switched off: exercise code runs with no network/);
  await page.waitForTimeout(300); // time for a request to show if one had been sent
  assert.deepEqual(problems.nonLocalRequests, []);
  assertNoProblems(problems, 'exercises.html');
});

test('known mistakes come back with the judge\'s diagnosis', async (t) => {
  const { page, problems, close } = await openExercise(site, 'attention');
  t.after(close);
  await setCode(page, solution('attention', 'mask_after_softmax'));
  await run(page);
  const diagnosis = page.getByTestId('diagnosis');
  assert.equal(await diagnosis.getAttribute('data-mistake'), 'mask_after_softmax');
  assert.match(await diagnosis.textContent(), /Mask applied after softmax/);
  const report = await page.getByTestId('results').textContent();
  assert.match(report, /First mismatch/);
  assert.match(report, /≤ 1e-9 \+ 1e-6/, 'the tolerance is shown');
  await screenshot(page, 'exercises-diagnosis-1280');
  // pages.test.mjs checks the page as it opens; this is the page with a report, hints open.
  await page.locator('details').evaluateAll((all) => all.forEach((d) => (d.open = true)));
  const severe = (await runAxe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(severe.length, 0, `axe on a report:\n${formatViolations(severe)}`);

  await page.getByRole('link', { name: /RMSNorm/ }).click();
  await page.waitForURL(/e=rmsnorm/);
  await setCode(page, solution('rmsnorm', 'rms_eps_outside_sqrt'));
  await run(page);
  assert.equal(await page.getByTestId('diagnosis').getAttribute('data-mistake'), 'rms_eps_outside_sqrt');
  assertNoProblems(problems, 'exercises.html');
});

test('a diagnosis that some failing tests show: the summary counts them, as the tests\' own "Looks like" do', async (t) => {
  const { page, problems, close } = await openExercise(site, 'softmaxWithSink');
  t.after(close);
  // A plain softmax with zeros for a fully masked row (a partial mistake in exercises/02-softmaxWithSink/mistakes.json).
  await setCode(page, solution('softmaxWithSink', 'zero_on_masked_rows'));
  await run(page);
  const results = page.getByTestId('results');
  const looksLike = await results.locator('.case-fail').evaluateAll((items) => items.map((item) => {
    const terms = [...item.querySelectorAll('dt')];
    const row = terms.find((dt) => dt.textContent === 'Looks like');
    return row ? row.nextElementSibling.textContent : null;
  }));
  assert.deepEqual(looksLike, ['The sink left out', 'The sink left out', 'The sink left out', null]);
  assert.equal(await page.getByTestId('diagnosis').getAttribute('data-mistake'), 'sink_ignored');
  assert.equal(await page.getByTestId('diagnosis-summary').textContent(),
    '3 of the 4 failing tests look like this mistake; the other matches none of the mistakes the judge knows.');
  assert.equal(await results.locator('.no-diagnosis').count(), 0, 'the report also says the outputs match no mistake');
  assertNoProblems(problems, 'exercises.html');
});

test('code and progress survive a reload, and travel by export and import', async (t) => {
  const { page, problems, close } = await openExercise(site, 'attentionFlops');
  t.after(close);
  await setCode(page, solution('attentionFlops', 'solution'));
  await run(page);
  await page.getByRole('link', { name: /Grouped-query attention/ }).click();
  await page.waitForURL(/e=groupedQueryAttention/);
  await setCode(page, 'function groupedQueryAttention(q, k, v) {\n  // half done\n}\n');
  await page.waitForTimeout(600); // the editor saves 300 ms after the last keystroke

  await page.reload();
  await page.waitForSelector('body[data-judge-ready]');
  assert.match(await editorText(page), /half done/);
  assert.equal(await page.getByTestId('state-attentionFlops').textContent(), 'passed');
  assert.equal(await page.getByTestId('state-groupedQueryAttention').textContent(), 'not tried');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
  const exportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anatomy-export-'));
  t.after(() => fs.rmSync(exportDir, { recursive: true, force: true }));
  const exported = path.join(exportDir, download.suggestedFilename());
  await download.saveAs(exported);
  const saved = JSON.parse(fs.readFileSync(exported, 'utf8'));
  assert.equal(saved.format, 'attention-anatomy-exercises');
  assert.equal(saved.exercises.attentionFlops.status, 'passed');

  // A fresh browser context has no local storage: import the file there.
  const fresh = await openExercise(site, 'groupedQueryAttention');
  t.after(fresh.close);
  assert.equal(await fresh.page.getByTestId('state-attentionFlops').textContent(), 'not tried');
  const malformed = path.join(path.dirname(exported), 'broken.json');
  fs.writeFileSync(malformed, '{"format": "attention-anatomy-exercises", "exercises": ');
  await fresh.page.getByTestId('import').setInputFiles(malformed);
  const refusal = fresh.page.locator('#progress-status');
  await refusal.filter({ hasText: 'not imported' }).waitFor();
  assert.match(await refusal.textContent(), /broken\.json was not imported: it is not valid JSON/);
  assert.equal(await refusal.getAttribute('role'), 'alert');
  fs.writeFileSync(malformed, '{"hello": "world"}');
  await fresh.page.getByTestId('import').setInputFiles(malformed);
  await refusal.filter({ hasText: 'not an exercises file' }).waitFor();

  await fresh.page.getByTestId('import').setInputFiles(exported);
  await refusal.filter({ hasText: 'Imported' }).waitFor();
  assert.equal(await fresh.page.getByTestId('state-attentionFlops').textContent(), 'passed');
  assert.match(await editorText(fresh.page), /half done/);
  assertNoProblems(problems, 'exercises.html');
  assertNoProblems(fresh.problems, 'exercises.html after import');
});

test('Ctrl+Enter in the editor runs the exercise and adds no line', async (t) => {
  const { page, problems, close } = await openExercise(site, 'attentionFlops');
  t.after(close);
  await setCode(page, solution('attentionFlops', 'solution'));
  await page.keyboard.type('// typed\n');
  const typed = await editorText(page);
  await page.keyboard.press('Control+Enter');
  await page.getByTestId('verdict').waitFor({ timeout: 10_000 });
  assert.match(await page.getByTestId('verdict').textContent(), /pass/i);
  assert.equal(await editorText(page), typed, 'Ctrl+Enter changed the code');
  assertNoProblems(problems, 'exercises.html (Ctrl+Enter)');
});

test('the last run\'s report comes back after a reload', async (t) => {
  const { page, problems, close } = await openExercise(site, 'attentionFlops');
  t.after(close);
  await setCode(page, solution('attentionFlops', 'flops_counted_macs'));
  await run(page);
  const verdict = await page.getByTestId('verdict').textContent();
  const diagnosis = await page.getByTestId('diagnosis').getAttribute('data-mistake');
  assert.ok(diagnosis, 'the known mistake got no diagnosis');

  await page.reload();
  await page.waitForSelector('body[data-judge-ready]');
  assert.equal(await page.getByTestId('verdict').textContent(), verdict, 'the report did not come back after a reload');
  assert.equal(await page.getByTestId('diagnosis').getAttribute('data-mistake'), diagnosis);
  assert.equal(await page.getByTestId('results').getAttribute('data-restored'), 'true');
  const status = page.getByTestId('run-status');
  assert.match(await status.textContent(), /last run, .*kept in this browser: .*tests passed/i);
  assert.doesNotMatch(await status.textContent(), /changed since/);

  // Edited code: the kept report says so.
  await page.locator('.cm-content').click();
  await page.keyboard.type('// edited\n');
  await page.waitForTimeout(600); // the editor saves 300 ms after the last keystroke
  await page.reload();
  await page.waitForSelector('body[data-judge-ready]');
  assert.match(await status.textContent(), /Your code has changed since/);
  // After a run the page starts the next run's sandbox worker at once; a reload while
  // its script is still arriving cancels that request. The test's reloads cause it.
  problems.failedRequests = problems.failedRequests.filter((line) => !/sandbox-worker[^ ]*\.js: net::ERR_ABORTED$/.test(line));
  assertNoProblems(problems, 'exercises.html (restored report)');
});

test('the chapter pages load no CodeMirror', async (t) => {
  for (const name of ['index.html', 'notebook.html']) {
    const scripts = [];
    const opened = await openPage(site.browser, site.url(name));
    t.after(opened.close);
    const urls = await opened.page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((u) => u.endsWith('.js')));
    for (const url of urls) scripts.push(await (await fetch(url)).text());
    assert.ok(scripts.length > 0, `${name} loaded no scripts?`);
    for (const [i, text] of scripts.entries()) {
      assert.ok(!text.includes('cm-content') && !text.includes('EditorView'), `${name}: ${urls[i]} contains CodeMirror`);
    }
  }
});

test('each page fetches its own wasm module only: the judge here, attention_core on chapter 1, attention_notebook on the notebook', async (t) => {
  const wasmFetched = (page) => page.evaluate(() =>
    performance.getEntriesByType('resource').map((e) => e.name).filter((u) => u.endsWith('.wasm')).map((u) => u.split('/').pop()));
  const exercises = await openExercise(site, 'softmax');
  t.after(exercises.close);
  const here = await wasmFetched(exercises.page);
  assert.ok(here.some((f) => f.startsWith('attention_judge')), `the exercises page fetched ${here.join(', ') || 'no wasm'}`);
  assert.ok(!here.some((f) => f.startsWith('attention_core')), `the exercises page fetched the chapters' core: ${here.join(', ')}`);

  const chapter = await openPage(site.browser, site.url('index.html'));
  t.after(chapter.close);
  await chapter.page.locator('[data-widget="rope"]').scrollIntoViewIfNeeded();  // widgets build near the viewport
  await chapter.page.waitForSelector('[data-widget="rope"][data-ready="true"]', { timeout: 10_000 });
  const there = await wasmFetched(chapter.page);
  assert.ok(there.some((f) => f.startsWith('attention_core')), `index.html fetched ${there.join(', ') || 'no wasm'}`);
  assert.ok(!there.some((f) => f.startsWith('attention_judge')), `index.html fetched the judge: ${there.join(', ')}`);
  assert.ok(!there.some((f) => f.startsWith('attention_notebook')), `index.html fetched the notebook's module: ${there.join(', ')}`);

  const notebook = await openPage(site.browser, site.url('notebook.html'));
  t.after(notebook.close);
  await notebook.page.locator('[data-widget="kv-stepper"]').scrollIntoViewIfNeeded();  // the KV stepper: a decode session
  await notebook.page.waitForSelector('[data-widget="kv-stepper"][data-ready="true"]', { timeout: 10_000 });
  const own = await wasmFetched(notebook.page);
  assert.ok(own.some((f) => f.startsWith('attention_notebook')), `notebook.html fetched ${own.join(', ') || 'no wasm'}`);
  assert.ok(!own.some((f) => /^attention_(core|judge)/.test(f)), `notebook.html fetched another page's module: ${own.join(', ')}`);
});
