// Vite plugin: the documents the chapters cite, as pages of the site. The page works
// offline, so what its text refers to ships with it:
//
//   README.md          -> docs/readme.html   (the two commands, what the project holds)
//   docs/NAME.md       -> docs/NAME.html     (cli, building, gpu, architecture, perf, diff, trace-schema, sinks)
//   docs/images/*.png  -> docs/images/*.png  (the README's screenshots)
//   tools/anatomy_dump.py -> tools/anatomy_dump.py  (a download: `attn diff`'s dump helper)
//
// Markdown is rendered once at build time with marked (no script on these pages). A
// link or a `code` mention of a file the site ships becomes a link to it; a link to a
// file of the repository that the site does not ship (the C++ sources) keeps its text
// and loses the link, with the path in a tooltip, so no link on a page leads nowhere.
// The dev server serves the same files.
import fs from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'vite';
import { Marked, type Tokens } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';
import { archiveName } from './source-archive.mjs';
import { archiveLink, relativeUrl, siteHeader, siteName, type ArchiveInfo } from './site-header';

/** The site's path (from the site's root) of each repository file it ships. */
function shippedFiles(repo: string): Map<string, string> {
  const files = new Map<string, string>([['README.md', 'docs/readme.html'], ['tools/anatomy_dump.py', 'tools/anatomy_dump.py']]);
  for (const name of fs.readdirSync(path.join(repo, 'docs')).sort()) {
    if (name.endsWith('.md')) files.set(`docs/${name}`, `docs/${name.slice(0, -3)}.html`);
  }
  for (const name of fs.readdirSync(path.join(repo, 'docs', 'images')).sort()) files.set(`docs/images/${name}`, `docs/images/${name}`);
  return files;
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** One Markdown file as the body of its page, its links rewritten for the site. */
function renderMarkdown(repo: string, source: string, page: string, shipped: Map<string, string>, archive: ArchiveInfo): { title: string; body: string } {
  // A repository-relative link of the Markdown file -> the site's URL, or null where the site does not ship it.
  const resolveLink = (href: string): string | null => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) return href;
    const [file, hash = ''] = href.split('#', 2);
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(source), file));
    const site = shipped.get(target);
    return site ? relativeUrl(page, site) + (hash ? `#${hash}` : '') : null;
  };
  const download = (site: string) => (site.endsWith('.html') || site.endsWith('.png') ? '' : ' download');
  const marked = new Marked(gfmHeadingId());
  marked.use({
    renderer: {
      link(token: Tokens.Link) {
        const text = this.parser.parseInline(token.tokens);
        const url = resolveLink(token.href);
        if (url === null) return `<span class="repo-file" title="${escapeHtml(`${token.href}, in the repository`)}">${text}</span>`;
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
        return `<a href="${escapeHtml(url)}"${title}${download(url)}>${text}</a>`;
      },
      image(token: Tokens.Image) {
        const url = resolveLink(token.href);
        if (url === null) throw new Error(`docs-pages: ${source} shows the image ${token.href}, which the site does not ship`);
        return `<img src="${escapeHtml(url)}" alt="${escapeHtml(token.text)}" loading="lazy">`;
      },
      // `docs/diff.md` or `tools/anatomy_dump.py` written as code: a link to what the site ships;
      // the source archive's name, a link to it with its size.
      codespan(token: Tokens.Codespan) {
        const code = `<code>${escapeHtml(token.text)}</code>`;
        if (token.text === archiveName) return archiveLink(page, archive, code);
        const site = shipped.get(token.text);
        return site ? `<a href="${escapeHtml(relativeUrl(page, site))}"${download(site)}>${code}</a>` : code;
      },
    },
  });
  const markdown = fs.readFileSync(path.join(repo, source), 'utf8');
  // Code blocks and tables scroll sideways on a narrow screen: focusable, so that a keyboard can scroll them
  // (each table a region with a name of its own: "Table 3").
  let tables = 0;
  const body = (marked.parse(markdown, { async: false }) as string)
    .replace(/<pre>/g, '<pre tabindex="0">')
    .replace(/<table>/g, () => `<div class="table-scroll" tabindex="0" role="region" aria-label="Table ${(tables += 1)}"><table>`)
    .replace(/<\/table>/g, '</table></div>');
  const title = /^# (.+)$/m.exec(markdown)?.[1].replace(/`/g, '') ?? source;
  return { title, body };
}

// The documents' list on every docs page, in sentence case as the site's headings are
// (README and Llama are names). A document missing here stops the build.
const pageNames: Record<string, string> = {
  'docs/readme.html': 'README',
  'docs/cli.html': 'The command line',
  'docs/building.html': 'Building and testing',
  'docs/gpu.html': 'GPU builds',
  'docs/diff.html': 'Checking your Llama',
  'docs/trace-schema.html': 'Trace files',
  'docs/architecture.html': 'Architecture',
  'docs/perf.html': 'Performance',
  'docs/sinks.html': 'Attention sinks',
};

function pageName(doc: string): string {
  const name = pageNames[doc];
  if (name === undefined) throw new Error(`docs-pages: ${doc} has no name in the documents' list (pageNames in web/tools/docs-pages.ts)`);
  return name;
}

/** A whole page: the site's header, the documents' list, the rendered Markdown. */
function pageHtml(page: string, source: string, title: string, body: string, docs: string[], css: string, archive: ArchiveInfo): string {
  const documentLinks = docs
    .map((doc) => `<a href="${relativeUrl(page, doc)}"${doc === page ? ' aria-current="page"' : ''}>${escapeHtml(pageName(doc))}</a>`)
    .join('\n    ');
  // The document's heading, or its name in the list where the heading is the site's own name (the README).
  const pageTitle = title === siteName ? pageName(page) : title;
  const root = (file: string) => relativeUrl(page, file);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="${root('favicon.svg')}" type="image/svg+xml">
  <title>${escapeHtml(pageTitle)} · ${siteName}</title>
  <style>
${css}
  </style>
</head>
<body>
<a class="skip-link" href="#content">Skip to content</a>
${siteHeader(page, archive)}
<nav class="docs-list" aria-label="Documents">
    ${documentLinks}
</nav>
<main id="content" tabindex="-1" class="doc" data-source="${escapeHtml(source)}">
${body}
<p class="doc-source">This page is <code>${escapeHtml(source)}</code> of the repository, as the site ships it.</p>
</main>
</body>
</html>
`;
}

/** Every file the plugin adds to the site: its path from the site's root and its bytes. */
export function docsSite(repo: string, css: string, archive: ArchiveInfo): Map<string, string | Buffer> {
  const shipped = shippedFiles(repo);
  const pages = [...shipped].filter(([, site]) => site.endsWith('.html'));
  const docs = pages.map(([, site]) => site);
  const out = new Map<string, string | Buffer>();
  for (const [source, site] of shipped) {
    if (site.endsWith('.html')) {
      const { title, body } = renderMarkdown(repo, source, site, shipped, archive);
      out.set(site, pageHtml(site, source, title, body, docs, css, archive));
    } else {
      out.set(site, fs.readFileSync(path.join(repo, source)));
    }
  }
  return out;
}

const contentType = (file: string) =>
  file.endsWith('.html') ? 'text/html; charset=utf-8' : file.endsWith('.png') ? 'image/png' : 'text/x-python; charset=utf-8';

/** `cssFiles`: the stylesheets inlined into every page, in order; `archive`: the source archive the header offers. */
export function docsPages(repo: string, cssFiles: string[], archive: () => Promise<ArchiveInfo>): Plugin {
  const site = async () => docsSite(repo, cssFiles.map((file) => fs.readFileSync(file, 'utf8')).join('\n'), await archive());
  return {
    name: 'docs-pages',
    async generateBundle() {
      for (const [fileName, source] of await site()) this.emitFile({ type: 'asset', fileName, source });
    },
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        const file = decodeURIComponent((request.url ?? '').split(/[?#]/)[0]).replace(/^\//, '');
        if (!file.startsWith('docs/') && !file.startsWith('tools/')) return next();
        site().then((files) => {
          const bytes = files.get(file);
          if (bytes === undefined) return next();
          response.setHeader('Content-Type', contentType(file));
          response.end(bytes);
        }, next);
      });
    },
  };
}
