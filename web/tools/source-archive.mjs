// The project's source as one archive beside the page, so that a reader of the site can
// run the commands it gives: `attention-anatomy-source.tar.gz`, the repository's files
// under one folder, attention-anatomy/, as the working tree holds them. The build writes
// it into web/dist (vite.config.ts), the site's header links it with its size, and the
// dev server serves it too.
//
// Which files: in a git checkout, those `git ls-files` lists (the tracked files). Outside
// one (the archive unpacked and built), the same list by the rule git would apply to it:
// every file under the folder that its .gitignore files do not ignore (npm's `ignore`,
// git's own pattern rules), so that the archive unpacked and built gives the same archive.
// tests/web/source-archive.test.mjs checks both against `git ls-files`.
//
//   node web/tools/source-archive.mjs [REPO]   lists the files and how they were found
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ignore from 'ignore';
import { create } from 'tar';

export const archiveName = 'attention-anatomy-source.tar.gz';
export const archiveFolder = 'attention-anatomy';

/** The repository's files by `git ls-files`, or null where `repo` is not the top of a git checkout. */
export function gitFiles(repo) {
  let top;
  try {
    top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null; // no git, or not a checkout
  }
  // An archive unpacked inside some other checkout is not that checkout's top.
  if (fs.realpathSync(top) !== fs.realpathSync(repo)) return null;
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20 });
  return listed.split('\0').filter(Boolean);
}

/** Every regular file under `repo` that no .gitignore there ignores (nor .git itself), as git would list them. */
export function unignoredFiles(repo) {
  const files = [];
  // rules: [folder (relative, '' for the top), its .gitignore's matcher], outermost first.
  const walk = (folder, rules) => {
    const here = path.join(repo, folder);
    const gitignore = path.join(here, '.gitignore');
    const ours = fs.existsSync(gitignore) ? [...rules, [folder, ignore().add(fs.readFileSync(gitignore, 'utf8'))]] : rules;
    const ignored = (relative, isFolder) =>
      ours.some(([base, matcher]) => matcher.ignores(path.posix.relative(base, relative) + (isFolder ? '/' : '')));
    for (const entry of fs.readdirSync(here, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const relative = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.name === '.git' || ignored(relative, entry.isDirectory())) continue;
      if (entry.isDirectory()) walk(relative, ours);
      else if (entry.isFile()) files.push(relative);
    }
  };
  walk('', []);
  return files;
}

/** {files (sorted, as git sorts them), method}: the files the archive holds. */
export function sourceFiles(repo) {
  const listed = gitFiles(repo);
  if (listed) {
    // A tracked file deleted from the working tree has no content to pack.
    const present = listed.filter((file) => fs.existsSync(path.join(repo, file)));
    return { files: present.sort(), method: 'git ls-files', missing: listed.filter((file) => !present.includes(file)) };
  }
  return { files: unignoredFiles(repo).sort(), method: 'the .gitignore rules: no git checkout here', missing: [] };
}

/** The archive's bytes: every file of sourceFiles under attention-anatomy/, gzipped. */
export async function packSource(repo) {
  const { files, method, missing } = sourceFiles(repo);
  const chunks = [];
  // portable: no user, group or device numbers of this machine; modes (scripts' x bits) and times kept.
  const stream = create({ cwd: repo, gzip: { level: 9 }, portable: true, prefix: archiveFolder }, files);
  for await (const chunk of stream) chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), files, method, missing };
}

/** A size as the site says it: "1.9 MB", "740 kB" (powers of 1000, as browsers show downloads). */
export function formatSize(bytes) {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} bytes`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const repo = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..'));
  const { files, method } = sourceFiles(repo);
  process.stdout.write(`${files.join('\n')}\n`);
  process.stderr.write(`${files.length} files, by ${method}\n`);
}
