// Chapter 1: Inside attention, one tensor at a time.
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountAttentionExplorer } from '../widgets/attention-explorer';
import { mountLiveTraining } from '../widgets/live-training';
import { mountRope } from '../widgets/rope';
import { mountInduction, mountLossAndText, mountPreviousToken, mountSinks } from '../widgets/shakespeare-heads';
import { mountSourceReader } from '../widgets/source-reader';
import { mountTraceViewer } from '../widgets/trace-viewer';
import { mountTrainedModel } from '../widgets/trained-model';

void mountWidgets({
  w1: mountAttentionExplorer,
  w4: mountRope,
  w7: mountSourceReader,
  w8: mountTraceViewer,
  w9: mountTrainedModel,
  w10: mountLiveTraining,
  w11: mountPreviousToken,
  w12: mountInduction,
  w13: mountSinks,
  w14: mountLossAndText,
});
