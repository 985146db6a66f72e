// How long one trace() (the trace viewer's module) takes in Node: `attn verify`'s default input (6 tokens,
// batch 2, seed 1). The first call runs V8's baseline wasm code; we report it,
// warm up five more calls (V8 tiers hot functions up to optimised code), then
// take the median of 20. Not a test; run by hand:
//   node tests/wasm/trace_timing.mjs
import { performance } from 'node:perf_hooks';

import { loadTraceViewer } from './load_core.mjs';

const core = await loadTraceViewer();
const options = JSON.stringify({ tokens: [1, 2, 3, 4, 5, 6], batch: 2, seed: 1 });
const first = performance.now();
core.trace(options);
const firstMs = performance.now() - first;
for (let i = 0; i < 5; ++i) core.trace(options);

const times = [];
for (let i = 0; i < 20; ++i) {
  const start = performance.now();
  const text = core.trace(options);
  times.push(performance.now() - start);
  if (text.startsWith('{"error"')) throw new Error(text);
}
times.sort((a, b) => a - b);
const median = (times[9] + times[10]) / 2;
console.log(`trace(): first call ${firstMs.toFixed(2)} ms; then median ${median.toFixed(2)} ms over 20 calls ` +
  `(min ${times[0].toFixed(2)}, max ${times[19].toFixed(2)})`);
