// Chapter 1: Inside attention, one tensor at a time. The first screen's figure (w0)
// brings its own small module; every other widget loads its code, and the chapters'
// wasm core, as it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { openFirstLayer } from '../lib/first-layer-core';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

// The first screen's module and weights start loading now, while the browser lays the
// page out; W0 is built once that layout shows it on screen. A failure is reported there.
openFirstLayer().catch(() => {});

mountWidgets({
  w0: { standalone: async () => mountFirstScreen, first: true },
  w1: { code: () => import('../widgets/attention-explorer').then((m) => m.mountAttentionExplorer) },
  w4: { code: () => import('../widgets/rope').then((m) => m.mountRope) },
  w7: { code: () => import('../widgets/source-reader').then((m) => m.mountSourceReader) },
  w8: { code: () => import('../widgets/trace-viewer').then((m) => m.mountTraceViewer) },
  w9: { code: () => import('../widgets/trained-model').then((m) => m.mountTrainedModel) },
  w10: { code: () => import('../widgets/live-training').then((m) => m.mountLiveTraining) },
  w11: { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountPreviousToken) },
  w12: { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountInduction) },
  w13: { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountSinks) },
  w14: { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountLossAndText) },
});
