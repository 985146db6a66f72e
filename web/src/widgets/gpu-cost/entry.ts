// What attention costs, measured on your GPU: its code loads when it nears the viewport
// (lib/widget.ts); the figure itself once the GPU has passed its checks.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'gpu-cost': { standalone: () => import('./gpu-cost').then((m) => m.mountGpuCost) },
};
