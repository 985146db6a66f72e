// "Run on your GPU", once the browser has granted a device (shared/gpu-gate.ts says so
// where it has not): names the adapter and shows the WebGPU kernels' checks on it as
// attn verify prints them (kernel, case, check, max |error|, tolerance, PASS or FAIL),
// a row as each comes back. The figures below (flash-tiles, gpu-cost) wait for the same
// verdict (gpu/gpu-session.ts) and run on the device only if it passed.
// The host gets data-adapter, data-checks, data-failed, data-ms (from opening the device
// to the last check) and data-page-ms (from the page's start); the gate sets data-gpu.
import '../../styles/check-table.css';
import { el, setStatus } from '../../lib/dom';
import { describeAdapter } from '../../gpu/gpu-device';
import { checkTable, recordRow } from '../../gpu/check-rows';
import { gpuSession } from '../../gpu/gpu-session';

export function mountGpuCheck(root: HTMLElement): void {
  const host = root.closest<HTMLElement>('[data-widget]') ?? root;
  const adapterLine = el('p', { class: 'status', role: 'status', 'data-testid': 'gpu-check-adapter' });
  const summary = el('p', { class: 'finding', 'data-testid': 'gpu-check-summary' });
  root.append(adapterLine, summary);
  const session = gpuSession();

  void session.opened.then((opened) => {
    if ('unavailable' in opened) return;
    const { adapter } = opened.gpu;
    host.dataset.adapter = `${adapter.vendor} ${adapter.architecture}`;
    setStatus(adapterLine, `Running on ${describeAdapter(adapter)}. Its checks first:`);
    const body = el('tbody');
    const table = checkTable(['kernel', 'case'], body, 'gpu-check-table');
    root.append(el('div', { class: 'scroll-x gpu-check-scroll', tabindex: 0, role: 'region', 'aria-label': 'The WebGPU kernels\' checks on this GPU' }, table));
    summary.textContent = 'Checking…';
    session.watch((row) => {
      body.append(recordRow(row.record, [row.version, row.kernelCase.id]));
      summary.textContent = `Checking… ${body.rows.length} checks so far.`;
    });
  });

  session.verdict.then((verdict) => {
    if (verdict.kind === 'none') return;
    host.dataset.checks = String(verdict.rows.length);
    host.dataset.ms = verdict.ms.toFixed(0);
    host.dataset.pageMs = performance.now().toFixed(0);
    const seconds = `${(verdict.ms / 1000).toFixed(1)} s`;
    if (verdict.kind === 'passed') {
      host.dataset.failed = '0';
      summary.textContent = `All ${verdict.rows.length} checks passed in ${seconds}: the figures below run on this GPU.`;
    } else {
      host.dataset.failed = String(verdict.failed);
      summary.textContent = `${verdict.failed} of ${verdict.rows.length} checks FAILED in ${seconds}: this GPU computes some cases differently from the core, so the figures below show what the CPU computes instead.`;
      summary.classList.add('error');
    }
  }).catch((error: unknown) => {
    host.dataset.failed = 'error';
    setStatus(summary, `The checks stopped: ${error instanceof Error ? error.message : String(error)}`, 'error');
  });
}
