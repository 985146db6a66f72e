// Where the site serves what the chapters and widgets cite: the repository's README
// and docs/ as pages, and the dump helper as a download (web/tools/docs-pages.ts
// writes them beside the chapters). Every page of the site sits at its root, so
// these relative URLs hold on each.
import { sourceArchive } from 'virtual:source-archive';
import { el } from './dom';

export const cited = {
  readme: './docs/readme.html',
  commands: './docs/cli.html#commands',
  verify: './docs/cli.html#attn-verify',
  probe: './docs/cli.html#attn-probe',
  diff: './docs/diff.html',
  diffSaving: './docs/diff.html#saving-your-tensors',
  traceSchema: './docs/trace-schema.html',
  anatomyDump: './tools/anatomy_dump.py',
  sourceArchive: sourceArchive.href,
} as const;

/** The project's source archive as a link, its size beside it (the header's "Source code" is the same file). */
export function sourceArchiveLink(): (HTMLAnchorElement | string)[] {
  return [el('a', { href: sourceArchive.href, download: sourceArchive.name, type: 'application/gzip' }, el('code', {}, sourceArchive.name)), ` (${sourceArchive.size})`];
}

/** A `<code>` mention linked to what it names; `download` for a file the reader saves. */
export function citedCode(text: string, href: string, download = false): HTMLAnchorElement {
  return el('a', { href, download: download ? href.split('/').pop() : undefined }, el('code', {}, text));
}
