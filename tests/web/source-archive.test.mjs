// The source archive the site offers (web/tools/source-archive.mjs, written into web/dist
// by the page's build): what a reader downloads to run the commands the pages give.
//
//   files      it holds the repository's tracked files (`git ls-files`) and nothing else,
//              under attention-anatomy/, each with the working tree's bytes and mode;
//              none of ../shared's data
//   fallback   outside a git checkout the build lists the same files by the .gitignore
//              rules: that list, on this tree, is git's own (tracked and untracked files
//              that are not ignored)
//   unpacked   it unpacks with tar, holds the README's two commands and the lock file,
//              and `cmake --preset native` configures there
//   served     scripts/start.sh's server (vite preview) sends it as the file it is:
//              application/gzip, no Content-Encoding (which would have the browser unpack it)
//
// Needs the built page (scripts/build-web.sh) and `cd web && npm ci`. Run by ctest, or by
// hand: node --test tests/web/source-archive.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

const repo = path.resolve(import.meta.dirname, '..', '..');
const dist = path.resolve(process.env.ANATOMY_WEB_DIST || path.join(repo, 'web', 'dist'));
const { archiveFolder, archiveName, gitFiles, unignoredFiles } = await import(pathToFileURL(path.join(repo, 'web', 'tools', 'source-archive.mjs')).href);
const archive = path.join(dist, archiveName);

let scratch;
let members; // [{ path, mode, size }] under attention-anatomy/, from tar's own listing
before(() => {
  assert.ok(fs.existsSync(archive), `${archive} is missing: build the page first (scripts/build-web.sh)`);
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'source-archive-'));
  execFileSync('tar', ['-xzf', archive, '-C', scratch]);
  // GNU tar's verbose listing: "-rwxr-xr-x 0/0 1234 2024-01-01 00:00 attention-anatomy/scripts/start.sh".
  const listing = execFileSync('tar', ['-tvzf', archive, '--numeric-owner'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  members = listing.trim().split('\n').map((line) => {
    const [mode, , size, , , ...name] = line.split(/ +/);
    return { mode, size: Number(size), path: name.join(' ') };
  });
});
after(() => scratch && fs.rmSync(scratch, { recursive: true, force: true }));

/** The files the archive must hold: git's list where this is a checkout, else the unpacked tree's own. */
function expectedFiles() {
  return gitFiles(repo) ?? unignoredFiles(repo);
}

test('the archive holds exactly the tracked files, under one folder, with the working tree\'s bytes and modes', () => {
  const expected = expectedFiles().filter((file) => fs.existsSync(path.join(repo, file))).sort();
  assert.ok(expected.length > 100, `only ${expected.length} files expected`);
  const prefix = `${archiveFolder}/`;
  const outside = members.filter((m) => !m.path.startsWith(prefix));
  assert.deepEqual(outside.map((m) => m.path), [], `entries outside ${prefix}`);
  const held = members.map((m) => m.path.slice(prefix.length)).sort();
  assert.deepEqual(held.filter((file) => !expected.includes(file)), [], 'files in the archive that git does not track');
  assert.deepEqual(expected.filter((file) => !held.includes(file)), [], 'tracked files missing from the archive');
  assert.equal(held.length, expected.length, 'an entry packed twice');
  for (const m of members) {
    const file = m.path.slice(prefix.length);
    assert.ok(m.mode.startsWith('-'), `${file} is packed as ${m.mode}, not a plain file`);
    const mine = fs.statSync(path.join(repo, file));
    // Executable bits as the working tree has them (scripts/start.sh must run as unpacked).
    assert.equal((fs.statSync(path.join(scratch, m.path)).mode & 0o111) !== 0, (mine.mode & 0o111) !== 0, `${file}: executable bit`);
    assert.ok(fs.readFileSync(path.join(scratch, m.path)).equals(fs.readFileSync(path.join(repo, file))), `${file}: unpacked bytes differ from the working tree's (changed since the page was built? scripts/build-web.sh packs it again)`);
  }
});

test('the archive holds none of ../shared\'s models and corpora', () => {
  const shared = path.resolve(repo, '..', 'shared');
  const names = new Set();
  if (fs.existsSync(shared)) {
    const walk = (dir) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(path.join(dir, entry.name));
        else if (entry.isFile() && fs.statSync(path.join(dir, entry.name)).size > 4096) names.add(entry.name);
      }
    };
    for (const folder of ['models', 'corpora']) if (fs.existsSync(path.join(shared, folder))) walk(path.join(shared, folder));
  }
  // What the build reads from there, by name, whether or not ../shared is here.
  for (const name of ['stories260K.bin', 'tok512.bin', 'tinyshakespeare.txt']) names.add(name);
  const found = members.filter((m) => names.has(path.posix.basename(m.path)) || m.path.includes('..'));
  assert.deepEqual(found.map((m) => m.path), [], 'data from ../shared in the archive');
  assert.ok(!members.some((m) => /(^|\/)web\/dist\//.test(m.path) || /(^|\/)build\//.test(m.path)), 'build outputs in the archive');
});

test('outside a git checkout the .gitignore rules list the same files as git does', { skip: gitFiles(repo) === null && 'not a git checkout' }, () => {
  // git's own list of the files it would track: tracked, and untracked but not ignored by a
  // .gitignore (not by .git/info/exclude or a global file: an unpacked archive has neither).
  const git = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-per-directory=.gitignore'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\0').filter((file) => file && fs.existsSync(path.join(repo, file)));
  assert.deepEqual(unignoredFiles(repo).sort(), [...new Set(git)].sort());
});

test('the unpacked archive holds the README\'s two commands and the lock file, and `cmake --preset native` configures there', () => {
  const root = path.join(scratch, archiveFolder);
  for (const file of ['README.md', 'scripts/start.sh', 'scripts/test.sh', 'web/package-lock.json', 'CMakePresets.json']) {
    assert.ok(fs.existsSync(path.join(root, file)), `${file} is not in the archive`);
  }
  for (const script of ['scripts/start.sh', 'scripts/test.sh', 'scripts/build.sh', 'scripts/build-web.sh']) {
    fs.accessSync(path.join(root, script), fs.constants.X_OK);
  }
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  assert.match(readme, /^scripts\/start\.sh /m);
  assert.match(readme, /^scripts\/test\.sh /m);
  const output = execFileSync('cmake', ['--preset', 'native'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(output, /Build files have been written to: .*attention-anatomy\/build\/native/);
  assert.ok(fs.existsSync(path.join(root, 'build', 'native', 'build.ninja')), 'no build.ninja after configuring');
});

test('vite preview, the server scripts/start.sh runs, sends the archive as it is', async () => {
  const web = path.join(repo, 'web');
  const { preview } = await import(pathToFileURL(path.join(web, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href);
  const server = await preview({
    root: web, configFile: path.join(web, 'vite.config.ts'), logLevel: 'silent',
    build: { outDir: dist }, preview: { host: '127.0.0.1', port: 0, strictPort: false },
  });
  try {
    const response = await fetch(new URL(archiveName, server.resolvedUrls.local[0]));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-encoding'), null, 'sent with a Content-Encoding: the browser would save it unpacked');
    assert.equal(response.headers.get('content-type'), 'application/gzip');
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(fs.readFileSync(archive)), 'the bytes sent are not the built archive');
  } finally {
    await server.close();
  }
});
