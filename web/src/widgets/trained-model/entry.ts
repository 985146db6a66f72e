// The trained model: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'trained-model': { code: () => import('./trained-model').then((m) => m.mountTrainedModel) },
};
