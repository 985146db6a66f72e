// The soft lookup: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'soft-lookup': { code: () => import('./soft-lookup').then((m) => m.mountSoftLookup) },
};
