// Runs several browser test files in one Node process, one suite per file, sharing one
// server, one Chromium and its idle pages (harness.mjs, shareSites): what ctest runs.
//
//   node tests/browser/group.mjs pages lessons kv-stepper
//   node tests/browser/group.mjs --concurrency 2 pages lessons kv-stepper
//
// The files' suites run one after another, or with --concurrency N, N at a time (in the
// order given, so the longest go first). A file's before and after hooks, and its tests,
// belong to its suite; a file that fails to load fails its suite, and the others still run.
import { after, describe } from 'node:test';

import { shareSites } from './harness.mjs';

const usage = 'usage: node tests/browser/group.mjs [--concurrency N] NAME...  (NAME.test.mjs in tests/browser)';
const args = process.argv.slice(2);
let concurrency = 1;
if (args[0] === '--concurrency') {
  concurrency = Number(args[1]);
  args.splice(0, 2);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`--concurrency takes a whole number of 1 or more\n${usage}`);
    process.exit(2);
  }
}
if (!args.length) {
  console.error(usage);
  process.exit(2);
}
const closeSharedSite = shareSites();
after(closeSharedSite);
describe(`${args.length} files, ${concurrency} at a time`, { concurrency }, () => {
  for (const name of args) {
    describe(name, async () => {
      await import(new URL(`./${name}.test.mjs`, import.meta.url).href);
    });
  }
});
