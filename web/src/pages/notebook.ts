// Chapter 2: Attention, the notebook chapter. The first screen's figure (w0) brings its
// own small module; every other widget loads its code, and the chapters' wasm core, as
// it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { openFirstLayer } from '../lib/first-layer-core';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

// The first screen's module and weights start loading now, while the browser lays the
// page out; W0 is built once that layout shows it on screen. A failure is reported there.
openFirstLayer().catch(() => {});

mountWidgets({
  w0: { standalone: async () => mountFirstScreen, first: true },
  w2: { code: () => import('../widgets/soft-lookup').then((m) => m.mountSoftLookup) },
  w3: { code: () => import('../widgets/mask-gallery').then((m) => m.mountMaskGallery) },
  w5: { code: () => import('../widgets/kv-stepper').then((m) => m.mountKvStepper) },
  w6: { code: () => import('../widgets/cost').then((m) => m.mountCost) },
});
