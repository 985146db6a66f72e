// What attention costs: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  cost: { code: () => import('./cost').then((m) => m.mountCost) },
};
