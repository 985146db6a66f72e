// The four figures of the model trained on Shakespeare, one module: it loads when the first of them nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'previous-token-head': { code: () => import('./shakespeare-heads').then((m) => m.mountPreviousTokenHead) },
  'induction-head': { code: () => import('./shakespeare-heads').then((m) => m.mountInductionHead) },
  'first-token-weight': { code: () => import('./shakespeare-heads').then((m) => m.mountFirstTokenWeight) },
  'loss-and-continuation': { code: () => import('./shakespeare-heads').then((m) => m.mountLossAndContinuation) },
};
