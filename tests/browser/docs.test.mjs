// What the chapters cite, shipped with the site (web/tools/docs-pages.ts): the README and
// docs/*.md as pages under docs/, the dump helper as a download.
//
//   pages      every document of the repository is a page: its first heading is the
//              page's, it loads with no error and no request off the machine, axe finds
//              nothing, and it fits a 360 px screen
//   links      every link on every page of the site (the chapters with their widgets built,
//              the exercises, the documents) that stays on the site answers 200, and a link
//              to #id lands on an element with that id
//   mentions   a file or an attn command the chapters name in their prose (`<code>` outside
//              a code block) is a link to it
//   download   the dump helper the diff section offers is byte for byte tools/anatomy_dump.py
//   source     every page's header offers the source archive, with its size, and it answers
//              200 with a gzip body (tests/web/source-archive.test.mjs checks what it holds)
//   names      every docs page's title names the site once, "<page> · Attention Anatomy", and
//              the documents' list is the same on every docs page, in sentence case
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  assertNoProblems, distDir, formatViolations, layoutWidth, openPage, repoRoot, runAxe, startSite, waitForWidget,
} from './harness.mjs';

const { archiveName, formatSize } = await import(pathToFileURL(path.join(repoRoot, 'web', 'tools', 'source-archive.mjs')).href);
const siteName = 'Attention Anatomy';

let site;
before(async () => { site = await startSite(); });
after(() => site?.close());

const documents = [
  ['README.md', 'docs/readme.html'],
  ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort()
    .map((f) => [`docs/${f}`, `docs/${f.slice(0, -3)}.html`]),
];

test('every document of the repository is a page of the site, whole, accessible and 360 px wide', async (t) => {
  for (const [source, page] of documents) {
    assert.ok(fs.existsSync(path.join(distDir(), page)), `${source} is not in the build as ${page}`);
    const heading = /^# (.+)$/m.exec(fs.readFileSync(path.join(repoRoot, source), 'utf8'))[1].replace(/`/g, '');
    for (const width of [1280, 360]) {
      const opened = await openPage(site.browser, site.url(page), { width, height: 800 });
      t.after(opened.close);
      assert.equal((await opened.page.locator('main h1').textContent()).trim(), heading, `${page}: its heading`);
      assert.equal(await opened.page.locator('script').count(), 0, `${page} runs no script`);
      await opened.page.waitForLoadState('load');
      assertNoProblems(opened.problems, `${page} at ${width} px`);
      const layout = await layoutWidth(opened.page);
      assert.ok(layout.scrollWidth <= layout.viewport + 1, `${page} at ${width} px is ${layout.scrollWidth} px wide: ${JSON.stringify(layout.offenders)}`);
      if (width === 1280) {
        const violations = await runAxe(opened.page);
        assert.equal(violations.length, 0, `${page}:\n${formatViolations(violations)}`);
      }
      await opened.close();
    }
  }
});

/** Every link of the page as the reader sees it: { href (absolute), text, download }. */
const linksOf = (page) => page.$$eval('a[href]', (anchors) =>
  anchors.map((a) => ({ href: a.href, text: a.textContent.trim().slice(0, 60), download: a.hasAttribute('download') })));

/** Opens a page of the site with its widgets built where a widget holds links: its links. */
async function pageLinks(t, name) {
  const opened = await openPage(site.browser, site.url(name), { width: 1280, height: 800 });
  t.after(opened.close);
  if (name === 'index.html') assert.equal((await waitForWidget(opened.page, 'trace-viewer', 20_000)).ready, 'true');
  const links = await linksOf(opened.page);
  const mentions = await opened.page.$$eval('main code', (codes) => codes
    .filter((c) => !c.closest('pre') && /^(attn\b|docs\/|tools\/|README)/.test(c.textContent.trim()))
    .map((c) => ({ text: c.textContent.trim(), linked: c.closest('a[href]')?.getAttribute('href') ?? null })));
  await opened.close();
  return { links, mentions };
}

const htmlCache = new Map();
async function fetchText(url) {
  if (!htmlCache.has(url)) {
    const response = await fetch(url);
    htmlCache.set(url, { status: response.status, text: response.ok ? await response.text() : '' });
  }
  return htmlCache.get(url);
}

/** The links of `links` that lead nowhere on the site: a status other than 200, or an #id with no element. */
async function deadLinks(links) {
  const dead = [];
  for (const { href, text } of links) {
    const url = new URL(href);
    if (url.origin !== new URL(site.url('index.html')).origin) continue; // off the site: not the page's to serve
    const target = url.href.split('#')[0];
    const { status, text: body } = await fetchText(target);
    if (status !== 200) dead.push(`${href} ("${text}"): status ${status}`);
    else if (url.hash && !new RegExp(`\\sid="${decodeURIComponent(url.hash.slice(1)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).test(body))
      dead.push(`${href} ("${text}"): no element with id ${url.hash}`);
  }
  return dead;
}

test('every link on the site leads somewhere, and every file or command the prose names is a link', async (t) => {
  const pages = ['index.html', 'notebook.html', 'exercises.html', ...documents.map(([, page]) => page)];
  const dead = [];
  const unlinked = [];
  for (const name of pages) {
    const { links, mentions } = await pageLinks(t, name);
    assert.ok(links.length > 3, `${name}: only ${links.length} links found`);
    for (const line of await deadLinks(links)) dead.push(`${name}: ${line}`);
    if (!name.startsWith('docs/')) for (const m of mentions) if (m.linked === null) unlinked.push(`${name}: <code>${m.text}</code>`);
  }
  assert.deepEqual(dead, [], 'links that lead nowhere');
  assert.deepEqual(unlinked, [], 'files and commands named in the prose without a link to them');
});

test('the diff section offers the dump helper as a download, byte for byte the repository\'s', async (t) => {
  const opened = await openPage(site.browser, site.url('index.html'), { width: 1280, height: 800 });
  t.after(opened.close);
  assert.equal((await waitForWidget(opened.page, 'trace-viewer', 20_000)).ready, 'true');
  const link = opened.page.locator('[data-widget="trace-viewer"] a[download]', { hasText: 'tools/anatomy_dump.py' });
  assert.equal(await link.count(), 1, 'one download link for tools/anatomy_dump.py in the diff section');
  const download = await Promise.all([opened.page.waitForEvent('download'), link.click()]).then(([d]) => d);
  assert.equal(download.suggestedFilename(), 'anatomy_dump.py');
  const saved = await download.path();
  assert.ok(fs.readFileSync(saved).equals(fs.readFileSync(path.join(repoRoot, 'tools', 'anatomy_dump.py'))),
    'the download is not tools/anatomy_dump.py');
  // The same file through the README's page, where `tools/anatomy_dump.py` is written as code.
  const readme = (await fetchText(site.url('docs/readme.html'))).text;
  assert.match(readme, /<a href="\.\.\/tools\/anatomy_dump\.py" download><code>tools\/anatomy_dump\.py<\/code><\/a>/);
});

test('every page\'s header offers the source archive with its size, and it answers 200 with a gzip body', async () => {
  const pages = ['index.html', 'notebook.html', 'exercises.html', ...documents.map(([, page]) => page)];
  const response = await fetch(site.url(archiveName));
  assert.equal(response.status, 200, `${archiveName}: status ${response.status}`);
  const body = Buffer.from(await response.arrayBuffer());
  assert.deepEqual([...body.subarray(0, 2)], [0x1f, 0x8b], `${archiveName} is not gzip`);
  assert.ok(fs.readFileSync(path.join(distDir(), archiveName)).equals(body), 'the served archive is not the built one');
  for (const name of pages) {
    // The HTML as served, before any script: the docs pages run none, the chapters write their header into the HTML.
    const html = (await fetchText(site.url(name))).text;
    const header = /<header class="site-header">[\s\S]*?<\/header>/.exec(html)?.[0];
    assert.ok(header, `${name}: no site header`);
    const links = [...header.matchAll(/<a href="([^"]+)" download[^>]*data-source-archive>[^<]*<\/a> <span class="archive-size">\(([^)]+)\)<\/span>/g)];
    assert.equal(links.length, 1, `${name}: ${links.length} source archive links in the header:\n${header}`);
    const [, href, size] = links[0];
    assert.equal(new URL(href, site.url(name)).href, site.url(archiveName), `${name}: the link leads to ${href}`);
    assert.equal(size, formatSize(body.length), `${name}: the size beside the link`);
  }
});

test('every docs page\'s title names the site once, and the documents\' list is one list in sentence case', async () => {
  let list = null;
  for (const [source, page] of documents) {
    const html = (await fetchText(site.url(page))).text;
    const title = /<title>([^<]*)<\/title>/.exec(html)[1];
    assert.equal(title.split(siteName).length - 1, 1, `${page}: the title "${title}" names the site ${title.split(siteName).length - 1} times`);
    assert.ok(title.endsWith(` · ${siteName}`) && title.length > ` · ${siteName}`.length, `${page}: the title "${title}"`);
    const nav = /<nav class="docs-list" aria-label="Documents">([\s\S]*?)<\/nav>/.exec(html)[1];
    const labels = [...nav.matchAll(/<a href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].map(([, href, label]) => [new URL(href, site.url(page)).pathname, label]);
    assert.equal(labels.length, documents.length, `${page}: the list names ${labels.length} of the ${documents.length} documents (${source})`);
    if (list) assert.deepEqual(labels, list, `${page}: its list differs from the first page's`);
    list ??= labels;
  }
  // Sentence case, as the site's headings: a capital first letter, the other words in small letters,
  // but for names (Llama) and words in capitals throughout (README).
  const names = new Set(['Llama']);
  for (const [, label] of list) {
    const [first, ...rest] = label.split(' ');
    assert.match(first, /^[A-Z]/, `"${label}" starts with a small letter`);
    for (const word of rest) assert.ok(word === word.toLowerCase() || word === word.toUpperCase() || names.has(word), `"${label}": "${word}" is capitalised`);
  }
});
