// The KV-cache stepper: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'kv-stepper': { code: () => import('./kv-stepper').then((m) => m.mountKvStepper) },
};
