// The exercises page as its tests use it: a solution file's text, an exercise opened
// with its judge ready, code put into the CodeMirror editor the way a paste would, the
// editor's text, and a Run timed from the click to the verdict. Shared by
// exercises.test.mjs and exercises-timing.test.mjs.
import fs from 'node:fs';
import path from 'node:path';

import { openPage, repoRoot } from './harness.mjs';

const solutions = path.join(repoRoot, 'tests', 'exercises', 'solutions');
export const solution = (exercise, name) => fs.readFileSync(path.join(solutions, exercise, `${name}.js`), 'utf8');

/** exercises.html?e=EXERCISE on `site` (startSite's), once its judge is ready. */
export async function openExercise(site, exercise, options = {}) {
  const opened = await openPage(options.browser ?? site.browser, site.url(`exercises.html?e=${exercise}`), options);
  await opened.page.waitForSelector('body[data-judge-ready]', { timeout: 10_000 });
  return opened;
}

// Replaces the editor's text the way a paste would: through CodeMirror's own input
// handling (typing key by key would trigger auto-indent and bracket closing).
export async function setCode(page, code) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(code);
}

export const editorText = (page) => page.evaluate(() =>
  [...document.querySelectorAll('.cm-content .cm-line')].map((line) => line.textContent).join('\n'));

// Clicks Run and waits for the verdict; returns the milliseconds in between as the page saw them.
export async function run(page) {
  await page.getByTestId('results').evaluate((node) => node.replaceChildren());
  const ms = await page.evaluate(() => new Promise((resolve) => {
    const results = document.querySelector('[data-testid=results]');
    const started = performance.now();
    const observer = new MutationObserver(() => {
      if (results.querySelector('[data-testid=verdict]')) {
        observer.disconnect();
        resolve(performance.now() - started);
      }
    });
    observer.observe(results, { childList: true, subtree: true });
    document.querySelector('[data-testid=run]').click();
  }));
  return ms;
}
