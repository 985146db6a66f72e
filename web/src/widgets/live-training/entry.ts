// Live training: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'live-training': { code: () => import('./live-training').then((m) => m.mountLiveTraining) },
};
