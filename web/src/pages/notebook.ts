// Chapter 2: Attention, the notebook chapter. The first screen's figure brings its own
// small module; every other widget (each registered by its folder's entry.ts) loads its
// code, and the chapter's wasm module (attention_notebook), as it nears the viewport
// (lib/widget.ts, widgets/registry.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { everyWidget } from '../widgets/registry';

mountWidgets(() => import('../lib/notebook-core').then((m) => m.loadNotebookCore()), everyWidget);
