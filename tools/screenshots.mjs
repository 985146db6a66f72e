#!/usr/bin/env node
// The README's pictures of the page, in headless Chromium from the built page (web/dist,
// or $ANATOMY_WEB_DIST):
//   first-screen-1280.png, first-screen-360.png  chapter 1 as a reader first sees it, at
//                                                1280 x 800 and 360 x 740 px, once its
//                                                first figure (first-screen) is drawn
//   attention-explorer.png                       chapter 1's explorer at 1280 px, built
//   multi-head.png                               the notebook's multi-head figure at 1280 px
//
//   node tools/screenshots.mjs [OUT_DIR]      (default docs/images)
// Needs the page built (scripts/build-web.sh) and Debian's chromium (scripts/install-deps.sh).
import path from 'node:path';
import { openPage, repoRoot, startSite, waitForWidget } from '../tests/browser/harness.mjs';

const out = path.resolve(process.argv[2] ?? path.join(repoRoot, 'docs', 'images'));
const site = await startSite();
const saved = (file) => console.log(`screenshots: ${path.relative(process.cwd(), file)}`);

/** One widget, built and scrolled to, as a picture of its figure alone. */
async function widgetPicture(page, name, file) {
  const widget = await waitForWidget(page, name, 20_000);
  if (widget?.ready !== 'true') throw new Error(`screenshots: ${name} did not build (${widget?.message})`);
  await page.evaluate(() => document.fonts.ready);
  await page.waitForTimeout(300);  // the heatmaps' second frame
  await page.locator(`[data-widget="${name}"]`).screenshot({ path: file });
  saved(file);
}

try {
  for (const [width, height] of [[1280, 800], [360, 740]]) {
    const { page, close } = await openPage(site.browser, site.url('index.html'), { width, height });
    try {
      await page.waitForSelector('[data-widget="first-screen"][data-ready="true"] [data-testid="first-screen-drawing"] text', { timeout: 15_000 });
      await page.evaluate(() => document.fonts.ready);
      const file = path.join(out, `first-screen-${width}.png`);
      await page.screenshot({ path: file });
      saved(file);
    } finally {
      await close();
    }
  }
  for (const [chapter, name, file] of [['index.html', 'explorer', 'attention-explorer.png'], ['notebook.html', 'multi-head', 'multi-head.png']]) {
    const { page, close } = await openPage(site.browser, site.url(chapter), { width: 1280, height: 900 });
    try {
      await widgetPicture(page, name, path.join(out, file));
    } finally {
      await close();
    }
  }
} finally {
  await site.close();
}
