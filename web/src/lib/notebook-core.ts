// The notebook chapter's wasm module, attention_notebook (wasm/CMakeLists.txt): the
// exports its widgets call (masks, soft lookup, cost, presets and cache sizes, the KV
// stepper's session) and not the explorer's forward, the trace, the checks or RoPE,
// so the chapter loads 93 kB of wasm instead of attention_core's 136. Calling
// one of those gets a CoreError naming the module.
import createAnatomyNotebook from '@wasm/attention_notebook.js';
import wasmUrl from '@wasm/attention_notebook.wasm?url';
import { bindCore } from './core';
import { moduleLoader } from './wasm-compile';

export const loadNotebookCore = moduleLoader(createAnatomyNotebook, wasmUrl, (raw) => bindCore(raw, 'attention_notebook'));
