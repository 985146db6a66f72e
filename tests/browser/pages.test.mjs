// Every page of the built site in headless Chromium (see harness.mjs):
//
//   loads:    no console errors, no uncaught exceptions, no failed requests, and no
//             request to any host but 127.0.0.1 (the page works offline)
//   widgets:  every [data-widget] reaches data-ready="true" within 10 s of load
//   axe:      no "serious" or "critical" violation of wcag2a, wcag2aa, best-practice
//             (every violation found is printed, with its targets)
//   layout:   no horizontal scrolling of the document at 360 px and at 1280 px
//   input:    each widget's first input or select that can change, changed, changes the widget
//   skip link: the first Tab reaches "Skip to content", shown on screen; Enter moves focus to <main>
//   favicon:  the page links an SVG icon that the server has (no 404 in a real browser's console)
//   formulas: at 1280 px every display formula fits the column; at 360 px one that scrolls
//             sideways shows a shadow at the edge that hides more, and none at the other
//   focus:    a focused heatmap's focus ring lies inside every box that clips it
//   names:    no two visible buttons of a widget have the same accessible name
//   symbols:  the notebook's code uses its own symbols (sqrt(d_h), not chapter 1's D)
//   charts:   every line of every chart drawn has no fill (computed style: a stylesheet rule
//             that fills a series turns its line into a solid shape), no axis title
//             overlaps a tick label, and no text runs past the chart's edges
//   alone:    each widget, reached straight from the top of a freshly loaded page (so that
//             no other widget's code or styles have loaded unless it needs them), is drawn
//             complete: its figure has no black area (under 1% of its pixels black; an SVG
//             shape whose styles are missing fills black)
// Each page is loaded once at 1280 px and once at 360 px; every check but the input
// probe (1280 px only, it changes the page) runs on both: at 360 px equations and
// code blocks start to scroll sideways, which axe checks for keyboard access.
//
// Screenshots of each page at both widths go to $SCREENSHOT_DIR when it is set.
// Run by ctest (which sets ANATOMY_WEB_DIST), or by hand after building the page:
//   (cd web && npm ci && npm run build) && node --test tests/browser/pages.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  analysePngs, assertNoProblems, blackShare, changeFirstControl, distDir, formatProblems, formatViolations, layoutWidth, openPage,
  runAxe, screenshot, startSite, waitForWidgetChange, waitForWidgets, widgetSnapshot,
} from './harness.mjs';

const pages = ['index.html', 'notebook.html', 'exercises.html', 'gpu.html'].filter(
  (page) => ['index.html', 'notebook.html'].includes(page) || fs.existsSync(path.join(distDir(), page)));
// The chapters draw charts; the exercises page and the GPU page have none.
const withCharts = (page) => ['index.html', 'notebook.html'].includes(page);

// A widget answers a change within this long (it may compute, then draw on the next frame).
const reactWithinMs = 5000;

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

for (const pageName of pages) {
  const shotName = (width) => `${pageName.replace(/\.html$/, '')}-${width}`;

  describe(pageName, () => {
    // The page at 1280 px and at 360 px, each loaded once and shared by the tests below.
    const views = [{ width: 1280, height: 800 }, { width: 360, height: 740 }];
    const wide = views[0];
    before(async () => {
      for (const view of views) {
        view.opened = await openPage(site.browser, site.url(pageName), { width: view.width, height: view.height });
        view.widgets = await waitForWidgets(view.opened.page, 10000);
      }
    });
    after(async () => {
      for (const view of views) await view.opened?.close();
    });

    test('every widget is ready within 10 s', () => {
      const notReady = views.flatMap((view) =>
        view.widgets.filter((w) => w.ready !== 'true').map((w) => ({ ...w, width: view.width })));
      assert.ok(
        notReady.length === 0,
        `widgets not ready:\n${notReady
          .map((w) => `  ${w.name} at ${w.width} px: data-ready=${w.ready ?? '(unset after 10 s)'}${w.message ? `: ${w.message}` : ''}`)
          .join('\n')}`);
    });

    test('loads with no console errors, page errors, failed or non-local requests', () => {
      for (const view of views) assertNoProblems(view.opened.problems, `${pageName} at ${view.width} px`);
    });

    for (const view of views) {
      test(`axe at ${view.width} px: no serious or critical violations (wcag2a, wcag2aa, best-practice)`, async () => {
        const violations = await runAxe(view.opened.page);
        if (violations.length) {
          console.log(`axe on ${pageName} at ${view.width} px, ${violations.length} violation(s):\n${formatViolations(violations)}`);
        }
        const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        assert.ok(severe.length === 0,
          `axe found serious or critical violations on ${pageName} at ${view.width} px:\n${formatViolations(severe)}`);
      });
    }

    for (const view of views) {
      test(`fits ${view.width} px without horizontal scrolling`, async () => {
        await screenshot(view.opened.page, shotName(view.width));
        const { scrollWidth, offenders } = await layoutWidth(view.opened.page);
        assert.ok(scrollWidth <= view.width + 1,
          `document is ${scrollWidth} px wide at ${view.width} px; sticking out:\n  ${offenders.join('\n  ')}`);
      });
    }

    test('the skip link is the first Tab stop, shows on focus, and moves focus to main', async (t) => {
      const { page, close } = await openPage(site.browser, site.url(pageName), { width: 360, height: 740 });
      t.after(close);
      await page.keyboard.press('Tab');
      const link = await page.evaluate(() => {
        const node = document.activeElement;
        const box = node.getBoundingClientRect();
        return { tag: node.tagName, text: node.textContent.trim(), href: node.getAttribute('href'), top: box.top, bottom: box.bottom, left: box.left, right: box.right, height: box.height };
      });
      assert.equal(link.tag, 'A', `the first Tab stop is <${link.tag.toLowerCase()}> "${link.text}"`);
      assert.equal(link.text, 'Skip to content');
      assert.ok(link.top >= 0 && link.left >= 0 && link.right <= 360 && link.height >= 16, `the focused skip link is on screen: ${JSON.stringify(link)}`);
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.tagName === 'MAIN', null, { timeout: 2000 });
      assert.equal(await page.evaluate(() => document.querySelector(location.hash)?.tagName), 'MAIN');
    });

    test('links an SVG favicon that the server has', async () => {
      const { page } = wide.opened;
      const href = await page.evaluate(() => document.querySelector('link[rel~="icon"]')?.href ?? null);
      assert.ok(href, 'no <link rel="icon">: a browser asks for /favicon.ico and logs its 404');
      const icon = await page.evaluate(async (href) => {
        const response = await fetch(href);
        return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
      }, href);
      assert.equal(icon.status, 200, `${href}: HTTP ${icon.status}`);
      assert.match(icon.type, /^image\/svg\+xml/);
      assert.match(icon.body, /<svg[\s>]/);
    });

    test('display formulas fit at 1280 px; at 360 px one that scrolls shows a shadow where more is hidden', async (t) => {
      const wideFormulas = await wide.opened.page.$$eval('.katex-display', (nodes) =>
        nodes.filter((n) => n.scrollWidth > n.clientWidth + 1).map((n) => `${n.textContent.slice(0, 60)}… (${n.scrollWidth} px in ${n.clientWidth})`));
      assert.deepEqual(wideFormulas, [], 'formulas cut at 1280 px');

      const { page } = views[1].opened;
      const handle = await page.evaluateHandle(() =>
        [...document.querySelectorAll('article .katex-display')].find((n) => n.scrollWidth > n.clientWidth + 1 && !n.closest('.widget, .note, details')) ?? null);
      if (!(await handle.evaluate((n) => n !== null))) {
        t.skip('no formula scrolls at 360 px');
        return;
      }
      // The formula's width is final once KaTeX's fonts are in (a late font widens it).
      await page.evaluate(() => document.fonts.ready);
      await handle.evaluate((n) => { n.scrollIntoView({ block: 'center' }); n.scrollLeft = 0; });
      // The formula as drawn and with its background removed, each an element screenshot
      // (Playwright brings it into view and waits until it stops moving: sections above lay
      // out as they come near, content-visibility), compared in a 5 px strip at each edge:
      // they differ only where the background draws something (the glyphs are the same).
      // The strips leave out each edge's outermost pixel column, which a scroll position
      // ending on a fraction of a pixel may leave uncovered by antialiasing alone.
      const edges = async () => {
        const drawn = await handle.screenshot();
        await handle.evaluate((n) => n.style.setProperty('background', 'none', 'important'));
        const bare = await handle.screenshot();
        await handle.evaluate((n) => n.style.removeProperty('background'));
        return analysePngs(page, [drawn, bare], ([p, q]) => {
          if (p.width !== q.width || p.height !== q.height) return { left: null, right: null };
          const differs = (from, to) => {
            for (let y = 0; y < p.height; y++)
              for (let x = from; x < to; x++)
                for (let k = 0; k < 3; k++) if (p.data[(y * p.width + x) * 4 + k] !== q.data[(y * p.width + x) * 4 + k]) return true;
            return false;
          };
          return { left: differs(1, 6), right: differs(p.width - 6, p.width - 1) };
        });
      };
      // A loaded machine may show the last frame's pixels a little longer: the strips are
      // taken again, for up to 3 s, until they show what is expected; a wrong shadow never does.
      const settledEdges = async (expected) => {
        let seen = await edges();
        for (const deadline = Date.now() + 3000; JSON.stringify(seen) !== JSON.stringify(expected) && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 150));
          seen = await edges();
        }
        return seen;
      };
      assert.deepEqual(await settledEdges({ left: false, right: true }), { left: false, right: true }, 'scrolled to the start: a shadow on the right edge only');
      await handle.evaluate((n) => (n.scrollLeft = n.scrollWidth));
      const end = await handle.evaluate((n) => ({ left: n.scrollLeft, width: n.scrollWidth, client: n.clientWidth }));
      assert.ok(end.left + end.client >= end.width - 1, `scrolled to the end: ${JSON.stringify(end)}`);
      assert.deepEqual(await settledEdges({ left: true, right: false }), { left: true, right: false }, 'scrolled to the end: a shadow on the left edge only');
      await handle.evaluate((n) => (n.scrollLeft = 0));
    });

    for (const view of views) {
      test(`a focused heatmap's focus ring is not clipped at ${view.width} px`, async () => {
        const { page } = view.opened;
        const clipped = await page.evaluate(() => {
          const found = [];
          for (const canvas of document.querySelectorAll('canvas.heatmap-canvas')) {
            if (!canvas.getClientRects().length) continue;
            canvas.focus({ preventScroll: true });
            const style = getComputedStyle(canvas);
            const where = `${canvas.closest('[data-widget]')?.dataset.widget}: ${canvas.getAttribute('aria-label')?.split('.')[0]}`;
            if (style.outlineStyle === 'none' || parseFloat(style.outlineWidth) === 0) {
              found.push(`${where}: no focus ring`);
              continue;
            }
            const reach = parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset);
            const box = canvas.getBoundingClientRect();
            const ring = { left: box.left - reach, top: box.top - reach, right: box.right + reach, bottom: box.bottom + reach };
            // Every box that clips its overflow, up to the page: the ring must lie within what it can scroll to.
            for (let p = canvas.parentElement; p && p !== document.body; p = p.parentElement) {
              const s = getComputedStyle(p);
              if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
              const r = p.getBoundingClientRect();
              const left = r.left + p.clientLeft - p.scrollLeft, top = r.top + p.clientTop - p.scrollTop;
              const inside = ring.left >= left - 0.5 && ring.top >= top - 0.5 &&
                ring.right <= left + p.scrollWidth + 0.5 && ring.bottom <= top + p.scrollHeight + 0.5;
              if (!inside) {
                found.push(`${where}: ring ${JSON.stringify(ring)} cut by ${p.tagName.toLowerCase()}.${[...p.classList].join('.')}`);
                break;
              }
            }
            canvas.blur();
          }
          return found;
        });
        assert.deepEqual(clipped, []);
      });
    }

    for (const view of views) {
      test(`every chart's lines are strokes, never filled shapes, its axis titles clear its tick labels and its text stays inside it at ${view.width} px`, async (t) => {
        // Chapter 1 draws the Shakespeare model's loss curve, the notebook the cost widget's,
        // once their data is in (the loss curve's widget loads its model only when scrolled
        // near, and adds its chart after) and they are laid out (sections far from the
        // viewport are not: content-visibility). So the charts and the widgets that draw
        // them are scrolled to until one chart has drawn lines (up to 20 s), then each chart
        // is scrolled to and read there, given up to 5 s to draw its lines (live training's
        // has none until it trains).
        const { page } = view.opened;
        const charts = await page.evaluate(async (expectCharts) => {
          const start = scrollY;
          const frames = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
          for (const deadline = performance.now() + 20_000; expectCharts && performance.now() < deadline;) {
            for (const root of document.querySelectorAll('.line-chart, [data-widget="loss-and-continuation"], [data-widget="cost"]')) {
              root.scrollIntoView({ block: 'center' });
              await frames();
            }
            if (document.querySelector('.line-chart .chart-line')) break;
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          const found = [];
          for (const root of document.querySelectorAll('.line-chart')) {
            root.scrollIntoView({ block: 'center' });
            // Laid out only in the frames after it comes into view, drawn lines or not.
            await frames();
            for (const deadline = performance.now() + 5000; !root.querySelector('.chart-line') && performance.now() < deadline;)
              await new Promise((resolve) => setTimeout(resolve, 50));
            const svg = root.querySelector('svg.line-chart-svg');
            if (!svg || !svg.getClientRects().length) continue;
            const where = svg.closest('[data-widget]')?.dataset.widget ?? '(no widget)';
            const lines = [...svg.querySelectorAll('.chart-line')].map((line) => ({
              series: line.dataset.series ?? line.getAttribute('class'), fill: getComputedStyle(line).fill,
            }));
            const box = (node) => { const b = node.getBBox(); return { text: node.textContent, left: b.x, right: b.x + b.width, top: b.y, bottom: b.y + b.height }; };
            const titles = [...svg.querySelectorAll('.chart-axis-title')].map(box);
            const ticks = [...svg.querySelectorAll('.chart-tick')].map(box);
            const overlaps = titles.flatMap((title) => ticks.filter((tick) =>
              tick.left < title.right && title.left < tick.right && tick.top < title.bottom && title.top < tick.bottom)
              .map((tick) => `"${title.text}" over the tick "${tick.text}"`));
            const width = Number(svg.getAttribute('width'));
            const cut = [...svg.querySelectorAll('text')].map(box).filter((text) => text.left < -0.5 || text.right > width + 0.5)
              .map((text) => `"${text.text}" from ${text.left.toFixed(0)} to ${text.right.toFixed(0)} of ${width}`);
            found.push({ where, lines, overlaps, cut });
          }
          scrollTo(0, start);
          return found;
        }, withCharts(pageName));
        if (!withCharts(pageName) && charts.length === 0) {
          t.skip('no chart on this page');
          return;
        }
        assert.ok(charts.some((chart) => chart.lines.length > 0), `${pageName}: no chart line found to check`);
        const filled = charts.flatMap((chart) => chart.lines.filter((line) => line.fill !== 'none').map((line) => `${chart.where}: ${line.series} fill ${line.fill}`));
        assert.deepEqual(filled, [], 'chart lines drawn as filled shapes');
        assert.deepEqual(charts.flatMap((chart) => chart.overlaps.map((o) => `${chart.where}: ${o}`)), [], 'axis titles overlapping tick labels');
        assert.deepEqual(charts.flatMap((chart) => chart.cut.map((c) => `${chart.where}: ${c}`)), [], 'chart text running past the chart\'s edges');
      });
    }

    if (pageName === 'notebook.html') {
      // Its own symbols: d the model width, d_h a head's; D is chapter 1's model width.
      test('the notebook\'s code writes its own symbols (d_h for the head size, never D)', async () => {
        const code = await wide.opened.page.$$eval('pre code', (blocks) => blocks.map((b) => b.textContent).join('\n'));
        assert.match(code, /sqrt\(d_h\)/);
        assert.doesNotMatch(code, /sqrt\(D\)|, D\]/);
      });
    }

    test('no two visible buttons of a widget share an accessible name', async () => {
      const duplicates = await wide.opened.page.evaluate(() => {
        const found = [];
        for (const host of document.querySelectorAll('[data-widget]')) {
          const seen = new Map();
          for (const button of host.querySelectorAll('button')) {
            if (!button.getClientRects().length) continue;
            const labelledBy = button.getAttribute('aria-labelledby');
            const name = (button.getAttribute('aria-label') ??
              (labelledBy ? labelledBy.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? '').join(' ') : button.textContent))
              .replace(/\s+/g, ' ').trim();
            seen.set(name, (seen.get(name) ?? 0) + 1);
          }
          for (const [name, n] of seen) if (n > 1) found.push(`${host.dataset.widget}: "${name}" x${n}`);
        }
        return found;
      });
      assert.deepEqual(duplicates, []);
    });

    // Last: it changes the page.
    test('every widget reacts to input', async (t) => {
      const { page, problems } = wide.opened;
      const before = formatProblems(problems);
      for (const { name, ready } of wide.widgets) {
        await t.test(name, async (t) => {
          if (ready !== 'true') {
            t.skip(`not ready (data-ready=${ready})`);
            return;
          }
          const snapshot = await widgetSnapshot(page, name);
          const change = await changeFirstControl(page, name);
          if (!change) {
            t.skip('no input or select');
            return;
          }
          if (change.to === null) {
            t.skip(`no control has another value to take (${change.control})`);
            return;
          }
          const changed = await waitForWidgetChange(page, name, snapshot, reactWithinMs);
          assert.ok(changed,
            `${name}: changing ${change.control} from ${change.from} to ${change.to} left the widget unchanged after ${reactWithinMs} ms`);
        });
      }
      assert.equal(formatProblems(problems), before, `${pageName}: new problems while changing inputs`);
    });
  });
}

// Each widget with only what it loads itself: the page is loaded afresh and the widget's
// figure jumped to, not scrolled through the ones before it.
for (const pageName of ['index.html', 'notebook.html']) {
  test(`${pageName}: each widget, reached alone, is drawn complete (no black area)`, async (t) => {
    const names = await (async () => {
      const opened = await openPage(site.browser, site.url(pageName));
      try {
        return await opened.page.$$eval('[data-widget]', (hosts) => hosts.map((host) => host.dataset.widget));
      } finally {
        await opened.close();
      }
    })();
    for (const name of names) {
      await t.test(name, async () => {
        const { page, problems, close } = await openPage(site.browser, site.url(pageName));
        try {
          const figure = `[data-widget="${name}"]`;
          await page.evaluate((name) => document.querySelector(`[data-widget="${name}"]`).scrollIntoView({ block: 'start' }), name);
          await page.waitForFunction((name) => document.querySelector(`[data-widget="${name}"]`).dataset.ready, name, { timeout: 15_000 });
          // Its drawing happens in the frames after it is ready. Styles that come later than
          // that have left it black for a while: that fails too.
          await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
          const share = await blackShare(page, figure);
          assert.ok(share < 0.01, `${name}: ${(share * 100).toFixed(1)}% of its figure is black`);
          assertNoProblems(problems, `${pageName} at ${name}`);
        } finally {
          await close();
        }
      });
    }
  });
}

// The check above that no page asks another host can fail: a page that does is caught,
// and the browser fails the request itself (harness.mjs's chromiumArgs), for a name and
// for an address alike, so nothing leaves the machine.
test('a request to another host fails in the browser and is reported', async () => {
  const opened = await openPage(site.browser, site.url('index.html'));
  try {
    const outcomes = await opened.page.evaluate(async () => Promise.all(
      ['http://example.com/x.js', 'http://203.0.113.7/x.wasm'].map((url) =>
        fetch(url).then((response) => `answered ${response.status}`, (error) => `failed: ${error.name}`))));
    assert.deepEqual(outcomes, ['failed: TypeError', 'failed: TypeError']);
    assert.deepEqual(opened.problems.nonLocalRequests, ['GET http://example.com/x.js', 'GET http://203.0.113.7/x.wasm']);
    assert.match(formatProblems(opened.problems), /nonLocalRequests: GET http:\/\/example\.com\/x\.js/);
  } finally {
    await opened.close();
  }
});
