// The site's header, written once for every page: the chapters (web/*.html, where the
// siteHeader plugin puts it in place of `<!-- site-header -->`) and the docs pages
// (docs-pages.ts). It names the site, links the chapters and the docs, and offers the
// project's source as one archive with its size (source-archive.mjs), so that the
// commands the pages give can be run. `<!-- source-archive-link -->` in a chapter's prose
// becomes the same link.
import path from 'node:path';
import type { Plugin } from 'vite';
import { archiveName, formatSize } from './source-archive.mjs';

export const siteName = 'Attention Anatomy';

/** What the header says of the archive: its size in bytes. */
export interface ArchiveInfo {
  bytes: number;
}

/** The header's links, by their site path (from the site's root). */
const chapters: [string, string][] = [
  ['index.html', '1 · Inside attention'],
  ['notebook.html', '2 · The notebook chapter'],
  ['exercises.html', 'Exercises'],
  ['gpu.html', 'Your GPU'],
  ['docs/readme.html', 'Docs'],
];

/** The relative URL from the site page `from` to the site path `to` (both from the site's root). */
export function relativeUrl(from: string, to: string): string {
  const relative = path.posix.relative(path.posix.dirname(from), to);
  return relative === '' ? path.posix.basename(to) : relative;
}

const withDot = (url: string) => (url.startsWith('.') ? url : `./${url}`);

/** The archive as a link, its size beside it: "attention-anatomy-source.tar.gz (1.9 MB)". */
export function archiveLink(page: string, archive: ArchiveInfo, text = archiveName): string {
  return `<a href="${withDot(relativeUrl(page, archiveName))}" download type="application/gzip" data-source-archive>${text}</a>` +
    ` <span class="archive-size">(${formatSize(archive.bytes)})</span>`;
}

/** The header of the page at site path `page` ('index.html', 'docs/diff.html'). */
export function siteHeader(page: string, archive: ArchiveInfo): string {
  // Every docs page is under Docs.
  const current = page.startsWith('docs/') ? 'docs/readme.html' : page;
  const links = chapters
    .map(([target, label]) => `<a href="${withDot(relativeUrl(page, target))}"${target === current ? ' aria-current="page"' : ''}>${label}</a>`)
    .join('\n    ');
  return `<header class="site-header">
  <a class="brand" href="${withDot(relativeUrl(page, 'index.html'))}">${siteName}</a>
  <nav aria-label="Chapters">
    ${links}
  </nav>
  <p class="source-download">${archiveLink(page, archive, 'Source code')}</p>
</header>`;
}

/** Puts the header, and the archive's links, into the chapters' HTML. */
export function siteHeaderPlugin(archive: () => Promise<ArchiveInfo>): Plugin {
  return {
    name: 'site-header',
    transformIndexHtml: {
      order: 'pre',
      handler: async (html, context) => {
        const page = path.posix.basename(context.filename);
        if (!html.includes('<!-- site-header -->')) throw new Error(`site-header: ${page} has no <!-- site-header --> line`);
        const info = await archive();
        return html
          .replace('<!-- site-header -->', siteHeader(page, info))
          .replace(/<!-- source-archive-link -->/g, archiveLink(page, info));
      },
    },
  };
}
