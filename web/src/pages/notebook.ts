// Chapter 2: Attention, the notebook chapter. The first screen's figure (w0) brings its
// own small module; every other widget loads its code, and the
// chapter's wasm module (attention_notebook), as it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

mountWidgets({
  w0: { standalone: async () => mountFirstScreen, first: true },
  w2: { code: () => import('../widgets/soft-lookup').then((m) => m.mountSoftLookup) },
  w3: { code: () => import('../widgets/mask-gallery').then((m) => m.mountMaskGallery) },
  w5: { code: () => import('../widgets/kv-stepper').then((m) => m.mountKvStepper) },
  w6: { code: () => import('../widgets/cost').then((m) => m.mountCost) },
}, () => import('../lib/notebook-core').then((m) => m.loadNotebookCore()));
