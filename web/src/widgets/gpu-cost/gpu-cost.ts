// What attention costs, measured, where the figure is built: it waits for the GPU's
// verdict (gpu/gpu-session.ts) and loads the measuring figure (gpu-cost-figure.ts) only
// for a device that passed its checks. Times from a GPU the page has not checked, or
// from none, would mean nothing: without one the figure says so and the formula
// figure above stands.
import { setStatus, el } from '../../lib/dom';
import { gpuSession } from '../../gpu/gpu-session';
import type { UrlState } from '../../lib/url-state';

export function mountGpuCost(root: HTMLElement, context: { state: UrlState }): void {
  const host = root.closest<HTMLElement>('[data-widget]') ?? root;
  const status = el('p', { class: 'status', 'data-testid': 'gpu-cost-status' }, 'Waiting for the GPU\'s checks (Run on your GPU, above)…');
  root.append(status);
  gpuSession().verdict.then(async (verdict) => {
    host.dataset.gpu = verdict.kind;
    if (verdict.kind !== 'passed') {
      setStatus(status, verdict.kind === 'none'
        ? 'No GPU here, so nothing to time: the formulas above are what this figure would measure.'
        : 'This GPU failed its checks (above), so its times are not shown: a kernel that computes something else may well be faster.');
      return;
    }
    const { GpuCostFigure } = await import('./gpu-cost-figure');
    status.remove();
    new GpuCostFigure(root, context.state, verdict.gpu, verdict.checks);
  }).catch((error: unknown) => setStatus(status, `The figure stopped: ${error instanceof Error ? error.message : String(error)}`, 'error'));
}
