#!/usr/bin/env node
// The README's pictures of the page's first screen: chapter 1 as a reader first sees it,
// at 1280 x 800 and 360 x 740 px, once its first figure (first-screen) is drawn, in headless
// Chromium from the built page (web/dist, or $ANATOMY_WEB_DIST).
//
//   node tools/screenshots.mjs [OUT_DIR]      (default docs/images)
// Writes first-screen-1280.png and first-screen-360.png. Needs the page built
// (scripts/build-web.sh) and Debian's chromium (scripts/install-deps.sh).
import path from 'node:path';
import { openPage, repoRoot, startSite } from '../tests/browser/harness.mjs';

const out = path.resolve(process.argv[2] ?? path.join(repoRoot, 'docs', 'images'));
const site = await startSite();
try {
  for (const [width, height] of [[1280, 800], [360, 740]]) {
    const { page, close } = await openPage(site.browser, site.url('index.html'), { width, height });
    try {
      await page.waitForSelector('[data-widget="first-screen"][data-ready="true"] [data-testid="first-screen-drawing"] text', { timeout: 15_000 });
      await page.evaluate(() => document.fonts.ready);
      const file = path.join(out, `first-screen-${width}.png`);
      await page.screenshot({ path: file });
      console.log(`screenshots: ${path.relative(process.cwd(), file)}`);
    } finally {
      await close();
    }
  }
} finally {
  await site.close();
}
