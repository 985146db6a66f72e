// The browser harness: a static server for web/dist, headless Chromium, and the
// checks every page test shares. Used by the tests in this folder and by
// web/bench/page-speed.mjs.
//
// Setup
//   distDir()                      web/dist, or $ANATOMY_WEB_DIST (ctest sets it); fails, saying
//                                  how to build it, when it holds no index.html
//   startServer(root = distDir(), { cacheAssets = true })  -> { origin, port, root, close() }
//                                  node:http on 127.0.0.1, ephemeral port, files under root only,
//                                  correct MIME types (application/wasm), 404 for missing files;
//                                  assets/'s hashed files may be cached for good unless
//                                  cacheAssets is false (a benchmark of first visits)
//   launchBrowser({ args })        -> playwright Browser: Debian's /usr/bin/chromium, headless,
//                                  a fresh temporary profile; extra args are appended
//   startSite({ root, args, cacheAssets })  -> { server, browser, url(path), close() }: both of
//                                  the above; the one site every file shares under group.mjs
//                                  (shareSites) when none is given
//
// One page
//   openPage(browser, url, { width = 1280, height = 800, initScript, waitUntil, fresh })
//                                  -> { page, context, problems, close() }
//                                  A page another test closed, its storage cleared and its
//                                  listeners removed, or a new browser context (nothing
//                                  cached) with fresh: true, with an initScript, or when no
//                                  page is free; a test that watches the page's requests
//                                  (they may come from the cache) or adds listeners of its
//                                  own asks for fresh. problems
//                                  collects, from before navigation on:
//                                    consoleErrors    console messages of level error
//                                    consoleWarnings  level warning (reported, not failed on)
//                                    pageErrors       uncaught exceptions and rejections
//                                    failedRequests   requests that failed or answered >= 400
//                                    nonLocalRequests any request to a host other than 127.0.0.1
//                                  (the browser fails those requests: chromiumArgs' proxy).
//                                  initScript (a function) runs in the page
//                                  before any of its own scripts (context.addInitScript).
//                                  waitUntil: when goto returns ('load'; 'commit' for a page
//                                  whose HTML is still arriving)
//   assertNoProblems(problems, what)  fails listing every problem; formatProblems(problems)
//
// Widgets ([data-widget] hosts, mounted by web/src/lib/widget.ts)
//   waitForWidgets(page, timeoutMs = 10000)
//                                  -> [{ name, ready, message }] once every host has data-ready,
//                                  scrolling each to the viewport in turn (widgets build there)
//                                  ("true" or "error") or the time is up (ready null);
//                                  message is the widget's status line, e.g. its error
//   waitForWidget(page, name, timeoutMs = 10000)
//                                  -> { name, ready, message } for the one host [data-widget=name]
//                                  (null if the page has none), scrolled to until it is ready;
//                                  for a test about one widget: the others stay unbuilt unless
//                                  they are near it or near the top
//   widgetSnapshot(page, name)     -> string: the host's innerHTML plus every canvas's pixels
//   waitForWidgetChange(page, name, snapshot, timeoutMs = 5000)
//                                  -> true once widgetSnapshot differs from snapshot, false on timeout
//   changeFirstControl(page, name) -> null when the widget has no enabled, visible input or
//                                  select (file, hidden and button inputs do not count);
//                                  { control, from: null, to: null } when none of them has another
//                                  value to take (a select with one option); else
//                                  { control, from, to }: the first control that can change is
//                                  moved to another valid value and fires input + change
//
// Checks
//   runAxe(page, tags = ['wcag2a', 'wcag2aa', 'best-practice']) -> axe violations
//   formatViolations(violations)   one line per violation, then one per target
//   layoutWidth(page)              -> { viewport, scrollWidth, offenders }: offenders are the
//                                  outermost elements sticking out past the viewport's right edge
//   blackShare(page, selector)     -> the share of the element's pixels on screen that are black
//   seriesPixels(page, selector)   -> each line of a chart as drawn: its colour's pixels, its share along its path
//   analysePngs(page, pngs, analyse, arg) -> analyse(images, arg) run in the page on the decoded screenshots
//   screenshot(page, name)         full-page PNG into $SCREENSHOT_DIR (no-op when unset)
//
// A new test file (name it in CMakeLists.txt's browser_tests, in a group or alone):
//   import { before, after, test } from 'node:test';
//   import { assertNoProblems, openPage, startSite, waitForWidgets } from './harness.mjs';
//   let site;
//   before(async () => { site = await startSite(); });
//   after(() => site?.close());
//   test('kv-stepper steps the cache', async (t) => {
//     const { page, problems, close } = await openPage(site.browser, site.url('notebook.html'));
//     t.after(close);
//     await waitForWidgets(page);
//     await page.getByTestId('kv-stepper-step').click();   // ... the widget's own checks
//     assertNoProblems(problems, 'notebook.html');
//   });
//
// Run a test file by hand after `cd web && npm ci && npm run build`:
//   node --test tests/browser/pages.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const webDir = path.join(repoRoot, 'web');

// playwright-core and axe-core are dev dependencies of the page (web/package.json),
// so `npm ci` in web/ is all a clean clone needs.
const requireFromWeb = createRequire(path.join(webDir, 'package.json'));
function webModule(name) {
  try {
    return requireFromWeb(name);
  } catch (error) {
    throw new Error(`${name} is not installed in ${webDir}/node_modules: run \`cd web && npm ci\` (${error.message})`);
  }
}

export const chromiumPath = '/usr/bin/chromium';
// --disable-quic and the background switches keep Chromium from talking to anything
// but the page's own server; the page must work offline.
// --proxy-server sends every request that is not to this machine to a port where
// nothing listens (9, discard), so it fails in the browser itself: nothing a page asks
// for leaves the machine, and no request waits on Playwright (routing each one through
// page.route delays it). Chromium sends loopback addresses direct, past any proxy.
export const chromiumArgs = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
  '--proxy-server=http://127.0.0.1:9',
];

// WebGPU in headless Chromium: the software adapter (SwiftShader) on a localhost page.
export const webgpuArgs = ['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'];

// ---- The static server ----

export function distDir() {
  const dir = path.resolve(process.env.ANATOMY_WEB_DIST || path.join(webDir, 'dist'));
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    assert.fail(`${dir}/index.html is missing: build the page first (cd web && npm ci && npm run build), ` +
      'or point ANATOMY_WEB_DIST at a built site');
  }
  return dir;
}

const mimeTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.cpp': 'text/plain; charset=utf-8',
  '.hpp': 'text/plain; charset=utf-8',
  '.h': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};

// Vite names each built script, style, font and wasm module in assets/ by a hash of its
// content (name-Cq2x_8Yk.wasm): a new build gives a new name, so a static host may let
// browsers keep them for good, and this server does, as one would. A page reopened in the
// same browser context then takes them from the cache with the code V8 compiled for them
// (a test that watches what a page fetches opens a fresh context: openPage). The benchmarks
// that load a page again and again in one context, each load timed as a first visit or its
// files counted, turn this off.
function isHashedAsset(file) {
  return /[/\\]assets[/\\][^/\\]+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$/.test(file);
}

export function startServer(root = distDir(), { cacheAssets = true } = {}) {
  const base = path.resolve(root);
  const server = http.createServer((request, response) => {
    let file;
    try {
      const { pathname } = new URL(request.url, 'http://127.0.0.1');
      file = path.resolve(base, '.' + decodeURIComponent(pathname));
    } catch {
      response.writeHead(400).end('bad request');
      return;
    }
    if (file !== base && !file.startsWith(base + path.sep)) {
      response.writeHead(404).end('not found');
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (error, body) => {
      if (error) {
        response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      response.writeHead(200, {
        'Content-Type': mimeTypes[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': body.length,
        ...(cacheAssets && isHashedAsset(file) ? { 'Cache-Control': 'public, max-age=31536000, immutable' } : {}),
      });
      response.end(request.method === 'HEAD' ? undefined : body);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        origin: `http://127.0.0.1:${port}`,
        port,
        root: base,
        close: () => new Promise((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
}

// ---- The browser ----

export async function launchBrowser({ args = [] } = {}) {
  if (!fs.existsSync(chromiumPath)) {
    assert.fail(`${chromiumPath} is missing: run scripts/install-deps.sh (it installs Debian's chromium)`);
  }
  const { chromium } = webModule('playwright-core');
  // Without userDataDir Playwright gives Chromium a new temporary profile
  // (--user-data-dir=/tmp/playwright_chromiumdev_profile-*) and deletes it on close.
  // WebGPU on SwiftShader (webgpuArgs) wants the GPU process that --disable-gpu turns off.
  const base = args.includes('--enable-unsafe-webgpu') ? chromiumArgs.filter((arg) => arg !== '--disable-gpu') : chromiumArgs;
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: [...base, ...args] });
}

async function openSite({ root, args, cacheAssets } = {}) {
  const server = await startServer(root, { cacheAssets });
  let browser;
  try {
    browser = await launchBrowser({ args });
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    server,
    browser,
    url: (page) => `${server.origin}/${page.replace(/^\//, '')}`,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

// Test files run together in one process (group.mjs) share one site: launching Chromium
// and a first page in it cost each file about 6 core-seconds. Set by shareSites().
let sharedSite = null;

/**
 * From now on startSite() without options answers one site for every caller, whose
 * close() leaves it open; resolves to a function that closes it. For group.mjs.
 */
export function shareSites() {
  sharedSite = { opening: null };
  return async () => {
    const opening = sharedSite.opening;
    sharedSite = null;
    if (opening) await (await opening).close();
  };
}

export async function startSite(options = {}) {
  if (!sharedSite || Object.values(options).some((value) => value !== undefined)) return openSite(options);
  sharedSite.opening ??= openSite();
  const site = await sharedSite.opening;
  return { ...site, close: async () => {} };
}

function isLocal(url) {
  const { protocol, hostname } = new URL(url);
  if (!['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(protocol)) return true; // data:, blob:, about:
  return hostname === '127.0.0.1';
}

// Pages closed by a test wait here, per browser, to be opened again: starting a page's
// renderer and compiling the site's wasm in it took about half of each page's CPU time
// (index.html: 6.3 core-seconds in a new context, 2.9 in a page that had shown the site
// before), and the browser tests together ran close to 2 cores. A page is reused only
// after its routes are removed, its storage cleared and it has left the site (about:blank).
const idlePages = new WeakMap();  // Browser -> [{ context, page }]

async function takePage(browser, { width, height, initScript, fresh }) {
  const reusable = !fresh && !initScript;
  if (!idlePages.has(browser)) idlePages.set(browser, []);
  const idle = idlePages.get(browser);
  while (reusable && idle.length) {
    const entry = idle.pop();
    if (entry.page.isClosed()) continue;
    await entry.page.setViewportSize({ width, height });
    return { ...entry, reusable };
  }
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1, serviceWorkers: 'block' });
  if (initScript) await context.addInitScript(initScript);
  return { context, page: await context.newPage(), reusable };
}

async function givePageBack(browser, { context, page, reusable }) {
  if (reusable && !page.isClosed()) {
    try {
      await page.unrouteAll({ behavior: 'ignoreErrors' });  // a test's page.route goes with it
      await page.evaluate(() => {
        localStorage.clear();
        sessionStorage.clear();
      });
      await page.goto('about:blank', { timeout: 5000 });
      await context.clearCookies();
      idlePages.get(browser).push({ context, page });
      return;
    } catch {
      // A page that cannot be cleared or leave the site is not reused.
    }
  }
  await context.close();
}

export async function openPage(browser, url, { width = 1280, height = 800, initScript, waitUntil = 'load', fresh = false } = {}) {
  const taken = await takePage(browser, { width, height, initScript, fresh });
  const { context, page } = taken;
  const problems = { consoleErrors: [], consoleWarnings: [], pageErrors: [], failedRequests: [], nonLocalRequests: [] };
  const listeners = {
    console: (message) => {
      const where = message.location()?.url ? ` (${message.location().url}:${message.location().lineNumber})` : '';
      if (message.type() === 'error') problems.consoleErrors.push(message.text() + where);
      else if (message.type() === 'warning') problems.consoleWarnings.push(message.text() + where);
    },
    pageerror: (error) => problems.pageErrors.push(error.stack || String(error)),
    request: (request) => {
      if (!isLocal(request.url())) problems.nonLocalRequests.push(`${request.method()} ${request.url()}`);
    },
    websocket: (socket) => {
      if (!isLocal(socket.url())) problems.nonLocalRequests.push(`WebSocket ${socket.url()}`);
    },
    requestfailed: (request) => {
      // A blob: URL is the page's own object, not a request to a server: the exercises
      // page's waiting sandbox worker, started from one, is cut off when the page reloads.
      if (request.url().startsWith('blob:') && request.failure()?.errorText === 'net::ERR_ABORTED') return;
      problems.failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'failed'}`);
    },
    response: (response) => {
      if (response.status() >= 400) problems.failedRequests.push(`${response.request().method()} ${response.url()}: HTTP ${response.status()}`);
    },
  };
  for (const [event, listener] of Object.entries(listeners)) page.on(event, listener);
  await page.goto(url, { waitUntil });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const [event, listener] of Object.entries(listeners)) page.off(event, listener);
    await givePageBack(browser, taken);
  };
  return { page, context, problems, close };
}

export function formatProblems(problems) {
  const lines = [];
  for (const [kind, items] of Object.entries(problems)) {
    if (kind === 'consoleWarnings') continue;
    for (const item of items) lines.push(`  ${kind}: ${item}`);
  }
  return lines.join('\n');
}

export function assertNoProblems(problems, what = 'the page') {
  if (problems.consoleWarnings.length) {
    console.log(`${what}: console warnings (not failures):\n${problems.consoleWarnings.map((w) => `  ${w}`).join('\n')}`);
  }
  const report = formatProblems(problems);
  assert.ok(report === '', `${what} had problems:\n${report}`);
}

// ---- Widgets ----

export async function waitForWidgets(page, timeoutMs = 10000) {
  await scrollUntilReady(page, '[data-widget]', timeoutMs);
  return page.$$eval('[data-widget]', widgetStates);
}

export async function waitForWidget(page, name, timeoutMs = 10000) {
  const selector = `[data-widget="${name}"]`;
  await scrollUntilReady(page, selector, timeoutMs);
  return (await page.$$eval(selector, widgetStates))[0] ?? null;
}

// A widget is built when it comes near the viewport (web/src/lib/widget.ts), so each
// host matching `selector` that is not yet ready is scrolled to in turn; then the
// page goes back to where it was.
async function scrollUntilReady(page, selector, timeoutMs) {
  await page
    .evaluate(async ([selector, timeoutMs]) => {
      const deadline = performance.now() + timeoutMs;
      const start = scrollY;
      for (const host of document.querySelectorAll(selector)) {
        if (host.dataset.ready) continue;
        host.scrollIntoView({ block: 'center' });
        while (!host.dataset.ready && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      scrollTo(0, start);
    }, [selector, timeoutMs])
    .catch(() => {}); // the caller reports which widgets never became ready
}

// What a test reads of each host (run in the page: it may not refer to anything outside itself).
function widgetStates(hosts) {
  return hosts.map((host) => ({
    name: host.dataset.widget,
    ready: host.dataset.ready ?? null,
    message: host.querySelector('.status')?.textContent?.trim() ?? '',
  }));
}

export function widgetSnapshot(page, name) {
  return page.evaluate((name) => {
    const host = document.querySelector(`[data-widget="${name}"]`);
    if (!host) return null;
    const pixels = [...host.querySelectorAll('canvas')].map((canvas) => {
      try {
        return canvas.width && canvas.height ? canvas.toDataURL() : 'empty';
      } catch {
        return 'unreadable';
      }
    });
    return host.innerHTML + '\n' + pixels.join('\n');
  }, name);
}

export async function waitForWidgetChange(page, name, snapshot, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  do {
    if ((await widgetSnapshot(page, name)) !== snapshot) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (Date.now() < deadline);
  return (await widgetSnapshot(page, name)) !== snapshot;
}

export function changeFirstControl(page, name) {
  return page.evaluate((name) => {
    const host = document.querySelector(`[data-widget="${name}"]`);
    const skipTypes = new Set(['file', 'hidden', 'button', 'submit', 'reset', 'image']);
    const usable = (node) =>
      !node.disabled && !(node instanceof HTMLInputElement && (skipTypes.has(node.type) || node.readOnly)) &&
      node.getClientRects().length > 0;
    const describe = (node) =>
      `<${node.tagName.toLowerCase()}${node.type ? ` type=${node.type}` : ''}${node.id ? ` id=${node.id}` : ''}` +
      `${node.dataset.testid ? ` data-testid=${node.dataset.testid}` : ''}>`;

    // The change a user could make to `control`: { target, apply(), from, to }, or null
    // when it has no other value (a select with one option, a range at both ends).
    const changeFor = (control) => {
      if (control instanceof HTMLSelectElement) {
        const options = [...control.options].filter((o) => !o.disabled);
        if (options.length < 2) return null;
        const at = options.findIndex((o) => o.value === control.value);
        const to = options[(at + 1) % options.length].value;
        return { target: control, from: control.value, to, apply: () => (control.value = to) };
      }
      if (control.type === 'checkbox') {
        return { target: control, from: control.checked, to: !control.checked, apply: () => (control.checked = !control.checked) };
      }
      if (control.type === 'radio') {
        // The first radio is usually the checked one; pick another of its group.
        const group = [...host.querySelectorAll(`input[type=radio][name="${CSS.escape(control.name)}"]`)].filter(usable);
        const other = group.find((r) => !r.checked);
        if (!other) return null;
        return { target: other, from: group.find((r) => r.checked)?.value ?? '', to: other.value, apply: () => (other.checked = true) };
      }
      if (control.type === 'range' || control.type === 'number') {
        const step = control.step === 'any' || !Number(control.step) ? 1 : Number(control.step);
        const value = Number(control.value);
        const max = control.max === '' ? Infinity : Number(control.max);
        const min = control.min === '' ? -Infinity : Number(control.min);
        const next = value + step <= max ? value + step : value - step;
        if (next < min) return null;
        return { target: control, from: control.value, to: String(next), apply: () => (control.value = String(next)) };
      }
      // Text: a list like "1,2,3" loses its last entry (still valid); other text gains a character.
      const parts = control.value.split(',');
      const to = /^[\d\s,]+$/.test(control.value) && parts.length > 1 ? parts.slice(0, -1).join(',') : control.value + '1';
      return { target: control, from: control.value, to, apply: () => (control.value = to) };
    };

    const controls = [...(host?.querySelectorAll('input, select') ?? [])].filter(usable);
    if (!controls.length) return null;
    const change = controls.map(changeFor).find(Boolean);
    if (!change) return { control: controls.map(describe).join(', '), from: null, to: null };
    change.apply();
    change.target.dispatchEvent(new Event('input', { bubbles: true }));
    change.target.dispatchEvent(new Event('change', { bubbles: true }));
    return { control: describe(change.target), from: String(change.from), to: String(change.to) };
  }, name);
}

// ---- Checks ----

let axeSource;
export async function runAxe(page, tags = ['wcag2a', 'wcag2aa', 'best-practice']) {
  axeSource ??= fs.readFileSync(requireFromWeb.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the debugging protocol, not added as a <script>: a page's
  // Content-Security-Policy (exercises.html has one) refuses inline scripts.
  await page.evaluate(axeSource);
  const result = await page.evaluate(
    (tags) => window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    tags);
  return result.violations;
}

export function formatViolations(violations) {
  return violations
    .map((v) =>
      `[${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n` +
      v.nodes.map((n) => `    ${n.target.join(' ')}\n      ${n.failureSummary?.replace(/\n/g, '\n      ') ?? ''}`).join('\n'))
    .join('\n');
}

export function layoutWidth(page) {
  return page.evaluate(() => {
    const viewport = window.innerWidth;
    const scrollWidth = document.documentElement.scrollWidth;
    const offenders = [];
    if (scrollWidth > viewport + 1) {
      // Elements reaching past the right edge that widen the page: not those an ancestor
      // clips or scrolls. An absolutely positioned element escapes every overflow box
      // between it and its containing block (its offsetParent), a classic way for a
      // "visually hidden" label inside a scrolling table to widen the whole page.
      const widens = (node) => {
        const position = getComputedStyle(node).position;
        if (position === 'fixed') return false;
        let escapeTo = position === 'absolute' ? node.offsetParent : null;
        for (let p = node.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
          if (escapeTo && p !== escapeTo && escapeTo.contains(p)) continue; // between it and its containing block
          if (p === escapeTo) escapeTo = null;
          const style = getComputedStyle(p);
          if (style.overflowX !== 'visible') return false;
          if (style.position === 'fixed') return false;
          if (style.position === 'absolute' && !escapeTo) escapeTo = p.offsetParent;
        }
        return true;
      };
      const describe = (node) => {
        const name = node.tagName.toLowerCase() + (node.id ? `#${node.id}` : '') +
          (typeof node.className === 'string' && node.className.trim() ? '.' + node.className.trim().split(/\s+/).join('.') : '') +
          (node.dataset?.testid ? `[data-testid=${node.dataset.testid}]` : '');
        const widget = node.closest('[data-widget]')?.dataset.widget;
        return `${widget ? `[data-widget=${widget}] ` : ''}${name} (right edge ${Math.round(node.getBoundingClientRect().right)} px)`;
      };
      // Only the outermost of a nested run of offenders is listed.
      const found = new Set();
      const counts = new Map();
      for (const node of document.body.querySelectorAll('*')) {
        if (node.getBoundingClientRect().right <= viewport + 1 || !widens(node)) continue;
        found.add(node);
        let inner = false;
        for (let p = node.parentElement; p && !inner; p = p.parentElement) inner = found.has(p);
        if (inner) continue;
        const text = describe(node);
        counts.set(text, (counts.get(text) ?? 0) + 1);
      }
      for (const [text, n] of counts) offenders.push(n > 1 ? `${text} x${n}` : text);
    }
    return { viewport, scrollWidth, offenders: offenders.slice(0, 15) };
  });
}

/**
 * Runs `analyse` in the page on `selector`'s first element as the screen shows it: its
 * screenshot decoded into RGBA pixels. `analyse({ data, width, height, left, top }, arg)`
 * runs in the page (it may refer to nothing outside itself); left and top are the
 * element's place in the viewport, for mapping its nodes' coordinates onto the pixels.
 */
async function analyseScreenshot(page, selector, analyse, arg) {
  const element = page.locator(selector).first();
  const png = await element.screenshot();
  const box = await element.boundingBox();
  return analysePngs(page, [png], ([image], [source, box, arg]) =>
    (0, eval)(`(${source})`)({ ...image, left: box.x, top: box.y }, arg), [analyse.toString(), box, arg]);
}

/**
 * Screenshots (PNG buffers) decoded in the page, handed as [{data, width, height}] with
 * `arg` to `analyse`, which runs there (it may not refer to anything outside itself).
 */
export function analysePngs(page, pngs, analyse, arg) {
  return page.evaluate(async ([pngs, source, arg]) => {
    const images = await Promise.all(pngs.map(async (base64) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = new OffscreenCanvas(image.width, image.height);
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      return context.getImageData(0, 0, image.width, image.height);
    }));
    return (0, eval)(`(${source})`)(images.map(({ data, width, height }) => ({ data, width, height })), arg);
  }, [pngs.map((png) => png.toString('base64')), analyse.toString(), arg]);
}

/**
 * The share of the pixels of `selector`'s first element, as the screen shows it, that are
 * black or nearly (every channel under 24): an SVG shape or a canvas left filled black,
 * say because its styles never arrived. Text in the page's colours is not that dark.
 */
export function blackShare(page, selector) {
  return analyseScreenshot(page, selector, ({ data, width, height }) => {
    let black = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 24 && data[i + 1] < 24 && data[i + 2] < 24) black++;
    return black / (width * height);
  });
}

/**
 * How a line chart's series look on screen (`selector`: the chart's root): for each
 * path[data-series], its stroke colour, length and width, how many of the chart's pixels
 * have its colour (within 40 of each channel), and the share of points along its path,
 * one every 2 px, that show its colour within 2 px. A line drawn as a line covers at most
 * about its length times its width; a filled shape covers far more.
 */
export function seriesPixels(page, selector) {
  return analyseScreenshot(page, selector, ({ data, width, height, left, top }, selector) => {
    const near = (i, [r, g, b]) => Math.abs(data[i] - r) <= 40 && Math.abs(data[i + 1] - g) <= 40 && Math.abs(data[i + 2] - b) <= 40;
    return [...document.querySelector(selector).querySelectorAll('path[data-series]')].map((path) => {
      const style = getComputedStyle(path);
      const colour = style.stroke.match(/\d+/g).slice(0, 3).map(Number);
      let pixels = 0;
      for (let i = 0; i < data.length; i += 4) if (near(i, colour)) pixels++;
      const length = path.getTotalLength(), matrix = path.getScreenCTM();
      let seen = 0, samples = 0;
      for (let at = 0; at <= length; at += 2) {
        const p = path.getPointAtLength(at);
        const x = Math.round(matrix.a * p.x + matrix.c * p.y + matrix.e - left), y = Math.round(matrix.b * p.x + matrix.d * p.y + matrix.f - top);
        samples++;
        let found = false;
        for (let dy = -2; dy <= 2 && !found; dy++) for (let dx = -2; dx <= 2 && !found; dx++) {
          const px = x + dx, py = y + dy;
          if (px >= 0 && py >= 0 && px < width && py < height && near((py * width + px) * 4, colour)) found = true;
        }
        if (found) seen++;
      }
      return { series: path.dataset.series, colour: style.stroke, fill: style.fill, length, width: parseFloat(style.strokeWidth), pixels, alongPath: seen / samples };
    });
  }, selector);
}

export async function screenshot(page, name) {
  const dir = process.env.SCREENSHOT_DIR;
  if (!dir) return null;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
