// "Views, then widen": a bound checkpoint as the core's own Model<float>, for the
// reference forward and every check (attn verify --checkpoint). Each tensor is
// widened to float32 (exactly) and each projection transposed from the stored
// [out, in] to the core's [in, out]. Channels keep the source's order: the config's
// rope_pairing already says which pairs q and k rotate, so nothing is permuted.
#pragma once

#include "../model/weights.hpp"
#include "llama_views.hpp"

namespace anatomy {

Model<float> model_from_views(const LlamaViews& views);

}  // namespace anatomy
