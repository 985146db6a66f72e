// Chapter 1: Inside attention, one tensor at a time.
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountAttentionExplorer } from '../widgets/attention-explorer';
import { mountRope } from '../widgets/rope';
import { mountSourceReader } from '../widgets/source-reader';
import { mountTraceViewer } from '../widgets/trace-viewer';
import { mountTrainedModel } from '../widgets/trained-model';

void mountWidgets({
  w1: mountAttentionExplorer,
  w4: mountRope,
  w7: mountSourceReader,
  w8: mountTraceViewer,
  w9: mountTrainedModel,
});
