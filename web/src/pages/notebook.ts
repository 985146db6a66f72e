// Chapter 2: Attention, the notebook chapter.
import '../styles/main.css';
import { mountWidgets } from '../lib/widget';
import { mountSoftLookup } from '../widgets/soft-lookup';
import { mountKvStepper } from '../widgets/kv-stepper';
import { mountMaskGallery } from '../widgets/mask-gallery';
import { mountCost } from '../widgets/cost';

void mountWidgets({
  w2: mountSoftLookup,
  w3: mountMaskGallery,
  w5: mountKvStepper,
  w6: mountCost,
});
