// Chapter 1: Inside attention, one tensor at a time. The first screen's figure (w0)
// brings its own small module; every other widget loads its code, and the
// chapter's wasm module (attention_core), as it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

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
}, () => import('../lib/chapter-core').then((m) => m.loadChapterCore()));
