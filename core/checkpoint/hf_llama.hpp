// The Hugging Face Llama checkpoint layout at the boundary of our model:
// config.json fields, the writer (the tensor names are llama_tensors.hpp's), and the
// safetensors loader built on the one reader (tensor_views.hpp, llama_views.hpp).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../model/weights.hpp"
#include "llama_tensors.hpp"
#include "safetensors.hpp"

namespace anatomy {

// config.json for LlamaForCausalLM.
nlohmann::json hf_config_json(const ModelConfig& config, DType dtype);
// Our config from config.json; throws InputError naming a missing or bad field.
// Hugging Face Llama always rotates half-split pairs (its rotate_half).
ModelConfig config_from_hf_json(const nlohmann::json& json);

// What config.json says beyond the shapes: the fields a probe reports and needs
// (special token ids, the stored precision). Absent fields stay empty.
struct HfCheckpointInfo {
    std::vector<std::string> architectures;    // e.g. ["LlamaForCausalLM"]
    std::string torch_dtype;                    // "float32", "bfloat16", ... ("" if absent)
    std::optional<std::int32_t> bos_token_id;
    std::vector<std::int32_t> eos_token_ids;    // eos_token_id may be one id or a list
    std::optional<std::int64_t> max_position_embeddings;
};
// Throws InputError naming a field of the wrong type.
HfCheckpointInfo hf_checkpoint_info(const nlohmann::json& json);

// Our weights as Hugging Face tensors, those of hf_tensor_specs (llama_tensors.hpp) in
// its order. Projections are transposed to [out, in].
// For an interleaved-RoPE model the q and k output channels of each head are
// permuted to the half-split order, so the checkpoint computes the same scores
// under Hugging Face's convention.
std::vector<NamedTensor> hf_tensors(const Model<float>& model);
// The same tensors one at a time (for writers that stream a large model to disk).
void for_each_hf_tensor(const Model<float>& model, const std::function<void(NamedTensor&&)>& visit);

// model.safetensors for `model`: hf_tensors stored in `dtype`, with the metadata every
// front end writes ({"format": "pt"}, which transformers looks for, and our producer
// name), so the native and wasm exports are the same bytes.
std::vector<std::uint8_t> hf_safetensors(const Model<float>& model, DType dtype);
// That metadata.
std::map<std::string, std::string> hf_safetensors_metadata();

// Loads weights from one or more safetensors files (shards): their views bound by
// llama_views (a missing, duplicated, misshapen or unexpected tensor is an InputError
// naming it and `source`; rotary_emb.inv_freq is ignored), then model_from_views.
Model<float> model_from_hf(const ModelConfig& config, const std::vector<const SafetensorsView*>& shards,
                           const std::string& source = "checkpoint");

// The order in which interleaved-pair channels are laid out half-split:
// new channel i takes old channel 2i, new channel i + dh/2 takes old channel 2i + 1.
std::vector<std::size_t> interleaved_to_half_split(std::size_t head_dim);

}  // namespace anatomy
