// Every page of the built site in headless Chromium (see harness.mjs):
//
//   loads:    no console errors, no uncaught exceptions, no failed requests, and no
//             request to any host but 127.0.0.1 (the page works offline)
//   widgets:  every [data-widget] reaches data-ready="true" within 10 s of load
//   axe:      no "serious" or "critical" violation of wcag2a, wcag2aa, best-practice
//             (every violation found is printed, with its targets)
//   layout:   no horizontal scrolling of the document at 360 px and at 1280 px
//   input:    each widget's first input or select that can change, changed, changes the widget
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
  assertNoProblems, changeFirstControl, distDir, formatProblems, formatViolations, layoutWidth, openPage,
  runAxe, screenshot, startSite, waitForWidgetChange, waitForWidgets, widgetSnapshot,
} from './harness.mjs';

const pages = ['index.html', 'notebook.html', 'exercises.html'].filter(
  (page) => page !== 'exercises.html' || fs.existsSync(path.join(distDir(), page)));

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
