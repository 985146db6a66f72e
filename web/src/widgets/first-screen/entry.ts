// The chapters' first screen: in the page's entry chunk, built at once with its own
// small module (not the chapters' core), so that it is in the page's first frame.
import type { WidgetEntries } from '../../lib/widget';
import { mountFirstScreen } from './first-screen';

export const widgets: WidgetEntries = {
  'first-screen': { standalone: async () => mountFirstScreen, first: true },
};
