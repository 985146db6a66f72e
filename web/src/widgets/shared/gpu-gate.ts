// The doors of the notebook's three GPU figures (gpu-check, flash-tiles, gpu-cost), in one
// small module: each figure's own code loads only when it has something to run on. "Run
// on your GPU" builds as soon as the browser grants a device, to show its checks as they
// come; the other two once that device passed them (gpu/gpu-session.ts). Without a
// device, or with one that failed, a door shows its figure's sentence for that case,
// written in the page (the elements marked data-when-gpu="none" or "failed"); a figure's
// button marked data-cpu there builds it with the core on the CPU instead (its
// widget's cpu=1 in the URL, e.g. flash-tiles.cpu=1, presses it).
import { gpuSession } from '../../gpu/gpu-session';
import type { UrlState } from '../../lib/url-state';

/** A figure's code, built on the GPU (onGpu) or on the CPU. */
export type GpuFigure<C> = (root: HTMLElement, context: C, onGpu: boolean) => void | Promise<void>;

export function gpuGate<C extends { state: UrlState }>(door: 'check' | 'figure', load: () => Promise<GpuFigure<C>>) {
  return (root: HTMLElement, context: C): void => {
    const host = root.closest<HTMLElement>('[data-widget]') ?? root;
    const status = document.createElement('p');
    status.className = 'status';
    status.textContent = door === 'check' ? 'Asking the browser for a GPU…' : 'Waiting for the GPU\'s checks (Run on your GPU, above)…';
    root.append(status);
    const session = gpuSession();
    const build = async (onGpu: boolean) => {
      const mount = await load();
      status.remove();
      await mount(root, context, onGpu);
    };
    const fail = (error: unknown) => {
      root.append(status);
      status.textContent = `The figure stopped: ${error instanceof Error ? error.message : String(error)}`;
      status.dataset.kind = 'error';
    };
    // Shows the page's sentences (and the CPU button) for `kind`.
    const without = (kind: string) => {
      host.dataset.gpu = kind;
      status.remove();
      for (const node of host.querySelectorAll<HTMLElement>('[data-when-gpu]'))
        node.hidden = !node.dataset.whenGpu!.split(' ').includes(kind);
      const cpu = host.querySelector<HTMLButtonElement>('button[data-cpu]');
      cpu?.addEventListener('click', () => {
        for (const node of host.querySelectorAll<HTMLElement>('[data-when-gpu]')) node.hidden = true;
        context.state.set({ cpu: 1 });
        build(false).catch(fail);
      });
      if (cpu && context.state.get('cpu') === '1') cpu.click();
    };
    if (door === 'check') {
      session.opened.then((opened) => ('unavailable' in opened ? without('none') : build(true))).catch(fail);
      return;
    }
    session.verdict.then((verdict) => (verdict.kind === 'passed' ? build(true) : without(verdict.kind))).catch(fail);
  };
}
