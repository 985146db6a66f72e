// The attention explorer: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  explorer: { code: () => import('./explorer').then((m) => m.mountExplorer) },
};
