// Loads the wasm preset's modules (attention_core, attention_judge, attention_trained, ...: .js/.wasm) into Node: used by
// tools/judge.mjs and by the tests under tests/wasm/ and tests/exercises/.
//
// Two quirks of Debian's Emscripten 3.1.6 output under Node 20:
//   - its loader prefers the global fetch(), which Node 20 has but which cannot
//     read a file path, so we read the .wasm ourselves and pass it as wasmBinary;
//   - the EXPORT_ES6 module still reads __dirname on Node, which ES modules lack.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Where the wasm preset puts its output unless ANATOMY_WASM_DIR says otherwise.
export const wasmDir = process.env.ANATOMY_WASM_DIR || path.join(repo, 'build', 'wasm', 'wasm');

// Loads one of the wasm preset's modules: 'attention_core' (chapter 1's), 'attention_notebook' (the notebook's,
// its StreamingLLM figure's eviction policies and sink scores among them), 'attention_judge' (the exercise judge),
// 'attention_trained' (the page's trained-model widget), 'attention_train' (training), 'attention_trace_viewer' (the
// trace viewer's trace, checks, checkpoint export and attn diff) or 'attention_bench' (the CPU benchmark,
// tools/bench-wasm.mjs).
export async function loadModule(name, dir = wasmDir) {
  const js = path.join(dir, `${name}.js`);
  const wasm = path.join(dir, `${name}.wasm`);
  for (const file of [js, wasm]) {
    if (!fs.existsSync(file)) {
      throw new Error(
        `${file} is missing: build the wasm preset first ` +
          '(export NODE_PATH=/usr/share/nodejs; cmake --preset wasm && cmake --build build/wasm), ' +
          `or point ANATOMY_WASM_DIR at the folder holding ${name}.js/.wasm`);
    }
  }
  globalThis.__dirname ??= dir;
  const { default: create } = await import(pathToFileURL(js).href);
  return create({ wasmBinary: fs.readFileSync(wasm) });
}

export function loadCore(dir = wasmDir) {
  return loadModule('attention_core', dir);
}

export function loadNotebook(dir = wasmDir) {
  return loadModule('attention_notebook', dir);
}

export function loadJudge(dir = wasmDir) {
  return loadModule('attention_judge', dir);
}

export function loadBench(dir = wasmDir) {
  return loadModule('attention_bench', dir);
}

export function loadTrained(dir = wasmDir) {
  return loadModule('attention_trained', dir);
}

export function loadTrain(dir = wasmDir) {
  return loadModule('attention_train', dir);
}

export function loadTraceViewer(dir = wasmDir) {
  return loadModule('attention_trace_viewer', dir);
}

export function loadFirstLayer(dir = wasmDir) {
  return loadModule('attention_first_layer', dir);
}

export function loadKernelChecks(dir = wasmDir) {
  return loadModule('attention_kernel_checks', dir);
}
