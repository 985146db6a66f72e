// The flash kernel's tiles, where the figure is built: it waits for the GPU's verdict
// (gpu/gpu-session.ts). A device that passed its checks runs the figure
// (flash-tiles-figure.ts) on the GPU; without one, or with one that failed, the figure
// offers the core's own version on the CPU, loaded when the reader asks for it.
import { el, setStatus } from '../../lib/dom';
import { gpuSession } from '../../gpu/gpu-session';
import type { WidgetContext } from '../../lib/widget';

export function mountFlashTiles(root: HTMLElement, context: WidgetContext): void {
  const host = root.closest<HTMLElement>('[data-widget]') ?? root;
  const status = el('p', { class: 'status', 'data-testid': 'flash-tiles-status' }, 'Waiting for the GPU\'s checks (Run on your GPU, above)…');
  root.append(status);
  const open = async (onGpu: boolean) => {
    const verdict = await gpuSession().verdict;
    const [{ FlashTilesFigure }, checks] = await Promise.all([
      import('./flash-tiles-figure'),
      verdict.kind === 'none' ? import('../../lib/kernel-checks-core').then((m) => m.loadKernelChecks()) : Promise.resolve(verdict.checks),
    ]);
    status.remove();
    new FlashTilesFigure(root, context, { gpu: onGpu && verdict.kind === 'passed' ? verdict.gpu : null, checks });
  };
  const fail = (error: unknown) => setStatus(status, `The figure stopped: ${error instanceof Error ? error.message : String(error)}`, 'error');
  gpuSession().verdict.then((verdict) => {
    host.dataset.gpu = verdict.kind;
    if (verdict.kind === 'passed') return open(true);
    const why = verdict.kind === 'none' ? 'No GPU here' : 'This GPU failed its checks';
    setStatus(status, `${why}: the figure can show the same tiles and steps from the core on the CPU, its tile rule and its online softmax in double precision.`);
    const button = el('button', { type: 'button', 'data-testid': 'flash-tiles-cpu' }, 'Compute on the CPU');
    button.addEventListener('click', () => {
      button.disabled = true;
      context.state.set({ cpu: 1 });
      open(false).catch(fail);
    });
    root.append(button);
    if (context.state.get('cpu') === '1') button.click();
    return undefined;
  }).catch(fail);
}
