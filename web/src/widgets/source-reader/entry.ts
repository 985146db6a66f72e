// The source reader: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'source-reader': { code: () => import('./source-reader').then((m) => m.mountSourceReader) },
};
