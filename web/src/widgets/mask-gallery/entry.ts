// The mask gallery: its code loads when it nears the viewport (lib/widget.ts).
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'mask-gallery': { code: () => import('./mask-gallery').then((m) => m.mountMaskGallery) },
};
