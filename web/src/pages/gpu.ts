// The GPU page: asks the browser for a WebGPU device, names it, and runs the WebGPU
// kernels' checks on it (gpu/kernel-checks.ts), each check a row of the table as the
// core returns it, then attn verify's checks on the tiny model with its attention on the
// device. Without a device the page says so in one sentence.
// From the console (or a test): window.attentionAnatomyGpu.check(options) runs the kernels'
// checks again, with kernel-checks.ts's options; .suite(options) attn verify's checks with
// the attention on the device; .problem(version, shape) says why a shape would not run on
// this adapter (null when it would); .run(version, shape, inputs) runs a kernel (the
// benchmark web/bench/webgpu-attention.mjs times it so); .ranges(spec) is a mask's rows
// as the kernels take them, from the core.
import '../styles/main.css';
import './gpu.css';
import '../styles/check-table.css';
import { setStatus } from '../lib/dom';
import { loadKernelChecks } from '../lib/kernel-checks-core';
import { describeAdapter, openGpu } from '../gpu/gpu-device';
import { type AttentionInputs, type AttentionShape, chooseTiles, type KernelVersion, type RunOptions, runAttention, shapeProblem } from '../gpu/attention-gpu';
import { type KernelCheckOptions, type KernelCheckRow, runKernelChecks, runSuiteOnDevice } from '../gpu/kernel-checks';
import { recordRow } from '../gpu/check-rows';
import type { CheckRecord, MaskSpec } from '../lib/core-types';

const adapterLine = document.querySelector<HTMLElement>('#gpu-adapter')!;
const summary = document.querySelector<HTMLElement>('#gpu-summary')!;
const body = document.querySelector<HTMLTableSectionElement>('#gpu-checks tbody')!;
const suiteSummary = document.querySelector<HTMLElement>('#gpu-suite-summary')!;
const suiteBody = document.querySelector<HTMLTableSectionElement>('#gpu-suite tbody')!;

const rowOf = ({ version, kernelCase, record }: KernelCheckRow) => recordRow(record, [version, kernelCase.id]);
const suiteRow = (model: string, record: CheckRecord) => recordRow(record, [model, record.id]);

async function main(): Promise<void> {
  const started = performance.now();
  const [opened, checks] = await Promise.all([openGpu(), loadKernelChecks()]);
  if ('unavailable' in opened) {
    setStatus(adapterLine, `${opened.unavailable} The kernels need a browser with WebGPU and a GPU it grants (recent Chrome or Edge; Safari and Firefox behind a setting).`);
    adapterLine.dataset.adapter = 'none';
    return;
  }
  const { gpu } = opened;
  adapterLine.dataset.adapter = `${gpu.adapter.vendor} ${gpu.adapter.architecture}`;
  const tiles = (D: number) => {
    const t = chooseTiles(gpu.limits, D);
    return t ? `${t.rows} query rows by ${t.keys} keys at head size ${D}` : `none fit at head size ${D}`;
  };
  setStatus(adapterLine, `Running on ${describeAdapter(gpu.adapter)}. Flash tiles chosen for its limits: ${tiles(64)}, ${tiles(16)}.`);
  const check = async (options: KernelCheckOptions = {}) => {
    body.replaceChildren();
    summary.textContent = 'Checking…';
    const rows = await runKernelChecks(gpu, checks, { ...options, onRow: (row) => { body.append(rowOf(row)); options.onRow?.(row); } });
    const failed = rows.filter((r) => !r.record.passed).length;
    summary.textContent = failed === 0
      ? `All ${rows.length} checks passed, ${((performance.now() - started) / 1000).toFixed(1)} s after the page opened.`
      : `${failed} of ${rows.length} checks FAILED: this adapter does not compute these kernels as the core does.`;
    summary.dataset.failed = String(failed);
    return rows;
  };
  const suite = async (options: Parameters<typeof runSuiteOnDevice>[2] = {}) => {
    suiteBody.replaceChildren();
    suiteSummary.textContent = 'Checking…';
    const results = [];
    for (const sinks of [false, true]) {
      const result = await runSuiteOnDevice(gpu, checks, { ...options, sinks });
      for (const record of result.checks) suiteBody.append(suiteRow(sinks ? 'tiny, sinks' : 'tiny', record));
      results.push({ sinks, ...result });
    }
    const all = results.flatMap((r) => r.checks);
    const failed = all.filter((r) => !r.passed).length;
    suiteSummary.dataset.failed = String(failed);
    suiteSummary.textContent = (failed === 0 ? `All ${all.length} checks passed` : `${failed} of ${all.length} checks FAILED`) +
      `, in ${results.map((r) => r.rounds).join(' and ')} rounds, on ${results.reduce((n, r) => n + r.attentions, 0)} attentions computed on the GPU.`;
    return results;
  };
  const problem = (version: KernelVersion, shape: AttentionShape) => shapeProblem(gpu, version, shape);
  const run = (version: KernelVersion, shape: AttentionShape, inputs: AttentionInputs, options?: RunOptions) =>
    runAttention(gpu, version, shape, inputs, options);
  const ranges = (spec: MaskSpec) => checks.maskRanges(spec);
  (window as unknown as { attentionAnatomyGpu: unknown }).attentionAnatomyGpu = { gpu, check, suite, problem, run, ranges };
  await check();
  await suite();
}

main().catch((error: unknown) => {
  setStatus(adapterLine, `The checks stopped: ${error instanceof Error ? error.message : String(error)}`, 'error');
});
