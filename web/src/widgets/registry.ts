// Every widget folder's entries (web/src/widgets/<name>/entry.ts), gathered for the pages:
// a page builds those of its figures (lib/widget.ts, mountWidgets).
import type { WidgetEntries } from '../lib/widget';

export const everyWidget: WidgetEntries = Object.assign({}, ...Object.values(
  import.meta.glob<WidgetEntries>('./*/entry.ts', { eager: true, import: 'widgets' })));
