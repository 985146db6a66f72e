// live-training: train the tiny model in the page: a run from random weights in a Web Worker
// running the wasm core, with its loss and two of its heads redrawn as it trains.
// This file is only the door: the panel's code, the worker, its wasm module and the
// training text are fetched when the reader opens the trainer (or points at the
// button), so the chapter loads nothing more for this widget than these few lines.
import './live-training.css';
import '../shared/trained.css'; // the score table's pattern-table rows
import { el, setStatus } from '../../lib/dom';
import type { WidgetContext } from '../../lib/widget';

export function mountLiveTraining(root: HTMLElement, context: WidgetContext): void {
  const open = el('button', { type: 'button', 'data-testid': 'live-training-open' }, 'Open the trainer');
  const status = el('p', { class: 'status', 'data-testid': 'live-training-status' });
  root.replaceChildren(
    el(
      'div',
      { class: 'live-door' },
      el('p', { class: 'view-caption' }, 'The trainer, its wasm module and the training text load when you open it; training starts when you press Start.'),
      el('div', { class: 'controls' }, open),
      status,
    ),
  );

  let panelLoading: Promise<typeof import('./live-training-panel')> | null = null;
  const loadPanel = () => {
    panelLoading ??= import('./live-training-panel').then((panel) => {
      panel.preload();
      return panel;
    });
    panelLoading.catch(() => (panelLoading = null)); // a failed fetch may be retried
    return panelLoading;
  };
  open.addEventListener('pointerenter', () => void loadPanel().catch(() => {}), { once: true });
  open.addEventListener('focus', () => void loadPanel().catch(() => {}), { once: true });
  open.addEventListener('click', async () => {
    open.disabled = true;
    setStatus(status, 'Loading the trainer…');
    try {
      const panel = await loadPanel();
      await panel.startLiveTraining(root, context);
      context.state.set({ open: 1 });
    } catch (error) {
      setStatus(status, `The trainer could not be opened: ${error instanceof Error ? error.message : String(error)}`, 'error');
      open.disabled = false;
    }
  });
  // A link to this widget's view opens the trainer (it does not start training).
  if (context.state.get('open') === '1') open.click();
}
