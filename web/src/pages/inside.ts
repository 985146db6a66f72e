// Chapter 1: Inside attention, one tensor at a time. The first screen's figure (first-screen)
// brings its own small module; every other widget loads its code, and the
// chapter's wasm module (attention_core), as it nears the viewport (lib/widget.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountFirstScreen } from '../widgets/first-screen';

mountWidgets({
  'first-screen': { standalone: async () => mountFirstScreen, first: true },
  'explorer': { code: () => import('../widgets/attention-explorer').then((m) => m.mountAttentionExplorer) },
  'rope': { code: () => import('../widgets/rope').then((m) => m.mountRope) },
  'source-reader': { code: () => import('../widgets/source-reader').then((m) => m.mountSourceReader) },
  'trace-viewer': { code: () => import('../widgets/trace-viewer').then((m) => m.mountTraceViewer) },
  'trained-model': { code: () => import('../widgets/trained-model').then((m) => m.mountTrainedModel) },
  'live-training': { code: () => import('../widgets/live-training').then((m) => m.mountLiveTraining) },
  'previous-token-head': { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountPreviousToken) },
  'induction-head': { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountInduction) },
  'first-token-weight': { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountSinks) },
  'loss-and-continuation': { code: () => import('../widgets/shakespeare-heads').then((m) => m.mountLossAndText) },
}, () => import('../lib/chapter-core').then((m) => m.loadChapterCore()));
