// "Views, then widen": a bound checkpoint as the core's own Model<float>, for the
// reference forward and every check (attn verify --checkpoint). Each tensor is
// widened to float32 (exactly) and each projection transposed from the stored
// [out, in] to the core's [in, out]. Channels keep the source's order: the config's
// rope_pairing already says which pairs q and k rotate, so nothing is permuted.
#pragma once

#include <string>

#include "../model/first_layer_attention.hpp"
#include "../model/weights.hpp"
#include "llama_views.hpp"

namespace anatomy {

Model<float> model_from_views(const LlamaViews& views);

// Which of layer 0's tensors first_layer_from_views reads: the four the probabilities
// need (embedding, attn_norm, wq, wk), or those and wv, wo for the whole sublayer.
enum class FirstLayerPart { probabilities, attention };

// The same widening for the tensors first_layer_probabilities or first_layer_attention
// read, found by name among `tensors`: a whole checkpoint's or the page's first-layer
// slices of one (tools/first-layer-slice.mjs). Others are ignored. Throws InputError,
// prefixed with `source`, for a missing tensor or one of another shape than `config`
// implies, in llama_views' words.
FirstLayerAttentionWeights first_layer_from_views(const ModelConfig& config, const TensorViews& tensors,
                                                  const std::string& source,
                                                  FirstLayerPart part = FirstLayerPart::probabilities);

}  // namespace anatomy
