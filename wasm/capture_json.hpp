// A forward pass's captured intermediates as JSON, for the modules whose widgets
// draw them (attention_core's forward, attention_train's CheckpointSession).
#pragma once

#include <string>
#include <vector>

#include "json_args.hpp"
#include "model/forward.hpp"

namespace anatomy::wasm {

// Everything one layer computed, named as in LayerCapture (probs -> probabilities,
// as in the trace), or only the fields in `wanted` when it is not empty.
json layer_to_json(const LayerCapture<float>& layer, const std::vector<std::string>& wanted);

// options.capture: false, true (every field) or a list of field names; anything else
// is an error. Returns the fields (empty: all) and sets `capture`.
std::vector<std::string> capture_fields(const json& options, bool& capture);

}  // namespace anatomy::wasm
