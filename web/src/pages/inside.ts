// Chapter 1: Inside attention, one tensor at a time. The first screen's figure brings
// its own small module; every other widget (each registered by its folder's entry.ts)
// loads its code, and the chapter's wasm module (attention_core), as it nears the
// viewport (lib/widget.ts, widgets/registry.ts).
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { everyWidget } from '../widgets/registry';

mountWidgets(() => import('../lib/chapter-core').then((m) => m.loadChapterCore()), everyWidget);
