// The flash kernel's own tiles: its door loads when it nears the viewport (lib/widget.ts);
// the figure once the GPU has passed its checks, or when the reader asks for the CPU's.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'flash-tiles': { code: () => import('../shared/gpu-gate').then((m) => m.gpuGate('figure', () => import('./flash-tiles-figure').then((f) => f.mountFlashTiles))) },
};
