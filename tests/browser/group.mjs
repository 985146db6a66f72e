// Runs several browser test files in one Node process, one suite per file, sharing one
// server, one Chromium and its idle pages (harness.mjs, shareSites): what ctest runs.
//
//   node tests/browser/group.mjs pages lessons kv-stepper
//
// A file's before and after hooks, and its tests, belong to its suite; a file that
// fails to load fails its suite, and the files after it still run.
import { after, describe } from 'node:test';

import { shareSites } from './harness.mjs';

const names = process.argv.slice(2);
if (!names.length) {
  console.error('usage: node tests/browser/group.mjs NAME...  (NAME.test.mjs in tests/browser)');
  process.exit(2);
}
const closeSharedSite = shareSites();
after(closeSharedSite);
for (const name of names) {
  describe(name, async () => {
    await import(new URL(`./${name}.test.mjs`, import.meta.url).href);
  });
}
