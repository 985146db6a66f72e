import { resolve } from 'node:path';
import { defineConfig, Plugin } from 'vite';
import katex from 'katex';
import { readFileSync } from 'node:fs';
import { anatomySource } from './tools/anatomy-source';
import { firstLayerSlice } from './tools/first-layer-slice.mjs';

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

// In a build, ask the browser to fetch what the page's first figure needs while it is
// still parsing the page, instead of when the page's script asks for it: on a chapter,
// the first screen's module and the first-layer slice with the model's config and
// vocabulary (the chapters' core loads with the first widget that nears the viewport);
// on the exercises page, the judge's module. Not the maths fonts: the first screen has
// no maths, and a font that arrived while the page was first laid out made the browser
// lay out all of it again (100 ms on the reference machine) before the figure.
const firstScreenFiles = ['models/shakespeare/config.json', 'models/shakespeare/tokenizer.json', 'models/shakespeare/first-layer.safetensors'];
function preloadFirstFigure(): Plugin {
  return {
    name: 'preload-first-figure',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (html, context) => {
        const files = Object.keys(context.bundle ?? {});
        const exercises = context.filename.endsWith('exercises.html');
        const module = exercises ? 'attention_judge' : 'attention_first_layer';
        const wasm = files.find((file) => new RegExp(`${module}[^/]*\\.wasm$`).test(file));
        const fetched = [...(wasm ? [wasm] : []), ...(exercises ? [] : firstScreenFiles)];
        const links = fetched.map((file) =>
          `<link rel="preload" href="./${file}" as="fetch"${file.endsWith('.wasm') ? ' type="application/wasm"' : ''} crossorigin>`);
        return html.replace('</head>', links.map((link) => `  ${link}\n`).join('') + '</head>');
      },
    },
  };
}

// The first screen's weights: the first-layer slice of the Shakespeare model
// (tools/first-layer-slice.mjs), cut from public/models/shakespeare/model.safetensors
// into the build (and served by the dev server), never into the repository.
const slicePath = 'models/shakespeare/first-layer.safetensors';
function firstLayerSliceFile(): Plugin {
  const slice = () => firstLayerSlice(readFileSync(resolve(__dirname, 'public/models/shakespeare/model.safetensors')));
  return {
    name: 'first-layer-slice',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: slicePath, source: slice() });
    },
    configureServer(server) {
      server.middlewares.use(`/${slicePath}`, (_request, response) => {
        response.setHeader('Content-Type', 'application/octet-stream');
        response.end(slice());
      });
    },
  };
}

const pages = ['index', 'notebook', 'exercises'];
const repo = resolve(__dirname, '..');
// The wasm core as built by the wasm preset (or another build folder for experiments).
const wasmDir = process.env.ANATOMY_WASM_DIR ? resolve(process.env.ANATOMY_WASM_DIR) : resolve(repo, 'build/wasm/wasm');

export default defineConfig({
  base: './',
  plugins: [typesetMath(), anatomySource(repo), preloadFirstFigure(), firstLayerSliceFile()],
  resolve: { alias: { '@wasm': wasmDir } },
  build: {
    target: 'es2022',
    rollupOptions: { input: Object.fromEntries(pages.map((p) => [p, resolve(__dirname, `${p}.html`)])) },
  },
  server: { host: '127.0.0.1', port: 8000, strictPort: true, fs: { allow: [repo] } },
  preview: { host: '127.0.0.1', port: 8000, strictPort: true },
});
