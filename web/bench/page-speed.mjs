// How fast the built page is, on localhost in headless Chromium.
//
//   first figure   navigation start -> the end of the frame in which first-screen, chapter 1's first
//                  screen (a trained head drawn over a line of Shakespeare), is drawn
//                  (its mark anatomy:first-screen; see watchFirstFigure), by
//                  performance.now() in the page; median of 10 cold loads,
//                  each in a new browser context (empty cache)                  target < 500 ms
//                  with the median time of each milestone on the way: response end, DOM
//                  interactive, DOMContentLoaded, the first screen's wasm fetched, the
//                  page's script started, the first screen's module and weights ready,
//                  first-screen near the viewport and built (user-timing marks, lib/widget.ts)
//   size           gzip level 9 (node:zlib) of .js and .wasm files, apart from CSS, fonts,
//                  HTML and model files (listed on their own):
//                  of chapter 1, what it had fetched when first-screen was drawn (resource timing,
//                  median load)                                                 target < 200 kB
//                  of each page, what it fetches on load, left at the top for 1.5 s, and
//                  what it has fetched once a reader has scrolled through it without using
//                  any widget (every widget built: each widget's code, the chapters' core,
//                  the Shakespeare sections' module; the exercise sandbox worker with its
//                  page); the target is held to the second                   target < 250 kB a chapter
//   update         one change of a widget's control until it has drawn, median of 20:
//                  explorer: its layer/head select; mask-gallery at T = S = 16384, tile 16 (mask-gallery-T, mask-gallery-S,
//                  mask-gallery-tile or mask-gallery-tile-q + mask-gallery-tile-k): each mask of its kind select in
//                  turn (or T toggled 16384 <-> 16368 if it has none)          target < 16 ms
//
// How an update is timed, inside the page: t0 = performance.now(); set the control and fire
// input + change; the widget's work ends when it signals (it writes data-ms, data-updated,
// data-updated-ms or the like on any element inside its host; explorer writes data-ms on its
// timing line, and a numeric *-ms value is also reported as the widget's own figure) or,
// for a widget that does not signal, when the synchronous event handlers return. Then the next animation frame runs, and a message posted from it marks the end
// of that frame's rendering. The figure is the busy time:
//     (done - t0) + (after the frame's rendering - frame start)
// which leaves out the idle wait for the next vsync (up to 16.7 ms at 60 Hz, which would
// otherwise swamp a 16 ms target); the wall time (after rendering - t0) is in the JSON.
//
// Usage, after building the page (cd web && npm ci && npm run build):
//   node web/bench/page-speed.mjs            a table
//   node web/bench/page-speed.mjs --json     JSON on stdout (the table goes to stderr)
//   node web/bench/page-speed.mjs --against DIR
//                                            also another build of the page (a copy of an
//                                            earlier web/dist), its cold loads interleaved
//                                            with this one's, one each in turn: on a shared
//                                            machine whose load moves this figure by 100 ms
//                                            between runs, the side-by-side medians are the
//                                            comparison to quote
// Needs Debian's chromium (scripts/install-deps.sh). Not part of ctest: timings depend on
// the machine. kB here is 1000 bytes, as in Vite's build report.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { distDir, openPage, startServer, startSite, waitForWidgets } from '../../tests/browser/harness.mjs';
import { median, round } from './stats.mjs';

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log('usage: node web/bench/page-speed.mjs [--json] [--against DIR]');
  process.exit(0);
}
const asJson = args.includes('--json');
const againstAt = args.indexOf('--against');
const againstDir = againstAt >= 0 ? args[againstAt + 1] : null;
if (againstAt >= 0 && (!againstDir || !fs.existsSync(path.join(againstDir, 'index.html')))) {
  console.error(`page-speed: --against needs a folder holding a built page (index.html): ${againstDir ?? 'none given'}`);
  process.exit(2);
}
const out = asJson ? (line) => process.stderr.write(line + '\n') : (line) => console.log(line);
const progress = (line) => process.stderr.write(`page-speed: ${line}\n`);

const coldLoads = 10;
const updates = 20;
// The page's targets: the first figure drawn, the wasm and JavaScript a chapter loads, what
// comes before the first figure, and one widget update (a frame at 60 Hz).
const targets = { firstFigureMs: 500, wasmJsGzipBytes: 250_000, beforeFirstFigureGzipBytes: 200_000, updateMs: 16 };
const maskGallerySize = { T: 16384, S: 16384, tile: 16 };


// ---- Size of web/dist ----

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

function measureSize(dist) {
  const groups = {
    wasm_js: { match: /\.(m?js|wasm)$/i, files: [] },
    css: { match: /\.css$/i, files: [] },
    fonts: { match: /\.(woff2?|ttf|otf|eot)$/i, files: [] },
    html: { match: /\.html$/i, files: [] },
  };
  for (const file of walk(dist)) {
    const group = Object.values(groups).find((g) => g.match.test(file));
    if (!group) continue;
    const body = fs.readFileSync(file);
    group.files.push({
      file: path.relative(dist, file),
      bytes: body.length,
      gzip_bytes: zlib.gzipSync(body, { level: 9 }).length,
    });
  }
  const result = {};
  for (const [name, group] of Object.entries(groups)) {
    result[name] = {
      bytes: group.files.reduce((sum, f) => sum + f.bytes, 0),
      gzip_bytes: group.files.reduce((sum, f) => sum + f.gzip_bytes, 0),
      files: group.files.sort((a, b) => b.gzip_bytes - a.gzip_bytes),
    };
  }
  // Browsers fetch only the best format they support; KaTeX ships three of each font.
  const woff2 = result.fonts.files.filter((f) => f.file.endsWith('.woff2'));
  result.fonts.woff2_bytes = woff2.reduce((sum, f) => sum + f.bytes, 0);
  return result;
}

// ---- First figure ----

// Runs in the page before its scripts: notes when first-screen has drawn (its user-timing mark
// anatomy:first-screen, set right after the drawing is built), and the end of the frame
// that shows it. first-screen draws, and marks, in a ResizeObserver callback: inside the rendering
// of a frame, whose style, layout and paint then go on with the drawing in it. A task
// posted at the mark runs only after that frame is rendered; it is posted user-blocking
// so that it runs before the page's own next task, which would otherwise be counted too.
// The mark is caught as it is made (performance.mark wrapped), not through a
// PerformanceObserver, whose callback comes a task or more later: waiting from there
// for another frame counted one frame too many (40 to 140 ms here). Not a
// MutationObserver on the document either: watching every node the parser adds slowed
// the load it measured.
function watchFirstFigure() {
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    const entry = mark(name, options);
    if (name === 'anatomy:first-screen' && !window.__pageSpeed) {
      const readyAt = entry.startTime;
      scheduler.postTask(() => {
        window.__pageSpeed = { readyAt, frameAt: performance.now() };
      }, { priority: 'user-blocking' });
    }
    return entry;
  };
  // A widget that fails shows its message instead: report it rather than wait.
  addEventListener('DOMContentLoaded', () => {
    const host = document.querySelector('[data-widget="first-screen"]');
    if (!host) return;
    new MutationObserver(() => {
      if (host.dataset.ready === 'error') window.__pageSpeed = { error: host.querySelector('.status')?.textContent?.trim() ?? 'data-ready=error' };
    }).observe(host, { attributes: true, attributeFilter: ['data-ready'] });
  });
}

const wasmOrJs = /\.(m?js|wasm)$/;
const fileOf = (url) => new URL(url).pathname.replace(/^\//, '');

// A model file's gzip -9 size, read and compressed once however many loads fetch it.
const modelGzipSizes = new Map();
function modelGzipBytes(file) {
  if (!modelGzipSizes.has(file)) modelGzipSizes.set(file, zlib.gzipSync(fs.readFileSync(path.join(distDir(), file)), { level: 9 }).length);
  return modelGzipSizes.get(file);
}

/**
 * One cold load of `url` in a new context, until first-screen's frame has ended: {frame_at_ms,
 * ready_at_ms} and what `measure(page, readyAt)` returns, or {skipped: why}.
 */
async function coldLoad(browser, url, measure = async () => ({})) {
  const opened = await openPage(browser, url, { initScript: watchFirstFigure });
  try {
    const handle = await opened.page.waitForFunction(() => window.__pageSpeed, null, { timeout: 30000 }).catch(() => null);
    const result = handle ? await handle.jsonValue() : null;
    if (!result) return { skipped: 'first-screen was not ready and drawn within 30 s' };
    if (result.error) return { skipped: `first-screen failed to start: ${result.error}` };
    const measured = await measure(opened.page);
    if (opened.problems.nonLocalRequests.length) return { skipped: `the page asked for other hosts: ${opened.problems.nonLocalRequests.join(', ')}` };
    return { frame_at_ms: round(result.frameAt), ready_at_ms: round(result.readyAt), ...measured };
  } finally {
    await opened.close();
  }
}

/** The milestones of the load, and the files it had fetched when first-screen was drawn (resource timing). */
const milestonesOf = (page) => page.evaluate(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const wasm = performance.getEntriesByType('resource').find((r) => r.name.endsWith('.wasm'));
  const mark = (name) => performance.getEntriesByName(name, 'mark')[0]?.startTime;
  const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime;
  return {
    fetched_before: performance.getEntriesByType('resource')
      .filter((r) => r.responseEnd <= window.__pageSpeed.readyAt).map((r) => r.name),
    response_end_ms: nav?.responseEnd, dom_interactive_ms: nav?.domInteractive,
    dom_content_loaded_ms: nav?.domContentLoadedEventEnd, load_ms: nav?.loadEventEnd, wasm_loaded_ms: wasm?.responseEnd,
    first_contentful_paint_ms: paint, script_start_ms: mark('anatomy:script-start'),
    first_layer_ready_ms: mark('anatomy:first-layer-ready'), first_screen_near_ms: mark('anatomy:near:first-screen'), first_screen_mounted_ms: mark('anatomy:mounted:first-screen'),
  };
});

async function measureFirstFigure(site, size, against) {
  const gzipOf = new Map(size.wasm_js.files.map((f) => [f.file, f]));
  const runs = [], againstRuns = [];
  for (let i = 0; i < coldLoads; i++) {
    // With --against, the two builds take turns going first (a load may run slower
    // just after another's context closes).
    const loadAgainst = async () => {
      const other = await coldLoad(site.browser, `${against.origin}/index.html`);
      if (!other.skipped) againstRuns.push(other.frame_at_ms);
      return other.skipped;
    };
    const againstFailed = against && i % 2 === 0 ? await loadAgainst() : null;
    const load = await coldLoad(site.browser, site.url('index.html'), milestonesOf);
    if (load.skipped) return { skipped: load.skipped };
    const failed = againstFailed ?? (against && i % 2 === 1 ? await loadAgainst() : null);
    if (failed) return { skipped: `--against ${against.root}: ${failed}` };
    const { frame_at_ms: frameAt, ready_at_ms: readyAt, fetched_before: fetched, ...milestones } = load;
    const files = fetched.filter((url) => wasmOrJs.test(url)).map(fileOf);
    const gzipBefore = files.reduce((sum, file) => sum + (gzipOf.get(file)?.gzip_bytes ?? 0), 0);
    const models = fetched.filter((url) => url.includes('/models/')).map(fileOf);
    const modelGzip = models.reduce((sum, file) => sum + modelGzipBytes(file), 0);
    runs.push({ first_figure_ms: frameAt, first_screen_ready_ms: readyAt, ...Object.fromEntries(
      Object.entries(milestones).map(([k, v]) => [k, v === undefined ? null : round(v)])), gzip_before: gzipBefore, files_before: files,
    model_files_before: models, model_gzip_before: modelGzip });
    progress(`cold load ${i + 1}/${coldLoads}: first figure at ${frameAt} ms` + (against ? ` (--against: ${againstRuns.at(-1)} ms)` : ''));
  }
  const value = median(runs.map((r) => r.first_figure_ms));
  // Where the time went: the median of each milestone over the cold loads.
  const milestones = Object.keys(runs[0]).filter((k) => k.endsWith('_ms') && k !== 'first_figure_ms');
  const breakdown = Object.fromEntries(milestones.map((k) => {
    const values = runs.map((r) => r[k]).filter((v) => v !== null);
    return [k, values.length ? round(median(values)) : null];
  }));
  const before = median(runs.map((r) => r.gzip_before));
  const beforeRun = runs.find((r) => r.gzip_before === before) ?? runs[0];
  const compared = against && { dist: against.root, median_ms: round(median(againstRuns)), runs_ms: againstRuns };
  return {
    ...(compared ? { against: compared } : {}),
    median_ms: round(value), target_ms: targets.firstFigureMs, met: value < targets.firstFigureMs, breakdown,
    gzip_before_bytes: before, gzip_before_target_bytes: targets.beforeFirstFigureGzipBytes,
    gzip_before_with_model_bytes: before + beforeRun.model_gzip_before,
    gzip_before_met: before + beforeRun.model_gzip_before < targets.beforeFirstFigureGzipBytes,
    files_before: beforeRun.files_before, model_files_before: beforeRun.model_files_before, runs,
  };
}

// What each page fetches as a reader scrolls through it without using any widget:
// waitForWidgets scrolls every widget into view in turn, so each one is built.
async function measureScrolledThrough(site, size) {
  const gzipOf = new Map(size.wasm_js.files.map((f) => [f.file, f]));
  const pages = [];
  for (const page of fs.readdirSync(distDir()).filter((f) => f.endsWith('.html')).sort()) {
    const opened = await openPage(site.browser, site.url(page));
    try {
      const fetched = async () => {
        const urls = await opened.page.evaluate(() => performance.getEntriesByType('resource').map((r) => r.name));
        const files = [...new Set(urls.filter((url) => wasmOrJs.test(url)).map(fileOf))].filter((f) => gzipOf.has(f));
        return { files: files.sort((a, b) => gzipOf.get(b).gzip_bytes - gzipOf.get(a).gzip_bytes),
          gzip_bytes: files.reduce((sum, f) => sum + gzipOf.get(f).gzip_bytes, 0) };
      };
      await opened.page.waitForLoadState('load');
      await opened.page.waitForTimeout(1500);
      const onLoad = await fetched();  // opened and left at the top
      await waitForWidgets(opened.page, 30000);
      await opened.page.waitForTimeout(1000);
      const scrolled = await fetched();
      // The target is for the two chapters; the exercises page (its code editor and judge) is reported without one.
      const chapter = page !== 'exercises.html';
      pages.push({ page, on_load: onLoad, ...scrolled, met: chapter ? scrolled.gzip_bytes < targets.wasmJsGzipBytes : null });
    } finally {
      await opened.close();
    }
  }
  return pages;
}

// ---- Updates ----

// Runs in the page: `count` timed updates of `control` (a selector), cycling through
// `values`. Returns per-update timings; see the header for what they mean.
async function timeUpdates({ hostSelector, controlSelector, values, count }) {
  const host = document.querySelector(hostSelector);
  const control = document.querySelector(controlSelector);
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // Resolves with [frame start, end of that frame's rendering].
  const renderedFrame = () =>
    new Promise((resolve) =>
      requestAnimationFrame(() => {
        const start = performance.now();
        const channel = new MessageChannel();
        channel.port1.onmessage = () => resolve([start, performance.now()]);
        channel.port2.postMessage(null);
      }));
  // A widget signals an update by writing data-ms, data-updated, data-updated-ms,
  // data-update-ms, ... on any element inside its host (explorer: its timing line's data-ms).
  const signalled = [];
  const observer = new MutationObserver((records) => {
    const at = performance.now();
    for (const r of records) {
      if (!/^data-(updated?|ms)(-|$)/.test(r.attributeName)) continue;
      const value = r.target.getAttribute(r.attributeName);
      const where = r.target === host ? '' : r.target.dataset.testid ? `[data-testid=${r.target.dataset.testid}] ` : `${r.target.tagName.toLowerCase()} `;
      signalled.push({ at, name: `${where}${r.attributeName}`, ms: /ms$/.test(r.attributeName) && value !== '' && Number.isFinite(Number(value)) ? Number(value) : null });
    }
  });
  observer.observe(host, { attributes: true, subtree: true });
  const set = (value) => {
    control.value = value;
    control.dispatchEvent(new Event('input', { bubbles: true }));
    control.dispatchEvent(new Event('change', { bubbles: true }));
  };
  const waitForSignal = async (from, timeoutMs) => {
    const deadline = performance.now() + timeoutMs;
    while (signalled.length === from && performance.now() < deadline) await sleep(1);
    return signalled[from] ?? null;
  };

  // One untimed pass through every value first: warms up, tells whether this widget
  // signals, and drops values it does not draw (e.g. a mask whose other inputs do not
  // fit this size): a widget that signals for some values but not others showed an error.
  const start = values.indexOf(control.value);
  const order = [...values.slice(start + 1), ...values.slice(0, start + 1)];
  const drawn = [];
  let signal = null;
  for (const [i, value] of order.entries()) {
    const from = signalled.length;
    set(value);
    // Two silent updates in a row: this widget does not signal; stop waiting for it.
    if (await waitForSignal(from, signal === null && i >= 2 ? 0 : 3000)) {
      signal ??= signalled[from].name;
      drawn.push(value);
    }
    await frame();
  }
  const usesSignal = signal !== null;
  const cycle = usesSignal ? drawn : order;
  const dropped = usesSignal ? order.filter((v) => !drawn.includes(v)) : [];
  if (cycle.length < 2) return { error: `fewer than two values of the control update the widget (dropped: ${dropped.join(', ')})` };
  let index = cycle.indexOf(control.value);
  const next = () => cycle[(index = (index + 1) % cycle.length)];
  await sleep(100);

  const runs = [];
  for (let i = 0; i < count; i++) {
    await frame();
    await sleep(20); // start away from a frame boundary, with nothing pending
    const from = signalled.length;
    const t0 = performance.now();
    set(next());
    let done = performance.now();
    let own = null;
    if (usesSignal) {
      const signal = await waitForSignal(from, 10000);
      if (!signal) return { error: `update ${i + 1} never signalled (waited 10 s)` };
      done = signal.at;
      own = signal.ms;
    }
    const [frameStart, rendered] = await renderedFrame();
    runs.push({ busy_ms: done - t0 + (rendered - frameStart), wall_ms: rendered - t0, widget_ms: own });
  }
  observer.disconnect();
  return { usesSignal, signal, dropped, runs };
}

// Sets a control (found by selector) and fires input + change; returns the value it holds after.
function setControl(page, selector, value) {
  return page.evaluate(({ selector, value }) => {
    const control = document.querySelector(selector);
    control.value = String(value);
    control.dispatchEvent(new Event('input', { bubbles: true }));
    control.dispatchEvent(new Event('change', { bubbles: true }));
    return control.value;
  }, { selector, value });
}

// Marks a control with a data-page-speed attribute so the page can find it by selector.
function markControl(page, hostSelector, pick) {
  return page.evaluate(({ hostSelector, pick }) => {
    const host = document.querySelector(hostSelector);
    if (!host) return null;
    const usable = (n) => !n.disabled && n.getClientRects().length > 0;
    const controlOf = (n) => (n && !n.matches('input, select') ? n.querySelector('input, select') : n);
    // A label's own words, without the text of controls inside it (a select's options).
    const labelOf = (n) => [...(n.labels ?? [])].map((l) => {
      const copy = l.cloneNode(true);
      copy.querySelectorAll('select, input, textarea').forEach((c) => c.remove());
      return copy.textContent;
    }).join(' ') + ' ' + (n.getAttribute('aria-label') ?? '');
    let control = null;
    if (pick.testid) {
      control = controlOf(document.querySelector(`[data-testid="${pick.testid}"]`));
    } else {
      const selects = [...host.querySelectorAll('select')].filter(usable);
      const words = new RegExp(pick.words, 'i');
      control = selects.find((s) => words.test(s.dataset.testid ?? ''))
        ?? selects.find((s) => words.test(labelOf(s)))
        ?? (pick.anySelect ? selects[0] : null);
    }
    if (!control) return null;
    const mark = `${pick.testid ?? pick.words}`.replace(/[^a-z0-9]+/gi, '-');
    control.setAttribute('data-page-speed', mark);
    const values = control instanceof HTMLSelectElement ? [...control.options].filter((o) => !o.disabled).map((o) => o.value) : null;
    const name = `<${control.tagName.toLowerCase()}${control.dataset.testid ? ` data-testid=${control.dataset.testid}` : ''}>` +
      (labelOf(control).trim() ? ` "${labelOf(control).trim().replace(/\s+/g, ' ')}"` : '');
    return { selector: `[data-page-speed="${mark}"]`, values, name, max: control.max ?? null };
  }, { hostSelector, pick });
}

async function summariseUpdates(page, hostSelector, control, values, label) {
  const result = await page.evaluate(timeUpdates, { hostSelector, controlSelector: control.selector, values, count: updates });
  if (result.error) return { skipped: result.error };
  const busy = median(result.runs.map((r) => r.busy_ms));
  const own = result.runs.map((r) => r.widget_ms).filter((v) => v !== null);
  return {
    control: label,
    timed_by: result.usesSignal ? `widget signal (${result.signal})` : 'change to next frame (the widget does not signal)',
    values_left_out: result.dropped,
    median_ms: round(busy, 2),
    median_wall_ms: round(median(result.runs.map((r) => r.wall_ms)), 2),
    median_widget_reported_ms: own.length ? round(median(own), 2) : null,
    target_ms: targets.updateMs,
    met: busy < targets.updateMs,
    runs: result.runs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : round(v, 2)]))),
  };
}

async function waitReady(page, name) {
  await page.locator(`[data-widget="${name}"]`).scrollIntoViewIfNeeded().catch(() => {});  // widgets build near the viewport
  await page.waitForFunction((name) => document.querySelector(`[data-widget="${name}"]`)?.dataset.ready, name, { timeout: 30000 })
    .catch(() => {});
  return page.evaluate((name) => {
    const host = document.querySelector(`[data-widget="${name}"]`);
    return { ready: host?.dataset.ready ?? null, message: host?.querySelector('.status')?.textContent?.trim() ?? '' };
  }, name);
}

async function measureExplorer(site) {
  const opened = await openPage(site.browser, site.url('index.html'));
  try {
    const state = await waitReady(opened.page, 'explorer');
    if (state.ready !== 'true') return { skipped: `explorer is not ready (data-ready=${state.ready}${state.message ? `: ${state.message}` : ''})` };
    const host = '[data-widget="explorer"]';
    const control = await markControl(opened.page, host, { words: 'head|layer', anySelect: true });
    if (!control) return { skipped: 'explorer has no select to change' };
    if (control.values.length < 2) return { skipped: `explorer's ${control.name} has fewer than two options` };
    return await summariseUpdates(opened.page, host, control, control.values, control.name);
  } finally {
    await opened.close();
  }
}

async function measureMaskGallery(site) {
  const opened = await openPage(site.browser, site.url('notebook.html'));
  try {
    const state = await waitReady(opened.page, 'mask-gallery');
    if (state.ready !== 'true') return { skipped: `mask-gallery is not ready (data-ready=${state.ready}${state.message ? `: ${state.message}` : ''})` };
    const host = '[data-widget="mask-gallery"]';
    // One tile size (mask-gallery-tile) or query and key tiles apart (mask-gallery-tile-q = Br, mask-gallery-tile-k = Bc).
    const sizes = {};
    for (const [key, testid] of [['T', 'mask-gallery-T'], ['S', 'mask-gallery-S']]) {
      sizes[key] = await markControl(opened.page, host, { testid });
      if (!sizes[key]) return { skipped: `mask-gallery has no input with data-testid="${testid}" yet` };
    }
    const tile = await markControl(opened.page, host, { testid: 'mask-gallery-tile' });
    const tiles = tile
      ? [['tile', tile]]
      : [['tile_q', await markControl(opened.page, host, { testid: 'mask-gallery-tile-q' })], ['tile_k', await markControl(opened.page, host, { testid: 'mask-gallery-tile-k' })]];
    if (tiles.some(([, control]) => !control)) return { skipped: 'mask-gallery has no input with data-testid="mask-gallery-tile" (or "mask-gallery-tile-q" and "mask-gallery-tile-k") yet' };
    for (const [key, control, value] of [['T', sizes.T, maskGallerySize.T], ['S', sizes.S, maskGallerySize.S], ...tiles.map(([k, c]) => [k, c, maskGallerySize.tile])]) {
      const got = await setControl(opened.page, control.selector, value);
      if (Number(got) !== value) return { skipped: `mask-gallery's ${key} control will not take ${value} (it holds ${got}; max=${control.max})` };
    }
    await opened.page.waitForTimeout(500); // let the size change settle before timing
    const mask = await markControl(opened.page, host, { words: 'mask|kind|pattern' , anySelect: true });
    const at = `T = S = ${maskGallerySize.T}, tile ${maskGallerySize.tile}`;
    if (mask && mask.values.length >= 2) return await summariseUpdates(opened.page, host, mask, mask.values, `${mask.name} at ${at}`);
    const t = sizes.T; // no mask select: time T itself
    return await summariseUpdates(opened.page, host, t, [String(maskGallerySize.T), String(maskGallerySize.T - maskGallerySize.tile)],
      `${t.name} toggled ${maskGallerySize.T} <-> ${maskGallerySize.T - maskGallerySize.tile} (S = ${maskGallerySize.S}, tile ${maskGallerySize.tile})`);
  } finally {
    await opened.close();
  }
}

// ---- Report ----

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const verdict = (met) => (met ? 'ok' : 'MISSED');

function table(result) {
  const rows = [['measure', 'value', 'target', '']];
  const fh = result.first_figure;
  rows.push(fh.skipped
    ? [`first figure, first-screen`, `skipped: ${fh.skipped}`, `< ${targets.firstFigureMs} ms`, '']
    : [`first figure, first-screen (median of ${fh.runs.length} cold loads)`, `${fh.median_ms} ms`, `< ${targets.firstFigureMs} ms`, verdict(fh.met)]);
  if (!fh.skipped) {
    const order = Object.entries(fh.breakdown).filter(([, v]) => v !== null).sort((a, b) => a[1] - b[1]);
    for (const [name, ms] of order) rows.push([`  ${name.replace(/_ms$/, '').replaceAll('_', ' ')} (median)`, `${ms} ms`, '', '']);
    if (fh.against) rows.push([`  --against ${fh.against.dist}, its loads interleaved with these (median)`, `${fh.against.median_ms} ms`, '', '']);
    rows.push(['wasm + JS index.html had fetched by then, gzip -9', kB(fh.gzip_before_bytes), '', '']);
    for (const f of fh.files_before) rows.push([`  ${f}`, '', '', '']);
    rows.push(['  with the model files it had fetched', kB(fh.gzip_before_with_model_bytes), `< ${kB(targets.beforeFirstFigureGzipBytes)}`,
      verdict(fh.gzip_before_met)]);
    for (const f of fh.model_files_before) rows.push([`  ${f}`, '', '', '']);
  }
  const size = result.size;
  for (const p of result.scrolled_through) {
    rows.push([`wasm + JS ${p.page} fetches on load, left at the top, gzip -9`, kB(p.on_load.gzip_bytes), '', '']);
    rows.push([`wasm + JS ${p.page} fetches, scrolled through, gzip -9`, kB(p.gzip_bytes), p.met === null ? '' : `< ${kB(targets.wasmJsGzipBytes)}`,
      p.met === null ? '' : verdict(p.met)]);
    for (const f of p.files) rows.push([`  ${f}`, kB(size.wasm_js.files.find((x) => x.file === f).gzip_bytes), '', '']);
  }
  rows.push(['every wasm and JS file of the site, gzip -9', `${kB(size.wasm_js.gzip_bytes)} (raw ${kB(size.wasm_js.bytes)})`, '', '']);
  for (const f of size.wasm_js.files) rows.push([`  ${f.file}`, `${kB(f.gzip_bytes)} (raw ${kB(f.bytes)})`, '', '']);
  rows.push(['CSS, gzip -9', `${kB(size.css.gzip_bytes)} (raw ${kB(size.css.bytes)})`, '', '']);
  rows.push(['fonts, all formats (woff2 only)', `${kB(size.fonts.bytes)} (${kB(size.fonts.woff2_bytes)})`, '', '']);
  rows.push(['HTML, gzip -9', `${kB(size.html.gzip_bytes)} (raw ${kB(size.html.bytes)})`, '', '']);
  for (const [name, u] of Object.entries(result.updates)) {
    if (u.skipped) {
      rows.push([`${name} update`, `skipped: ${u.skipped}`, `< ${targets.updateMs} ms`, '']);
      continue;
    }
    rows.push([`${name} update (median of ${u.runs.length}): ${u.control}`, `${u.median_ms} ms`, `< ${targets.updateMs} ms`, verdict(u.met)]);
    rows.push([`  timed by ${u.timed_by}; wall incl. vsync wait`, `${u.median_wall_ms} ms`, '', '']);
    if (u.values_left_out.length) rows.push([`  values left out (the widget did not draw them)`, u.values_left_out.join(', '), '', '']);
    if (u.median_widget_reported_ms !== null) rows.push(['  as the widget reports it', `${u.median_widget_reported_ms} ms`, '', '']);
  }
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r) => r.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell)).join('  ').trimEnd();
  return [
    `Attention Anatomy page speed: ${result.browser}, ${result.dist}, 127.0.0.1; load average ${result.load_average_start.join(' ')} -> ${result.load_average_end.join(' ')}`,
    line(rows[0]),
    widths.map((w) => '-'.repeat(w)).join('  ') + '  ------',
    ...rows.slice(1).map(line),
  ].join('\n');
}

const dist = distDir();
const site = await startSite({ root: dist, cacheAssets: false });  // each page's files counted as a first visit fetches them
let result;
try {
  progress(`serving ${dist} at ${site.server.origin}`);
  result = {
    browser: `Chromium ${site.browser.version()} (headless)`,
    dist: path.relative(process.cwd(), dist).startsWith('..') ? dist : path.relative(process.cwd(), dist) || '.',
    date: new Date().toISOString(),
    load_average_start: os.loadavg().map((x) => round(x, 2)),
    targets,
    size: measureSize(dist),
  };
  const against = againstDir ? await startServer(againstDir, { cacheAssets: false }) : null;
  try {
    result.first_figure = await measureFirstFigure(site, result.size, against);
  } finally {
    await against?.close();
  }
  progress('scrolling through each page');
  result.scrolled_through = await measureScrolledThrough(site, result.size);
  progress('timing explorer updates');
  result.updates = { explorer: await measureExplorer(site) };
  progress('timing mask-gallery updates');
  result.updates.maskGallery = await measureMaskGallery(site);
  result.load_average_end = os.loadavg().map((x) => round(x, 2));
} finally {
  await site.close();
}
out(table(result));
if (asJson) console.log(JSON.stringify(result, null, 2));
