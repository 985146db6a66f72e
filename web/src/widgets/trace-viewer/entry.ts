// The trace viewer: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'trace-viewer': { code: () => import('./trace-viewer').then((m) => m.mountTraceViewer) },
};
