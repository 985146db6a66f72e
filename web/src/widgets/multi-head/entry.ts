// Multi-head attention on the Shakespeare model: a standalone widget (it brings the
// first screen's small module, not the chapter's core), built as it nears the viewport.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'multi-head': { standalone: () => import('./multi-head').then((m) => m.mountMultiHead) },
};
