import { resolve } from 'node:path';
import { defineConfig, Plugin } from 'vite';
import katex from 'katex';
import fs, { readFileSync } from 'node:fs';
import { anatomySource } from './tools/anatomy-source';
import { colorRamps } from './tools/color-ramps.mjs';
import { firstLayerSlice, firstLayerTensors, firstLayerValueTensors } from './tools/first-layer-slice.mjs';
import { docsPages } from './tools/docs-pages';
import { archiveName, formatSize, packSource } from './tools/source-archive.mjs';
import { siteHeaderPlugin } from './tools/site-header';
import { exercisesDir, pageText, readExercises } from '../exercises/read.mjs';

// Maths is typeset once at build time: \( ... \) inline and \[ ... \] display in
// the HTML become KaTeX's HTML + MathML, so the page ships KaTeX's CSS and fonts
// but none of its JavaScript.
function typesetMath(): Plugin {
  const render = (tex: string, displayMode: boolean) =>
    katex.renderToString(tex.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'), {
      displayMode,
      throwOnError: true,
      output: 'htmlAndMathml',
    });
  return {
    name: 'typeset-math',
    transformIndexHtml: {
      order: 'pre',
      handler: (html) =>
        html
          // Display equations and code blocks scroll sideways on narrow screens, so a
          // keyboard user must be able to focus them (tabindex) to scroll them.
          .replace(/\\\[([\s\S]+?)\\\]/g, (_, tex: string) =>
            render(tex, true).replace('<span class="katex-display">', '<span class="katex-display" tabindex="0">'))
          .replace(/\\\(([\s\S]+?)\\\)/g, (_, tex: string) => render(tex, false))
          .replace(/<pre>/g, '<pre tabindex="0">'),
    },
  };
}

// In a build, start what the page's first figure needs while the browser is still
// parsing the page, instead of when the page's script asks for it (which runs only once
// the whole HTML is parsed and usually laid out once). On a chapter, a small inline
// script at the top of the head starts compiling the first screen's module (streamed as
// it downloads) and fetching the first-layer slice with the model's config and
// vocabulary; lib/early-start.ts hands them to the page's code. On the exercises page,
// a preload of the judge's module. Not the maths fonts: the first screen has no maths,
// and a font that arrived while the page was first laid out made the browser lay out
// all of it again (100 ms on the reference machine) before the figure.
const firstScreenFiles = ['models/shakespeare/config.json', 'models/shakespeare/tokenizer.json', 'models/shakespeare/first-layer.safetensors'];

function earlyStartScript(wasm: string, files: string[]): string {
  const list = (paths: string[]) => JSON.stringify(paths.map((path) => `./${path}`));
  return [
    '<script>',
    '// The first figure\'s module compiling and its files downloading as the page parses (lib/early-start.ts takes them).',
    '(() => {',
    '  const absolute = (path) => new URL(path, document.baseURI).href;',
    '  const handled = (promise) => (promise.catch(() => {}), promise); // a failure is reported where it is taken',
    `  const compiled = 'compileStreaming' in WebAssembly ? ${list([wasm])} : [];`,
    '  self.anatomyEarly = {',
    '    compiled: Object.fromEntries(compiled.map((path) => [absolute(path), handled(WebAssembly.compileStreaming(fetch(path)))])),',
    `    fetched: Object.fromEntries(${list(files)}.map((path) => [absolute(path), handled(fetch(path))])),`,
    '  };',
    '})();',
    '</script>',
  ].map((line) => `  ${line}\n`).join('');
}

// The page's own script, a module, would run only once the whole HTML is parsed, and
// Chromium lays out and paints what it has parsed so far at least once before that (on
// chapter 1, 150 ms or more of style and layout on the reference machine). A one-line
// script right after the first screen's figure imports it as soon as the parser is
// there, so first-screen is built (lib/widget.ts) while the rest of the article is still being
// parsed and is drawn in one of those early frames. The module script in the head
// stays: the same module, evaluated once, and the page still works if this one fails.
function startEntryAfterFirstFigure(html: string, page: string): string {
  const entry = html.match(/<script type="module" crossorigin src="([^"]+)"><\/script>/)?.[1];
  const figure = html.match(/<figure[^>]*data-widget="first-screen"[\s\S]*?<\/figure>\n/);
  if (!entry || !figure) throw new Error(`start-first-figure-early: ${page} has no ${entry ? 'first-screen figure' : 'module script'}`);
  const at = figure.index! + figure[0].length;
  // A failure is the head's module script's to report (it imports the same file).
  return `${html.slice(0, at)}<script>import(${JSON.stringify(entry)}).catch(() => {});</script>\n${html.slice(at)}`;
}

function startFirstFigureEarly(): Plugin {
  return {
    name: 'start-first-figure-early',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (html, context) => {
        const files = Object.keys(context.bundle ?? {});
        // The exercises page and the GPU page preload their one module; the chapters start their first figure's.
        const preloaded = context.filename.endsWith('exercises.html') ? 'attention_judge'
          : context.filename.endsWith('gpu.html') ? 'attention_kernel_checks' : null;
        const module = preloaded ?? 'attention_first_layer';
        const wasm = files.find((file) => new RegExp(`${module}[^/]*\\.wasm$`).test(file));
        if (!wasm) throw new Error(`start-first-figure-early: no ${module} wasm in the bundle of ${context.filename}`);
        if (preloaded)
          return html.replace('</head>', `  <link rel="preload" href="./${wasm}" as="fetch" type="application/wasm" crossorigin>\n</head>`);
        // Before the module script and the stylesheet, so that it runs as soon as it is parsed.
        const started = html.replace(/^ *<script type="module"/m, (tag) => earlyStartScript(wasm, firstScreenFiles) + tag);
        return startEntryAfterFirstFigure(started, context.filename);
      },
    },
  };
}

// The first screen's weights: the first-layer slice of the Shakespeare model
// (tools/first-layer-slice.mjs), cut from public/models/shakespeare/model.safetensors
// into the build (and served by the dev server), never into the repository; and the
// notebook's multi-head figure's second slice, layer 0's v_proj and o_proj.
const sliceFiles = {
  'models/shakespeare/first-layer.safetensors': firstLayerTensors,
  'models/shakespeare/first-layer-values.safetensors': firstLayerValueTensors,
};
function firstLayerSliceFiles(): Plugin {
  const slice = (names: string[]) => firstLayerSlice(readFileSync(resolve(__dirname, 'public/models/shakespeare/model.safetensors')), 'model.safetensors', names);
  return {
    name: 'first-layer-slice',
    generateBundle() {
      for (const [fileName, names] of Object.entries(sliceFiles)) this.emitFile({ type: 'asset', fileName, source: slice(names) });
    },
    configureServer(server) {
      for (const [fileName, names] of Object.entries(sliceFiles)) {
        server.middlewares.use(`/${fileName}`, (_request, response) => {
          response.setHeader('Content-Type', 'application/octet-stream');
          response.end(slice(names));
        });
      }
    },
  };
}

// The project's source as one archive beside the pages (tools/source-archive.mjs), packed
// once per build or dev server; `info` gives the header its size, and the module
// `virtual:source-archive` gives it to the page's code (lib/cited.ts).
function sourceArchive(repo: string): { plugin: Plugin; info: () => Promise<{ bytes: number }> } {
  let packed: ReturnType<typeof packSource> | null = null;
  const pack = () => (packed ??= packSource(repo).then((archive) => {
    console.log(`source-archive: ${archiveName}, ${archive.files.length} files (by ${archive.method}), ${formatSize(archive.bytes.length)}`);
    if (archive.missing.length) console.log(`source-archive: left out, deleted from the working tree: ${archive.missing.join(', ')}`);
    return archive;
  }));
  const plugin: Plugin = {
    name: 'source-archive',
    resolveId: (id) => (id === 'virtual:source-archive' ? '\0virtual:source-archive' : null),
    async load(id) {
      if (id !== '\0virtual:source-archive') return null;
      const { bytes } = await pack();
      return `export const sourceArchive = ${JSON.stringify({ href: `./${archiveName}`, name: archiveName, size: formatSize(bytes.length) })};`;
    },
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: archiveName, source: (await pack()).bytes });
    },
    configureServer(server) {
      server.middlewares.use(`/${archiveName}`, (_request, response, next) => {
        pack().then(({ bytes }) => {
          response.setHeader('Content-Type', 'application/gzip');
          response.end(bytes);
        }, next);
      });
    },
    // vite preview (scripts/start.sh) serves any .gz file as "Content-Encoding: gzip", which
    // asks the browser to unpack it on the way: the archive goes out as the file it is.
    configurePreviewServer(server) {
      const built = resolve(server.config.root, server.config.build.outDir, archiveName);
      server.middlewares.use(`/${archiveName}`, (_request, response, next) => {
        fs.promises.readFile(built).then((bytes) => {
          response.setHeader('Content-Type', 'application/gzip');
          response.setHeader('Content-Length', bytes.length);
          response.end(bytes);
        }, () => next());
      });
    },
  };
  return { plugin, info: async () => ({ bytes: (await pack()).bytes.length }) };
}

// The exercises page's texts, read from the exercise folders (exercises/read.mjs) into
// the module `virtual:exercises` (exercises/page.ts); a change in a folder reloads it.
function exerciseTexts(): Plugin {
  return {
    name: 'exercise-texts',
    resolveId: (id) => (id === 'virtual:exercises' ? '\0virtual:exercises' : null),
    load(id) {
      if (id !== '\0virtual:exercises') return null;
      return `export const exerciseTexts = ${JSON.stringify(readExercises().map(pageText))};`;
    },
    configureServer(server) {
      server.watcher.add(exercisesDir);
      server.watcher.on('change', (file) => {
        const module = file.startsWith(exercisesDir) && server.moduleGraph.getModuleById('\0virtual:exercises');
        if (module) server.reloadModule(module);
      });
    },
  };
}

const pages = ['index', 'notebook', 'exercises', 'gpu'];
const repo = resolve(__dirname, '..');
// The wasm core as built by the wasm preset (or another build folder for experiments).
const wasmDir = process.env.ANATOMY_WASM_DIR ? resolve(process.env.ANATOMY_WASM_DIR) : resolve(repo, 'build/wasm/wasm');

const archive = sourceArchive(repo);

// The StreamingLLM widget's workers import the page's own lib/stream-core.ts chunk by its
// URL (widgets/streaming/stream-worker.ts): an entry of its own (below), so that its
// exports keep their names, and it and every chunk it imports must hold only code that
// runs in a worker: the notebook module's glue in one chunk, the wasm loading it shares
// with the chapters' widgets in another, never a widget's DOM code that Rollup would
// otherwise group with them.
// The wasm files' URLs (…wasm?url, a string each) go in a chunk of their own, so that
// naming one does not import its module's glue.
const workerSafe: [string, RegExp][] = [
  ['notebook-core', /\/(src\/lib\/notebook-core\.ts|attention_notebook\.js)$/],
  ['wasm-runtime', /\/src\/lib\/(wasm-compile|early-start|wasm-result|core|safetensors)\.(ts|mjs)$/],
  ['wasm-urls', /\.wasm\?url$/],
];
// The doors of the notebook's GPU figures, the page's GPU session and the adapter's
// question in one chunk: all that a page without a GPU fetches of them (the GPU page
// fetches it too, for the adapter's question).
const gpuDoor: RegExp = /\/src\/(widgets\/shared\/gpu-gate|gpu\/gpu-session|gpu\/gpu-adapter)\.ts$/;
// The shared charts in one chunk: every figure that draws one fetches them together
// (line-chart's own code, log-log axes and the loss's bins are too small to be worth a
// request each).
// lib/dom.ts and lib/words.ts, which every page uses, stay a chunk of their own (else they
// would join the charts' chunk and every page would fetch the charts at once).
const charts: RegExp = /\/src\/widgets\/shared\/(line-chart|log-log-chart|loss-bins)\.ts$/;
const pageHelpers: RegExp = /\/src\/lib\/(dom|words)\.ts$/;
function workerSafeChunks(id: string): string | undefined {
  if (gpuDoor.test(id)) return 'gpu-door';
  if (charts.test(id)) return 'line-chart';
  if (pageHelpers.test(id)) return 'dom';
  if (id.includes('vite/preload-helper')) return 'preload-helper';  // its own chunk, as without manual chunks
  return workerSafe.find(([, pattern]) => pattern.test(id))?.[0];
}

// Vite preloads what a dynamic import needs with <link> elements, which a worker has
// none of: stream-core's import of the trained-model module (for a llama2.c file, in the
// StreamingLLM widget's workers) preloads nothing.
function preloadDependencies(_file: string, deps: string[], { hostId }: { hostId: string }): string[] {
  return /stream-core/.test(hostId) ? [] : deps;
}

export default defineConfig({
  base: './',
  plugins: [
    siteHeaderPlugin(archive.info), typesetMath(), anatomySource(repo), colorRamps(), startFirstFigureEarly(), firstLayerSliceFiles(),
    archive.plugin, exerciseTexts(), docsPages(repo, ['base.css', 'docs.css'].map((file) => resolve(__dirname, 'src/styles', file)), archive.info),
  ],
  resolve: { alias: { '@wasm': wasmDir } },
  build: {
    target: 'es2022',
    modulePreload: { resolveDependencies: preloadDependencies },
    rollupOptions: {
      input: {
        ...Object.fromEntries(pages.map((p) => [p, resolve(__dirname, `${p}.html`)])),
        // An entry of its own, its exports kept by name: the StreamingLLM widget's workers import it by URL.
        'stream-core': resolve(__dirname, 'src/lib/stream-core.ts'),
      },
      preserveEntrySignatures: 'exports-only',
      // The source reader's files (core-source-attention-*.js) apart from the widgets' code (attention-view-*.js).
      output: {
        chunkFileNames: (chunk) => (chunk.facadeModuleId?.startsWith('\0virtual:anatomy-source/') ? 'assets/core-source-[name]-[hash].js' : 'assets/[name]-[hash].js'),
        manualChunks: workerSafeChunks,  // and the GPU figures' door (gpuDoor)
      },
    },
  },
  server: { host: '127.0.0.1', port: 8000, strictPort: true, fs: { allow: [repo] } },
  preview: { host: '127.0.0.1', port: 8000, strictPort: true },
});
