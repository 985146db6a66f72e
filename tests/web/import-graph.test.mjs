// The page's code imports one way (web/src): every import, static, dynamic, type-only,
// a worker's `new URL('./x.ts', import.meta.url)` and an `import.meta.glob`, read with
// TypeScript's own preprocessor, makes one arrow of a graph that must have
//   - no circle, among files or among folders: a lazily loaded panel never imports from
//     the door that loads it;
//   - no arrow back up the layers: lib/ and source/ at the bottom, then gpu/ (the WebGPU
//     kernels), then widgets/shared/, then one folder per widget and exercises/ (neither
//     importing another's files), then widgets/registry.ts, which gathers the widgets'
//     entries, then pages/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const webDir = path.resolve(import.meta.dirname, '..', '..', 'web');
const srcDir = path.join(webDir, 'src');
const ts = createRequire(path.join(webDir, 'package.json'))('typescript');

/** Every script under a folder, relative to it with forward slashes. */
function scriptsUnder(dir) {
  return fs.readdirSync(dir, { recursive: true })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.d.mts'));
}

/** The file a relative specifier names: as written, or with .ts (Vite resolves a bare name so). */
function resolve(from, specifier, files) {
  const bare = specifier.replace(/\?.*$/, '');
  const name = path.posix.normalize(path.posix.join(path.posix.dirname(from), bare));
  for (const candidate of [name, `${name}.ts`, `${name}/index.ts`]) if (files.has(candidate)) return candidate;
  return null;
}

/** Every arrow [from, to] among the files of `dir`, and the specifiers that name no file there. */
export function importGraph(dir) {
  const files = new Set(scriptsUnder(dir));
  const arrows = [];
  const unresolved = [];
  for (const from of files) {
    const source = fs.readFileSync(path.join(dir, from), 'utf8');
    const specifiers = ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
    for (const m of source.matchAll(/new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g)) specifiers.push(m[1]);
    for (const m of source.matchAll(/import\.meta\.glob(?:<[^>]*>)?\(\s*['"]([^'"]+)['"]/g)) {
      const pattern = new RegExp(`^${path.posix.join(path.posix.dirname(from), m[1]).replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+')}$`);
      for (const to of files) if (pattern.test(to)) arrows.push([from, to]);
    }
    for (const specifier of specifiers.filter((s) => s.startsWith('.'))) {
      if (/\.(css|svg|json|txt|wgsl)(\?|$)/.test(specifier)) continue;
      const to = resolve(from, specifier, files);
      if (to === null) unresolved.push(`${from}: ${specifier}`);
      else arrows.push([from, to]);
    }
  }
  return { files, arrows, unresolved };
}

/** A file's layer: its rank, and its group (one per widget folder), which only its own files may import. */
export function layerOf(file) {
  if (file.startsWith('lib/') || file.startsWith('source/')) return { rank: 0, group: 'base' };
  if (file.startsWith('gpu/')) return { rank: 1, group: 'gpu' };
  if (file.startsWith('widgets/shared/')) return { rank: 2, group: 'widgets/shared' };
  if (file === 'widgets/registry.ts') return { rank: 4, group: 'registry' };
  if (file.startsWith('widgets/')) return { rank: 3, group: file.split('/').slice(0, 2).join('/') };
  if (file.startsWith('exercises/')) return { rank: 3, group: 'exercises' };
  if (file.startsWith('pages/')) return { rank: 5, group: 'pages' };
  return { rank: -1, group: file };
}

/** The arrows that go back up a layer, or across into another widget's folder. */
export function arrowsAgainstTheLayers(arrows) {
  return arrows.filter(([from, to]) => {
    const a = layerOf(from), b = layerOf(to);
    return b.rank > a.rank || (b.rank === a.rank && a.rank === 3 && a.group !== b.group);
  }).map(([from, to]) => `${from} -> ${to}`);
}

/** One circle of the graph as its path, or null when it has none. */
export function findCircle(arrows) {
  const next = new Map();
  for (const [from, to] of arrows) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map(); // 1: on the path, 2: done
  const pathNow = [];
  const visit = (node) => {
    state.set(node, 1);
    pathNow.push(node);
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 1) return [...pathNow.slice(pathNow.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    pathNow.pop();
    state.set(node, 2);
    return null;
  };
  for (const node of next.keys()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found) return found;
  }
  return null;
}

const folderOf = (file) => path.posix.dirname(file);
const { files, arrows, unresolved } = importGraph(srcDir);

test('the graph reads every file and every relative import names a file', () => {
  assert.ok(files.size > 100, `${files.size} files`);
  assert.ok(arrows.length > 300, `${arrows.length} arrows`);
  assert.deepEqual(unresolved, []);
  // The forms the page uses, each seen: a glob, a worker, a dynamic import.
  assert.ok(arrows.some(([from, to]) => from === 'widgets/registry.ts' && to === 'widgets/rope/entry.ts'), 'the glob');
  assert.ok(arrows.some(([, to]) => to.endsWith('-worker.ts')), 'a worker');
  assert.ok(arrows.some(([from, to]) => from === 'widgets/live-training/live-training.ts' && to === 'widgets/live-training/live-training-panel.ts'), 'a dynamic import');
});

test('no import circle among the files', () => {
  assert.equal(findCircle(arrows)?.join(' -> ') ?? null, null);
});

test('no import circle among the folders', () => {
  const between = arrows.map(([from, to]) => [folderOf(from), folderOf(to)]).filter(([a, b]) => a !== b);
  assert.equal(findCircle(between)?.join(' -> ') ?? null, null);
});

test('no import back up: lib, widgets/shared, a widget or the exercises, the registry, the pages', () => {
  assert.deepEqual(arrowsAgainstTheLayers(arrows), []);
});

test('the checks find what they look for', () => {
  // A door imported back by its panel, a folder circle, lib reaching up, one widget reaching into another.
  assert.deepEqual(findCircle([['a/door.ts', 'a/panel.ts'], ['a/panel.ts', 'a/door.ts']]), ['a/door.ts', 'a/panel.ts', 'a/door.ts']);
  assert.equal(findCircle([['a/x.ts', 'b/y.ts'], ['b/y.ts', 'c/z.ts']]), null);
  assert.deepEqual(arrowsAgainstTheLayers([
    ['lib/judge-core.ts', 'exercises/report.ts'],
    ['lib/core.ts', 'gpu/attention-gpu.ts'],
    ['lib/widget.ts', 'widgets/rope/entry.ts'],
    ['widgets/rope/rope.ts', 'widgets/explorer/explorer.ts'],
    ['widgets/shared/x.ts', 'widgets/rope/rope.ts'],
    ['widgets/rope/rope.ts', 'widgets/shared/x.ts'],
    ['pages/inside.ts', 'widgets/registry.ts'],
  ]), [
    'lib/judge-core.ts -> exercises/report.ts',
    'lib/core.ts -> gpu/attention-gpu.ts',
    'lib/widget.ts -> widgets/rope/entry.ts',
    'widgets/rope/rope.ts -> widgets/explorer/explorer.ts',
    'widgets/shared/x.ts -> widgets/rope/rope.ts',
  ]);
  assert.deepEqual(files.has('widgets/registry.ts') ? [] : ['widgets/registry.ts'], []);
  assert.ok([...files].every((f) => layerOf(f).rank >= 0), `files outside every layer: ${[...files].filter((f) => layerOf(f).rank < 0)}`);
});
