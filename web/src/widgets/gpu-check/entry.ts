// Run on your GPU: its door loads when it nears the viewport (lib/widget.ts); the checks'
// table, the kernels and the core's checks only where the browser grants a device.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'gpu-check': { standalone: () => import('../shared/gpu-gate').then((m) => m.gpuGate('check', () => import('./gpu-check').then((f) => f.mountGpuCheck))) },
};
