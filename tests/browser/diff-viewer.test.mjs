// trace-viewer's check of a learner's own tensors (attn diff in the page, web/src/widgets/trace-viewer/diff-*.ts)
// against the native tool. The learner is tests/diff/numpy_llama.py, a NumPy Llama
// written apart from the core, run on the checkpoint `attn export-checkpoint` writes
// for seed 1 (the page's default): a correct file agrees; files with a mistake give
// the first divergence and the mistake `attn diff --json` gives for the same file, and
// the page draws the learner's values of that tensor exactly as the file holds them
// (NumPy reads them back), beside the core's; a broken file gets the core's message and
// the report stays. Nothing of attn diff is fetched before the learner uses the check.
// The checkpoint the page offers is `attn export-checkpoint`'s, byte for byte.
//
// Needs attn (ATTN, or build/native/native/attn) and Debian's python3 with NumPy
// (ANATOMY_PYTHON, or /usr/bin/python3); without NumPy the tests that need files are
// skipped, saying so.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, formatViolations, openPage, repoRoot, runAxe, startSite, waitForWidget, waitForWidgets } from './harness.mjs';

const attn = process.env.ATTN || path.join(repoRoot, 'build', 'native', 'native', 'attn');
const python = process.env.ANATOMY_PYTHON || '/usr/bin/python3';
const learner = path.join(repoRoot, 'tests', 'diff', 'numpy_llama.py');
const ids = '1,5,9,2,7,3,11,4'; // the page's default ids

// name -> [mistake or null, dtype, only these tensors]
const cases = {
  'correct.npz': [null, 'float64'],
  'rope.npz': ['rope_pairing_swapped', 'float64'],
  'kv.safetensors': ['kv_head_modulo', 'float32'],
  'softmax.npz': ['softmax_wrong_axis', 'float64'],
  'reshape.safetensors': ['heads_reshape_without_transpose', 'float64'],
  // Some tensors only: the core names no mistake, and says why.
  'logits-only.npz': ['scale_missing', 'float32', 'logits'],
  'ffn-norm.npz': ['rmsnorm_mean_subtracted', 'float64', 'layers.0.ffn_norm,final_norm'],
};

let site, workDir, model, numpyMissing = null;
const native = {}; // file name -> `attn diff --json`'s report

before(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-viewer-diff-'));
  model = path.join(workDir, 'tiny');
  execFileSync(attn, ['export-checkpoint', model], { stdio: 'ignore' }); // seed 1
  const numpy = spawnSync(python, ['-c', 'import numpy'], { encoding: 'utf8' });
  if (numpy.status !== 0)
    numpyMissing = `${python} cannot import numpy (${numpy.error?.message ?? (numpy.stderr.trim().split('\n').pop() || `exit status ${numpy.status}`)})`;
  else
    for (const [name, [mistake, dtype, only]] of Object.entries(cases)) {
      const file = path.join(workDir, name);
      execFileSync(python, [learner, '--checkpoint', model, '--tokens', ids, '--out', file, '--dtype', dtype,
        ...(mistake ? ['--mistake', mistake] : []), ...(only ? ['--only', only] : [])]);
      const run = spawnSync(attn, ['diff', '--checkpoint', model, '--tokens', ids, '--theirs', file, '--json'], { encoding: 'utf8' });
      assert.ok(run.status === 0 || run.status === 1, run.stderr);
      native[name] = JSON.parse(run.stdout);
    }
  site = await startSite();
});
after(async () => {
  await site?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

function needsNumpy(t) {
  if (!numpyMissing) return false;
  console.log(`SKIPPED: ${numpyMissing}; the NumPy learner cannot write files to check.`);
  t.skip(`SKIPPED: ${numpyMissing}`);
  return true;
}

/** One [T, columns] slice of a file's tensor as NumPy reads it: [b] for [B, T, X], [b, h] for [B, H, T, X]. */
function numpySlice(file, name, b, h) {
  const script = [
    'import json, sys; import numpy as np',
    `sys.path.insert(0, ${JSON.stringify(path.dirname(learner))}); from numpy_llama import read_safetensors`,
    'f, name, b, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])',
    "t = dict(np.load(f))[name] if f.endswith('.npz') else read_safetensors(f)[name]",
    'print(json.dumps((t[b] if h < 0 else t[b, h]).astype(float).tolist()))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-c', script, file, name, String(b), String(h ?? -1)], { encoding: 'utf8' }));
}

/** Chapter 1 with trace-viewer built; with `everyWidget`, every other widget too (each scrolled past). */
async function openTraceViewer(t, { everyWidget = false } = {}) {
  const opened = await openPage(site.browser, site.url('index.html'), { fresh: true });  // nothing cached: it watches the requests
  t.after(opened.close);
  const requests = [];
  opened.page.on('request', (request) => requests.push(request.url()));
  // The whole chapter mounting can take longer than 10 s on a shared, busy machine.
  const traceViewer = everyWidget ? (await waitForWidgets(opened.page, 30000)).find((w) => w.name === 'trace-viewer') : await waitForWidget(opened.page, 'trace-viewer', 30000);
  assert.equal(traceViewer?.ready, 'true', JSON.stringify(traceViewer));
  // Everything the page fetched so far, from navigation on, and what it fetches from now on.
  const fetched = async () => [...requests, ...(await opened.page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name)))];
  return { ...opened, fetched };
}

/** Chooses `file` in the check's file input and waits for the status line to say how it went. */
async function check(page, file) {
  const status = page.getByTestId('trace-viewer-diff-status');
  // Emptied first: checking the same file twice ends on the same words.
  await status.evaluate((node) => (node.textContent = ''));
  await page.setInputFiles('[data-testid="trace-viewer-diff-file"]', file);
  await page.waitForFunction(() => /^(Checked|Could not)/.test(document.querySelector('[data-testid="trace-viewer-diff-status"]').textContent));
  return { kind: await status.getAttribute('data-kind'), text: await status.textContent() };
}

/** The compared tensors as the page's table lists them: [name, verdict]. */
async function tableRows(page) {
  return page.locator('[data-testid="trace-viewer-diff-table"] tbody tr').evaluateAll((rows) =>
    rows.map((row) => [row.dataset.name, row.cells[1].textContent]));
}

const nativeRows = (report) =>
  report.compared.map((c) => [c.name, c.agrees ? 'agrees' : `DIVERGES (${c.mismatches.toLocaleString('en')} value${c.mismatches === 1 ? '' : 's'})`]);

const values = async (page, name) => JSON.parse(await page.getByTestId(`trace-viewer-diff-${name}`).getAttribute('data-values'));

test('the check loads attn diff only when used; a correct file agrees everywhere', async (t) => {
  if (needsNumpy(t)) return;
  const { page, problems, fetched } = await openTraceViewer(t, { everyWidget: true });
  const early = (await fetched()).filter((url) => /attention_trace_viewer|diff-panel|trace-viewer-core/.test(url));
  assert.deepEqual(early, [], 'the chapter fetched attn diff or its code before the check was used');
  assert.match(await page.getByTestId('trace-viewer-diff-shapes').textContent(), /1 sequence of 8 tokens .*\[1, 4, 8, 8\] q, q_rope, heads; \[1, 2, 8, 8\] k, v, k_rope/);

  const status = await check(page, path.join(workDir, 'correct.npz'));
  assert.equal(status.kind, 'info', status.text);
  assert.match(status.text, /^Checked correct\.npz \(.* kB\) against the core: seed 1, 1 × 8 tokens\.$/);
  assert.ok((await fetched()).some((url) => /attention_trace_viewer[^/]*\.wasm$/.test(url)), 'the diff module was not fetched on use');
  const report = native['correct.npz'];
  assert.equal(report.agrees, true);
  assert.equal(await page.getByTestId('trace-viewer-diff-verdict').textContent(), 'Every tensor you gave agrees with the core.');
  assert.deepEqual(await tableRows(page), nativeRows(report));
  assert.equal(await page.getByTestId('trace-viewer-diff-divergence').count(), 0);
  assert.equal(await page.getByTestId('trace-viewer-diff-tensors').isVisible(), false);
  assert.equal(await page.getByTestId('trace-viewer-diff-not-given').textContent(), 'You gave every tensor there is to check.');
  assertNoProblems(problems, 'index.html with a correct file checked');
});

test('a mistaken file: the page names the mistake and the first diverging tensor as attn diff --json does, and draws it', async (t) => {
  if (needsNumpy(t)) return;
  const { page, problems } = await openTraceViewer(t);
  for (const name of ['rope.npz', 'kv.safetensors', 'softmax.npz', 'reshape.safetensors']) {
    const file = path.join(workDir, name);
    const report = native[name];
    const d = report.first_divergence;
    assert.equal((await check(page, file)).kind, 'info', name);
    assert.equal(report.diagnosis?.mistake, cases[name][0], `${name}: the native report names its mistake`);

    assert.equal(await page.getByTestId('trace-viewer-diff-verdict').textContent(), `Your tensors leave the core's at ${d.tensor}.`, name);
    const divergence = page.getByTestId('trace-viewer-diff-divergence');
    assert.equal(await divergence.getAttribute('data-tensor'), d.tensor, name);
    assert.deepEqual(JSON.parse(await divergence.getAttribute('data-index')), d.index, name);
    const where = d.axes.map((axis) => `, ${axis} ${d[axis]}`).join('');
    assert.ok((await divergence.textContent()).includes(`${d.tensor}, layer ${d.layer}${where}: ours `), `${name}: ${await divergence.textContent()}`);
    const diagnosis = page.getByTestId('trace-viewer-diff-diagnosis');
    assert.equal(await diagnosis.getAttribute('data-mistake'), report.diagnosis.mistake, name);
    assert.ok((await diagnosis.textContent()).includes(report.diagnosis.description), name);
    assert.deepEqual(await tableRows(page), nativeRows(report), name);

    // The drawing: yours is the file's own slice (as NumPy reads it), ours the core's float64
    // forward (a correct float64 learner's within rounding), the difference yours - ours.
    const head = d.axes.includes('head') ? d.head : null;
    const tensors = page.getByTestId('trace-viewer-diff-tensors');
    assert.equal(await tensors.getAttribute('data-tensor'), d.tensor, name);
    assert.equal(await tensors.getAttribute('data-head'), head === null ? '' : String(head), name);
    const yours = await values(page, 'yours'), ours = await values(page, 'ours'), difference = await values(page, 'difference');
    assert.deepEqual(yours, numpySlice(file, d.tensor, d.sequence, head), `${name}: yours`);
    const correct = numpySlice(path.join(workDir, 'correct.npz'), d.tensor, d.sequence, head);
    ours.forEach((row, r) => row.forEach((x, c) => {
      if (d.tensor.endsWith('.scores') && c > r) return; // masked: not computed alike
      assert.ok(Math.abs(x - correct[r][c]) <= 1e-10 + 1e-8 * Math.abs(correct[r][c]), `${name}: ours[${r}][${c}] ${x} vs ${correct[r][c]}`);
    }));
    difference.forEach((row, r) => row.forEach((x, c) => assert.equal(x, yours[r][c] - ours[r][c], `${name}: difference[${r}][${c}]`)));
    // The diverging value sits in the drawn slice: yours and the core's there, as the report says.
    const [position, column] = d.index.slice(-2);
    assert.equal(yours[position][column], d.theirs, `${name}: yours at the divergence`);
    assert.equal(ours[position][column], d.ours, `${name}: ours at the divergence`);
  }
  const violations = (await runAxe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(violations.length, 0, formatViolations(violations));
  assertNoProblems(problems, 'index.html with mistaken files checked');
});

test('a file with some tensors only: the divergence and the advice attn diff gives, the tensors not given', async (t) => {
  if (needsNumpy(t)) return;
  const { page, problems } = await openTraceViewer(t);
  for (const [name, advice] of [
    ['logits-only.npz', /^Diagnosis: none\. It is the first tensor you gave; give the ones before it/],
    ['ffn-norm.npz', /^Diagnosis: none\. (No known mistake gives these values \(tried .*\)|The tensors you gave before it agree)/],
  ]) {
    const report = native[name];
    const d = report.first_divergence;
    assert.equal((await check(page, path.join(workDir, name))).kind, 'info', name);
    assert.equal(report.diagnosis, null, `${name}: the native report names no mistake`);
    assert.equal(await page.getByTestId('trace-viewer-diff-divergence').getAttribute('data-tensor'), d.tensor, name);
    assert.deepEqual(JSON.parse(await page.getByTestId('trace-viewer-diff-divergence').getAttribute('data-index')), d.index, name);
    assert.equal(await page.getByTestId('trace-viewer-diff-diagnosis').getAttribute('data-mistake'), '', name);
    assert.match(await page.getByTestId('trace-viewer-diff-diagnosis').textContent(), advice, name);
    for (const tried of report.mistakes_tried) assert.ok((await page.getByTestId('trace-viewer-diff-diagnosis').textContent()).includes(tried), `${name}: ${tried}`);
    assert.deepEqual(await tableRows(page), nativeRows(report), name);
    assert.equal(await page.getByTestId('trace-viewer-diff-not-given').textContent(), `Not given, so not checked: ${report.not_given.join(', ')}.`, name);
  }
  // logits: a [T, V] slice, one column per token of the vocabulary.
  await check(page, path.join(workDir, 'logits-only.npz'));
  const d = native['logits-only.npz'].first_divergence;
  assert.deepEqual(await values(page, 'yours'), numpySlice(path.join(workDir, 'logits-only.npz'), 'logits', d.sequence, null));
  assert.equal((await values(page, 'ours'))[0].length, 32);
  // ffn_norm, which the chapters' forward does not keep: drawn from the report like any other.
  await check(page, path.join(workDir, 'ffn-norm.npz'));
  const f = native['ffn-norm.npz'].first_divergence;
  assert.equal(f.tensor, 'layers.0.ffn_norm');
  assert.deepEqual(await values(page, 'yours'), numpySlice(path.join(workDir, 'ffn-norm.npz'), f.tensor, f.sequence, null));
  assert.equal((await values(page, 'ours'))[f.position][f.channel], f.ours);
  assertNoProblems(problems, 'index.html with partial files checked');
});

test('bad input gets the core\'s one-line message; the report stays and the check still answers', async (t) => {
  if (needsNumpy(t)) return;
  const { page, problems } = await openTraceViewer(t);
  const good = path.join(workDir, 'rope.npz');
  assert.equal((await check(page, good)).kind, 'info');
  const shown = { verdict: await page.getByTestId('trace-viewer-diff-verdict').textContent(), yours: await values(page, 'yours') };
  const kept = async (what) => {
    assert.equal(await page.getByTestId('trace-viewer-diff-verdict').textContent(), shown.verdict, what);
    assert.deepEqual(await values(page, 'yours'), shown.yours, what);
  };

  // A truncated archive: the core's message, the CLI's words after the file's name.
  const broken = path.join(workDir, 'broken.npz');
  fs.writeFileSync(broken, fs.readFileSync(good).subarray(0, 4000));
  const cli = spawnSync(attn, ['diff', '--checkpoint', model, '--tokens', ids, '--theirs', broken], { encoding: 'utf8' });
  assert.equal(cli.status, 2, cli.stderr);
  const reason = cli.stderr.trim().split(`${broken}: `).pop();
  let status = await check(page, broken);
  assert.equal(status.kind, 'error');
  assert.equal(status.text, `Could not check broken.npz: your file: ${reason}`);
  await kept('after a truncated file');

  // Ids of another length than the file's tensors: the core names the shape it expected.
  await page.getByTestId('trace-viewer-diff-ids').fill('1,5,9,2,7,3,11');
  await page.getByTestId('trace-viewer-diff-ids').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('[data-testid="trace-viewer-diff-status"]').dataset.kind === 'error');
  assert.match(await page.getByTestId('trace-viewer-diff-status').textContent(), /^Could not check rope\.npz: .*for 1 x 7 tokens it must be/);
  assert.match(await page.getByTestId('trace-viewer-diff-shapes').textContent(), /1 sequence of 7 tokens/);
  await kept('after ids of another length');
  // The ids it was made from check it again.
  await page.getByTestId('trace-viewer-diff-ids').fill(ids);
  await page.getByTestId('trace-viewer-diff-ids').dispatchEvent('change');
  await page.waitForFunction(() => /^Checked rope\.npz/.test(document.querySelector('[data-testid="trace-viewer-diff-status"]').textContent));
  await kept('checked again');

  // Not ids at all: the page says so before asking the core.
  await page.getByTestId('trace-viewer-diff-ids').fill('1,5,x');
  assert.match(await page.getByTestId('trace-viewer-diff-shapes').textContent(), /"x" is not a token id/);
  assert.equal(await page.getByTestId('trace-viewer-diff-ids').getAttribute('aria-invalid'), 'true');
  await page.getByTestId('trace-viewer-diff-ids').fill(ids);

  // A file of another kind entirely, then a good one again.
  status = await check(page, path.join(model, 'tokenizer.json'));
  assert.equal(status.kind, 'error');
  assert.equal(status.text, 'Could not check tokenizer.json: your file: neither a NumPy .npz archive nor a safetensors file');
  await kept('after a JSON file');
  assert.equal((await check(page, path.join(workDir, 'kv.safetensors'))).kind, 'info');
  assert.equal(await page.getByTestId('trace-viewer-diff-diagnosis').getAttribute('data-mistake'), 'kv_head_modulo');

  // A file dropped anywhere on the widget: tensors go to the check, not to the trace viewer.
  const traceStatus = await page.getByTestId('trace-viewer-status').textContent();
  await page.getByTestId('trace-viewer-diff-status').evaluate((node) => (node.textContent = ''));
  await page.evaluate((base64) => {
    const data = new DataTransfer();
    data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], 'dropped.npz'));
    document.querySelector('[data-widget="trace-viewer"]').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, fs.readFileSync(good).toString('base64'));
  await page.waitForFunction(() => /^Checked dropped\.npz/.test(document.querySelector('[data-testid="trace-viewer-diff-status"]').textContent));
  assert.equal(await page.getByTestId('trace-viewer-diff-diagnosis').getAttribute('data-mistake'), 'rope_pairing_swapped');
  assert.equal(await page.getByTestId('trace-viewer-status').textContent(), traceStatus);
  assertNoProblems(problems, 'index.html after bad input to the check');
});

test('the checkpoint the page offers is attn export-checkpoint\'s: model.safetensors byte for byte, the same config.json', async (t) => {
  const { page, problems, fetched } = await openTraceViewer(t, { everyWidget: true });
  assert.deepEqual((await fetched()).filter((url) => /attention_trace_viewer|diff-panel|trace-viewer-core/.test(url)), [], 'the trace viewer\'s module was fetched before use');
  const save = async (testId) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
    const file = path.join(workDir, `downloaded-${download.suggestedFilename()}`);
    await download.saveAs(file);
    return { name: download.suggestedFilename(), bytes: fs.readFileSync(file) };
  };
  const weights = await save('trace-viewer-diff-model');
  assert.equal(weights.name, 'model.safetensors');
  assert.ok(weights.bytes.equals(fs.readFileSync(path.join(model, 'model.safetensors'))), 'model.safetensors differs from attn export-checkpoint\'s');
  assert.match(await page.getByTestId('trace-viewer-diff-status').textContent(), new RegExp(`seed 1, float32, ${weights.bytes.length.toLocaleString('en')} bytes`));
  assert.ok((await fetched()).some((url) => /attention_trace_viewer[^/]*\.wasm$/.test(url)), 'the weights come from the trace viewer\'s module, fetched on use');

  const config = await save('trace-viewer-diff-config');
  assert.equal(config.name, 'config.json');
  assert.deepEqual(JSON.parse(config.bytes.toString('utf8')), JSON.parse(fs.readFileSync(path.join(model, 'config.json'), 'utf8')));
  assertNoProblems(problems, 'index.html after saving the checkpoint');
});
