// What attention costs, measured on your GPU: its door loads when it nears the viewport
// (lib/widget.ts); the figure once the GPU has passed its checks.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'gpu-cost': { standalone: () => import('../shared/gpu-gate').then((m) => m.gpuGate('figure', () => import('./gpu-cost-figure').then((f) => f.mountGpuCost))) },
};
