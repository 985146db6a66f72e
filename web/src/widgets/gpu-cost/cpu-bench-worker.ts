// The cost figure's CPU measurement, off the page's thread: the core's CPU attention
// benchmark (core/bench/attention_bench.hpp, the wasm module attention_bench: each kernel
// checked against the fp64 reference on sampled rows, then timed, one thread) run on
// the options the page posts; the report comes back as the core wrote it.
//   page -> worker   {id, options}          (BenchOptions' keys)
//   worker -> page   {id, report} | {id, error}
/// <reference lib="webworker" />
import createBench from '@wasm/attention_bench.js';
import wasmUrl from '@wasm/attention_bench.wasm?url';
import { moduleLoader } from '../../lib/wasm-compile';

declare const self: DedicatedWorkerGlobalScope;

const loadBench = moduleLoader(createBench, wasmUrl, (raw) => raw as { benchCpu(options: string): string });

self.onmessage = async (event: MessageEvent<{ id: number; options: object }>) => {
  const { id, options } = event.data;
  try {
    const bench = await loadBench();
    const report = JSON.parse(bench.benchCpu(JSON.stringify(options))) as { error?: string };
    self.postMessage(report.error ? { id, error: report.error } : { id, report });
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
