// live-training, training the tiny model in the page, in headless Chromium: the chapter loads
// nothing of it until the trainer is opened; Start trains in a worker (the steps
// rise and the loss falls), Pause stops the steps, Continue resumes them, Reset
// empties the readout and the plot; the page's thread stays free while the worker
// trains; a text the core refuses shows the core's message and the widget still
// trains afterwards; the two heatmaps are redrawn with new numbers as it trains.
//
// The pasted-text tests need nothing beside the project. The excerpt test needs the
// Tiny Shakespeare excerpt that scripts/build-web.sh writes into web/dist from
// ../shared/corpora; without the corpus it fails naming the file, unless
// ANATOMY_NO_SHARED_MODELS=1 (then that test is skipped, the others run).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertNoProblems, distDir, formatViolations, layoutWidth, openPage, runAxe, startSite, waitForWidgets } from './harness.mjs';
import { shakespeare } from '../shared-models.mjs';
import { loadTrain } from '../wasm/load_core.mjs';

// Without the excerpt (a build without ../shared/corpora) the widget asks for it once,
// gets a 404 and says it trains on pasted text only: that request is expected then.
const excerptFile = path.join(distDir(), 'corpora', 'shakespeare-excerpt.txt.gz');
const hasExcerpt = fs.existsSync(excerptFile);
const expected = (problems) => {
  if (hasExcerpt) return problems;
  for (const kind of Object.keys(problems)) problems[kind] = problems[kind].filter((p) => !/404/.test(p) || !p.includes('shakespeare-excerpt'));
  return problems;
};

let site;
before(async () => { site = await startSite(); });
after(() => site?.close());

// A text to paste: seeded words with capitals and punctuation, so that every character
// of the default probe text is in its vocabulary and it has the 32 distinct
// characters the core's induction score needs (core/lessons/head_patterns.hpp).
function pastedText(characters) {
  const words = ('to be or not that is the question whether tis nobler in mind suffer slings arrows outrageous fortune ' +
    'take arms against sea of troubles quick brown fox jumps over lazy dog pack my box with five dozen liquor jugs').split(' ');
  const marks = [' ', ' ', ' ', ', ', ': ', '. ', '; ', '? ', '! ', '\n'];
  let state = 12345, out = '';
  const next = (n) => ((state = (state * 1103515245 + 12345) % 2147483648), state % n);
  while (out.length < characters) {
    const word = words[next(words.length)];
    out += (next(6) === 0 ? word[0].toUpperCase() + word.slice(1) : word) + marks[next(marks.length)];
  }
  return out;
}

const widget = '[data-widget="live-training"]';
const phase = (page) => page.getAttribute(widget + ' .widget-body', 'data-phase');
const number = async (page, selector, attribute) => Number(await page.getAttribute(selector, attribute));
const steps = (page) => number(page, '[data-testid="live-training-speed"]', 'data-steps');

async function openTrainer(t, options = {}) {
  const requests = [];
  const opened = await openPage(site.browser, site.url('index.html'), { ...options, fresh: true });  // nothing cached: it watches the requests
  t.after(opened.close);
  opened.page.on('request', (request) => requests.push(request.url()));
  const widgets = await waitForWidgets(opened.page);
  assert.equal(widgets.find((w) => w.name === 'live-training')?.ready, 'true', JSON.stringify(widgets.find((w) => w.name === 'live-training')));
  // attention_train is also the module of the Shakespeare figures, which
  // load it as waitForWidgets scrolls past them; the trainer's own code and text must wait.
  const early = requests.filter((url) => /live-training-(panel|worker)|corpora/.test(url));
  assert.deepEqual(early, [], 'the chapter fetched the trainer or its text before the widget was opened');
  await opened.page.getByTestId('live-training-open').click();
  await opened.page.waitForSelector('[data-testid="live-training-start"]');
  return { ...opened, requests };
}

test('live-training trains pasted text in a worker: start, pause, continue, reset; refused text shows the core\'s message', async (t) => {
  const { page, problems, requests } = await openTrainer(t);
  assert.ok(requests.some((url) => /live-training-panel[^/]*\.js$/.test(url)), 'the panel was not fetched on use');
  // The training text on offer: the excerpt when the build put it beside the page, else pasted text only, and why.
  if (hasExcerpt) {
    assert.equal(await page.getByTestId('live-training-source').inputValue(), 'excerpt');
  } else {
    assert.equal(await page.getByTestId('live-training-source').inputValue(), 'pasted');
    assert.equal(await page.locator('[data-testid="live-training-source"] option[value="excerpt"]').isDisabled(), true);
    assert.match(await page.getByTestId('live-training-no-excerpt').textContent(), /built without the Tiny Shakespeare excerpt/);
  }

  // A text too short for one held-out window: the core's own message, and nothing runs.
  await page.getByTestId('live-training-text').fill('Too short to train on.');
  await page.getByTestId('live-training-start').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="live-training-status"]').dataset.kind === 'error');
  const refused = await page.getByTestId('live-training-status').textContent();
  assert.match(refused, /held-out last tenth \(\d+\) is shorter than one window of 64/, refused);
  assert.equal(await phase(page), 'idle');
  assert.equal(await page.getByTestId('live-training-start').isEnabled(), true);

  // Still usable: a real text trains. The steps rise and the loss falls below its first value.
  const text = pastedText(30000);
  await page.getByTestId('live-training-text').fill(text);
  await page.getByTestId('live-training-start').click();
  await page.waitForFunction(() => {
    const chart = document.querySelector('[data-testid="live-training-loss-chart"]');
    return Number(chart.dataset.trainSteps) >= 100 && Number(chart.dataset.lastTrain) < Number(chart.dataset.firstTrain) - 0.3;
  }, null, { timeout: 30000 });
  assert.equal(await phase(page), 'running');
  assert.ok(await number(page, '[data-testid="live-training-loss-chart"]', 'data-heldout-points') >= 1, 'no held-out loss measured');
  assert.ok(await number(page, '[data-testid="live-training-speed"]', 'data-tokens-per-second') > 0);
  // The core's count: the text's characters, nine tenths trained on and one tenth held out.
  const started = await page.getByTestId('live-training-status').textContent();
  const [trained, heldout] = [...started.matchAll(/Training on ([\d,]+) characters|the last ([\d,]+)/g)].map((m) => Number((m[1] ?? m[2]).replace(/,/g, '')));
  assert.equal(trained + heldout, text.length, started);
  assert.equal(heldout, Math.floor(text.length / 10), started);

  // Each step is shared between workers where the machine has two cores or more
  // (live-training-team.ts), and gives the bits of one: the first 20 losses equal a
  // run of the same text and options in one wasm session under Node.
  const speed = '[data-testid="live-training-speed"]';
  const workers = await number(page, speed, 'data-workers');
  assert.equal(workers, Math.min(2, os.availableParallelism()), 'a batch of two shards on this machine\'s cores');
  assert.match(started, workers > 1 ? new RegExp(`each step shared between ${workers} workers`) : /to learn\.$/, started);
  const firstLosses = JSON.parse(await page.getAttribute(speed, 'data-first-losses'));
  const alone = new (await loadTrain()).TrainingSession();
  assert.equal(JSON.parse(alone.start(text, await page.getAttribute(speed, 'data-options'))).error, undefined);
  const oneSession = JSON.parse(alone.step(20)).losses;
  alone.delete();
  assert.equal(firstLosses.length, 20);
  assert.deepEqual(firstLosses, oneSession, `${workers} workers in the page, one session in Node`);

  // The heatmaps are redrawn with new numbers as training goes.
  const heatmap = '[data-testid="live-training-heatmap-a"]';
  await page.waitForSelector(`${heatmap}[data-probabilities]`);
  // Both read at once: a redraw between two reads would pair new numbers with old steps.
  const before = await page.evaluate((selector) => {
    const { steps, probabilities } = document.querySelector(selector).dataset;
    return { steps: Number(steps), p: probabilities };
  }, heatmap);
  await page.waitForFunction(([selector, s]) => Number(document.querySelector(selector).dataset.steps) > s, [heatmap, before.steps], { timeout: 10000 });
  assert.notEqual(await page.getAttribute(heatmap, 'data-probabilities'), before.p, 'the heatmap kept its numbers while the model trained');
  assert.ok(await page.locator('[data-testid="live-training-heatmap-b"][data-probabilities]').count(), 'the second heatmap is not drawn');
  assert.equal(await page.getByTestId('live-training-scores').locator('tbody tr').count(), 8, 'one score row per head (2 layers, 4 heads)');

  // The Shakespeare figures above live-training compute their numbers on the page's
  // thread, a background task each, when they come near the viewport; that is not live-training's
  // work, so those that started finish before the measurement.
  await page.waitForFunction(() => ['previous-token-head', 'induction-head', 'first-token-weight', 'loss-and-continuation']
    .every((name) => !/Loading/.test(document.querySelector(`[data-testid="${name}-status"]`)?.textContent ?? '')), null, { timeout: 20000 });

  // The page's thread stays free while the worker trains: over 3 s, a click is handled
  // within 100 ms, no frame's drawing (the widget's data-draw-ms-max) takes 50 ms, and the
  // long tasks (over 50 ms, as the browser marks them) add up to less than 300 ms (training
  // on this thread would fill most of the 3 s with them). On a loaded 2-core machine a long
  // task also counts time the thread waited for a core, hence the margins.
  const responsiveness = await page.evaluate(() => new Promise((resolve) => {
    const body = document.querySelector('[data-widget="live-training"] .widget-body');
    body.dataset.drawMsMax = '0';
    const longTasks = [];
    const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => Math.round(e.duration))));
    observer.observe({ type: 'longtask' });
    let last = performance.now(), worstFrame = 0, frames = 0;
    const frame = (now) => {
      worstFrame = Math.max(worstFrame, now - last);
      last = now;
      frames++;
      if (now - start < 3000) requestAnimationFrame(frame);
    };
    const start = performance.now();
    requestAnimationFrame(frame);
    const clicks = [];
    const probe = document.querySelector('[data-testid="live-training-probe"]');
    const onClick = (event) => clicks.push(performance.now() - event.timeStamp);
    probe.addEventListener('click', onClick);
    const timer = setInterval(() => probe.dispatchEvent(new MouseEvent('click', { bubbles: true })), 250);
    setTimeout(() => {
      clearInterval(timer);
      probe.removeEventListener('click', onClick);
      observer.disconnect();
      resolve({ longTasks, worstFrame: Math.round(worstFrame), frames, worstClick: Math.round(Math.max(...clicks)), drawMsMax: Number(body.dataset.drawMsMax) });
    }, 3000);
  }));
  console.log(`live-training while training: ${JSON.stringify(responsiveness)}`);
  assert.ok(responsiveness.drawMsMax < 50, `a frame's drawing took ${responsiveness.drawMsMax} ms`);
  const busy = responsiveness.longTasks.reduce((sum, ms) => sum + ms, 0);
  assert.ok(busy < 300, `long tasks on the page's thread: ${responsiveness.longTasks.join(', ')} ms`);
  assert.ok(responsiveness.worstClick < 100, `a click waited ${responsiveness.worstClick} ms`);

  // Pause: the worker stops after the chunk of steps it is in (about 40 ms of work, or one
  // step when a step takes longer), and the steps stay where they are. Timed in the page,
  // from the click to the worker's answer.
  const pauseMs = await page.evaluate(() => new Promise((resolve) => {
    const body = document.querySelector('[data-widget="live-training"] .widget-body');
    const start = performance.now();
    new MutationObserver((_, observer) => {
      if (body.dataset.phase !== 'paused') return;
      observer.disconnect();
      resolve(Math.round(performance.now() - start));
    }).observe(body, { attributes: true, attributeFilter: ['data-phase'] });
    document.querySelector('[data-testid="live-training-pause"]').click();
  }));
  assert.ok(pauseMs < 500, `the worker took ${pauseMs} ms to pause`);
  await page.waitForTimeout(200); // the readout is drawn in the next frame
  const paused = await steps(page);
  await page.waitForTimeout(1000);
  assert.equal(await steps(page), paused, 'steps went on after Pause');
  console.log(`live-training paused in ${pauseMs} ms at step ${paused}`);

  // Continue: the steps rise again from there.
  await page.getByTestId('live-training-start').click();
  await page.waitForFunction((s) => Number(document.querySelector('[data-testid="live-training-speed"]').dataset.steps) > s, paused, { timeout: 5000 });

  // Reset: back to step 0, the plot and the heatmaps empty, and nothing from the old run arrives later.
  await page.getByTestId('live-training-reset').click();
  await page.waitForTimeout(800);
  assert.equal(await steps(page), 0);
  assert.equal(await phase(page), 'idle');
  assert.equal(await number(page, '[data-testid="live-training-loss-chart"]', 'data-train-steps'), 0);
  assert.equal(await number(page, '[data-testid="live-training-loss-chart"]', 'data-heldout-points'), 0);
  assert.equal(await page.locator(`${heatmap}[data-probabilities]`).count(), 0, 'the heatmap kept the old run');
  assert.equal(await page.getByTestId('live-training-scores').locator('tbody tr').count(), 0);
  assert.equal(await page.locator('[data-testid="live-training-loss-chart"] path[data-series="train"]').count(), 0, 'the plot kept its line');

  // A probe text with a character the text lacks gets the core's message; the heatmaps come back when it is fixed.
  await page.getByTestId('live-training-start').click();
  await page.waitForSelector(`${heatmap}[data-probabilities]`, { timeout: 10000 });
  await page.getByTestId('live-training-probe').fill('XYZ 123');
  await page.waitForFunction(() => /not in this model's vocabulary/.test(document.querySelector('[data-testid="live-training-probe-status"]').textContent));
  await page.getByTestId('live-training-probe').fill('to be or not to be');
  await page.waitForFunction((selector) => JSON.parse(document.querySelector(selector)?.dataset.probabilities ?? '[]').length === 19, heatmap);
  await page.getByTestId('live-training-pause').click();
  assertNoProblems(expected(problems), 'index.html with live-training training pasted text');
});

test('live-training trains on the Shakespeare excerpt the build put beside the page; axe and 360 px', async (t) => {
  if (!shakespeare(t)) return;
  assert.ok(hasExcerpt, `${excerptFile} is missing: run scripts/build-web.sh (it writes the excerpt beside the page)`);
  const { page, problems } = await openTrainer(t, { width: 360, height: 800 });
  assert.equal(await page.getByTestId('live-training-source').inputValue(), 'excerpt');
  const option = await page.locator('[data-testid="live-training-source"] option[value="excerpt"]').textContent();
  const characters = Number(option.match(/the first ([\d,]+) characters/)[1].replace(/,/g, ''));
  assert.ok(characters > 150000, option);
  await page.getByTestId('live-training-start').click();
  await page.waitForFunction(() => /^Training on/.test(document.querySelector('[data-testid="live-training-status"]').textContent), null, { timeout: 10000 });
  const status = await page.getByTestId('live-training-status').textContent();
  // The held-out tenth and the rest make up the excerpt, as the core counted it.
  const [train, heldout] = [...status.matchAll(/Training on ([\d,]+) characters|the last ([\d,]+)/g)].map((m) => Number((m[1] ?? m[2]).replace(/,/g, '')));
  assert.equal(train + heldout, characters, status);
  await page.waitForFunction(() => {
    const chart = document.querySelector('[data-testid="live-training-loss-chart"]');
    return Number(chart.dataset.trainSteps) >= 100 && Number(chart.dataset.lastTrain) < Number(chart.dataset.firstTrain) - 0.5;
  }, null, { timeout: 30000 });
  await page.waitForSelector('[data-testid="live-training-scores"] tbody tr');
  await page.getByTestId('live-training-pause').click();
  await page.waitForFunction(() => document.querySelector('[data-widget="live-training"] .widget-body').dataset.phase === 'paused');
  const severe = (await runAxe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(severe.length, 0, formatViolations(severe));
  const layout = await layoutWidth(page);
  assert.ok(layout.scrollWidth <= layout.viewport, `the page is ${layout.scrollWidth} px wide at 360 px: ${JSON.stringify(layout.offenders)}`);
  assertNoProblems(problems, 'index.html with live-training training on the excerpt');
});
