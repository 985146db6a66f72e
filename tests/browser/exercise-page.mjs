// The exercises page as its tests use it: a solution's or a mistake's code, an exercise opened
// with its judge ready, code put into the CodeMirror editor the way a paste would, the
// editor's text, and a Run timed from the click to the verdict. Shared by
// exercises.test.mjs and exercises-timing.test.mjs.
import { mistakeSource, readExercises } from '../../exercises/read.mjs';
import { openPage } from './harness.mjs';

const exercises = new Map(readExercises().map((e) => [e.id, e]));
/** An exercise's solution.js ('solution'), or that solution with a mistake's edits (exercises/NN-<id>/mistakes.json). */
export const solution = (exercise, name) =>
  (name === 'solution' ? exercises.get(exercise).solution : mistakeSource(exercises.get(exercise), name));

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
