// The notebook chapter's wasm module, attention_notebook (wasm/CMakeLists.txt): the
// exports its widgets call (masks, soft lookup, cost, presets and cache sizes, the KV
// stepper's session; and the stream session, which stream-core.ts wraps) and not the
// explorer's forward, the trace, the checks or RoPE. Calling one of those gets a
// CoreError naming the module. The page's thread instantiates it once, for both.
import createAnatomyNotebook from '@wasm/attention_notebook.js';
import wasmUrl from '@wasm/attention_notebook.wasm?url';
import { bindCore, type Core } from './core';
import { moduleLoader } from './wasm-compile';

/** The module's .wasm, for a worker that compiles (or is given) it itself. */
export const notebookWasmUrl = wasmUrl;

/** The module as Emscripten made it, instantiated once per thread. */
export const loadNotebookModule = moduleLoader(createAnatomyNotebook, wasmUrl, (raw) => raw);

let bound: Promise<Core> | null = null;
export const loadNotebookCore = (): Promise<Core> => {
  bound ??= loadNotebookModule().then((raw) => bindCore(raw, 'attention_notebook'));
  bound.catch(() => (bound = null)); // a failed fetch may be retried
  return bound;
};
