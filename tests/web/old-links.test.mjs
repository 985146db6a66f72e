// Links shared before the widgets had names (web/src/lib/old-links.mjs): a query with the
// old numbered keys ("w1.tokens") becomes the query a new link gives, so the widgets read
// the same state from both. tests/browser/mask-gallery.test.mjs opens both in the page.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

const webDir = path.resolve(import.meta.dirname, '..', '..', 'web');
const { renameOldKeys, widgetOfOldNumber } = await import(pathToFileURL(path.join(webDir, 'src', 'lib', 'old-links.mjs')).href);

test('every old number names a widget of a page', async () => {
  const fs = await import('node:fs/promises');
  const pages = (await Promise.all(['index.html', 'notebook.html'].map((p) => fs.readFile(path.join(webDir, p), 'utf8')))).join('\n');
  const onPages = new Set([...pages.matchAll(/data-widget="([^"]+)"/g)].map((m) => m[1]));
  assert.equal(Object.keys(widgetOfOldNumber).length, 15);
  for (const [old, name] of Object.entries(widgetOfOldNumber)) assert.ok(onPages.has(name), `${old} -> ${name}, on no page`);
  // Every widget on a page has an old number, except those that were given a name from the start.
  const namedFromTheStart = ['gpu-check', 'flash-tiles', 'multi-head', 'sink-scores', 'streaming', 'gpu-cost'];
  const numbered = new Set(Object.values(widgetOfOldNumber));
  assert.deepEqual([...onPages].filter((name) => !numbered.has(name)), namedFromTheStart, 'a widget without an old number');
});

test('an old link gives the query of the new link, key by key and in order', () => {
  for (const [old, name] of Object.entries(widgetOfOldNumber)) {
    const oldLink = `?${old}.a=1&other=x&${old}.b=2%2C3`;
    const newLink = `?${name}.a=1&other=x&${name}.b=2%2C3`;
    assert.equal(renameOldKeys(oldLink), newLink, old);
    assert.equal(renameOldKeys(newLink), null, `${name}: a new link is left alone`);
  }
  assert.equal(renameOldKeys('?w3.kind=sink_window&w3.T=64&w5.prompt=4,5'), '?mask-gallery.kind=sink_window&mask-gallery.T=64&kv-stepper.prompt=4%2C5');
});

test('a key given under its new name wins over its old one; other keys stay', () => {
  assert.equal(renameOldKeys('?w1.tokens=1&explorer.tokens=2'), '?explorer.tokens=2');
  assert.equal(renameOldKeys('?e=3&w15.x=1&w1=2&w1.=5'), '?e=3&w15.x=1&w1=2&explorer.=5');
  assert.equal(renameOldKeys(''), null);
  assert.equal(renameOldKeys('?w7.op=rope'), '?source-reader.op=rope');
});
