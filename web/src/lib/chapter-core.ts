// Chapter 1's wasm module, attention_core: the exports of core.ts its widgets call (the
// explorer's forward with its captures, RoPE, presets) and the CheckpointSession of
// checkpoint-core.ts (the Shakespeare model); not the notebook's lessons or KV session
// (a CoreError names the module), nor the trace viewer's tools (trace-viewer-core.ts).
// Loaded once, when the first widget that needs it nears the viewport.
// '@wasm' is the wasm preset's output folder (see vite.config.ts).
import createAnatomyCore from '@wasm/attention_core.js';
import wasmUrl from '@wasm/attention_core.wasm?url';
import { bindCore, type Core } from './core';
import { moduleLoader } from './wasm-compile';

/** The module itself, for checkpoint-core.ts's CheckpointSession. */
export const loadChapterModule = moduleLoader(createAnatomyCore, wasmUrl, (raw) => raw);

let core: Core | null = null;

/** The typed functions of core.ts over it, bound once. */
export const loadChapterCore = async (): Promise<Core> => (core ??= bindCore(await loadChapterModule(), 'attention_core'));
