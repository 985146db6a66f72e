// StreamingLLM's experiment on a real model: a standalone widget (its own module,
// attention_stream, in a worker), built as it nears the viewport.
import type { WidgetEntries } from '../../lib/widget';

export const widgets: WidgetEntries = {
  streaming: { standalone: () => import('./streaming').then((m) => m.mountStreaming) },
};
