import { resolve } from 'node:path';
import { defineConfig, Plugin } from 'vite';
import katex from 'katex';
import { anatomySource } from './tools/anatomy-source';

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

// In a build, ask the browser to fetch the wasm core (and the maths fonts) while it
// is still parsing the page, instead of when the page's script or layout asks for them.
const commonMathFonts = /KaTeX_(Main-Regular|Math-Italic|AMS-Regular|Size1-Regular)-[^/]*\.woff2$/;
function preloadWasm(): Plugin {
  return {
    name: 'preload-wasm',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (html, context) => {
        const files = Object.keys(context.bundle ?? {});
        // The page's own module: the judge's on the exercises page, the chapters' core on a
        // chapter (the trained-model, training and diff modules load when their widget is used).
        const module = context.filename.endsWith('exercises.html') ? 'attention_judge' : 'attention_core';
        const wasm = files.find((file) => new RegExp(`${module}[^/]*\\.wasm$`).test(file));
        const links = wasm ? [`<link rel="preload" href="./${wasm}" as="fetch" type="application/wasm" crossorigin>`] : [];
        // The KaTeX fonts every chapter's typeset maths uses: fetched with the page, so
        // the text is laid out once with them rather than again when they arrive
        // (which cost a full layout of the page just as the first widget appeared).
        if (html.includes('class="katex"')) {
          for (const font of files.filter((file) => commonMathFonts.test(file))) {
            links.push(`<link rel="preload" href="./${font}" as="font" type="font/woff2" crossorigin>`);
          }
        }
        return html.replace('</head>', links.map((link) => `  ${link}\n`).join('') + '</head>');
      },
    },
  };
}

const pages = ['index', 'notebook', 'exercises'];
const repo = resolve(__dirname, '..');
// The wasm core as built by the wasm preset (or another build folder for experiments).
const wasmDir = process.env.ANATOMY_WASM_DIR ? resolve(process.env.ANATOMY_WASM_DIR) : resolve(repo, 'build/wasm/wasm');

export default defineConfig({
  base: './',
  plugins: [typesetMath(), anatomySource(repo), preloadWasm()],
  resolve: { alias: { '@wasm': wasmDir } },
  build: {
    target: 'es2022',
    rollupOptions: { input: Object.fromEntries(pages.map((p) => [p, resolve(__dirname, `${p}.html`)])) },
  },
  server: { host: '127.0.0.1', port: 8000, strictPort: true, fs: { allow: [repo] } },
  preview: { host: '127.0.0.1', port: 8000, strictPort: true },
});
