// A forward pass's captured intermediates as JSON, and its tokens' labels, for the
// modules whose widgets draw them (attention_core's forward, attention_train's
// CheckpointSession and TrainingSession).
#pragma once

#include <string>
#include <vector>

#include "json_args.hpp"
#include "model/forward.hpp"
#include "tokenizer/llama_tokenizer.hpp"

namespace anatomy::wasm {

// Everything one layer computed, named as in LayerCapture (probs -> probabilities,
// as in the trace), or only the fields in `wanted` when it is not empty.
json layer_to_json(const LayerCapture<float>& layer, const std::vector<std::string>& wanted);

// options.capture: false, true (every field) or a list of field names; anything else
// is an error. Returns the fields (empty: all) and sets `capture`.
std::vector<std::string> capture_fields(const json& options, bool& capture);

// The axis labels of a character model's tokens: "BOS" for its BOS, else the
// character as the page shows it (the tokenizer's display form).
//   ids: [T]  ->  [T] strings
json token_labels(const LlamaTokenizer& tokenizer, const std::vector<std::int32_t>& ids);

}  // namespace anatomy::wasm
