// Chapter 2: Attention, the notebook chapter. The first screen's figure (first-screen) brings its
// own small module; every other widget loads its code, and the
// chapter's wasm module (attention_notebook), as it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

mountWidgets({
  'first-screen': { standalone: async () => mountFirstScreen, first: true },
  'soft-lookup': { code: () => import('../widgets/soft-lookup').then((m) => m.mountSoftLookup) },
  'mask-gallery': { code: () => import('../widgets/mask-gallery').then((m) => m.mountMaskGallery) },
  'kv-stepper': { code: () => import('../widgets/kv-stepper').then((m) => m.mountKvStepper) },
  'cost': { code: () => import('../widgets/cost').then((m) => m.mountCost) },
}, () => import('../lib/notebook-core').then((m) => m.loadNotebookCore()));
