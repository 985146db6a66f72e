// The flash kernel's own tiles: its code loads when it nears the viewport (lib/widget.ts);
// the figure itself loads once the GPU has passed its checks, or when the reader asks
// for the CPU's version.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'flash-tiles': { code: () => import('./flash-tiles').then((m) => m.mountFlashTiles) },
};
