// RoPE in three parts: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  rope: { code: () => import('./rope').then((m) => m.mountRope) },
};
