// Every head's first-token (sink) score for the shipped models beside Qwen3's published
// figures: a standalone widget (the stream module), built as it nears the viewport.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  'sink-scores': { standalone: () => import('./sink-scores').then((m) => m.mountSinkScores) },
};
