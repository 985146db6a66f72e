// Run on your GPU: its code loads when it nears the viewport (lib/widget.ts); the
// kernels and the core's checks load only where the browser grants a device.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'gpu-check': { standalone: () => import('./gpu-check').then((m) => m.mountGpuCheck) },
};
