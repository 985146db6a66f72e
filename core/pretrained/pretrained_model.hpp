// A Hugging Face Llama checkpoint's weights used in place: every matrix is a
// WeightView into the checkpoint bytes (memory-mapped natively), in Hugging Face's
// [out, in] layout and stored precision. Only the norm scales (a few thousand
// floats) are copied, plus, for --dtype bfloat16 from a float32 or float16 file, one
// bfloat16 copy of each matrix (half the bytes of float32).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../checkpoint/llama_views.hpp"
#include "../checkpoint/safetensors.hpp"
#include "../model/model_config.hpp"
#include "weight_view.hpp"

namespace anatomy {

// The precision the matrices are held in; activations, accumulation and softmax are float32 in both.
//   float32:  every tensor read in place; BF16 and F16 rows are widened to float32 (exactly)
//             one row at a time inside the projection loop, so no float copy exists.
//   bfloat16: BF16 tensors read in place; F32 and F16 tensors rounded once (to nearest even)
//             into a bfloat16 copy, whose source bytes are then handed to `release`.
enum class WeightPrecision { float32, bfloat16 };

std::string to_string(WeightPrecision precision);  // "float32", "bfloat16"

struct PretrainedLayer {
    Vector<float> attn_norm;      // [D]          input_layernorm
    WeightView wq;                // [Hq*dh, D]   q_proj
    WeightView wk;                // [Hkv*dh, D]  k_proj
    WeightView wv;                // [Hkv*dh, D]  v_proj
    WeightView wo;                // [D, Hq*dh]   o_proj
    Vector<float> ffn_norm;       // [D]          post_attention_layernorm
    WeightView w_gate;            // [F, D]       gate_proj
    WeightView w_up;              // [F, D]       up_proj
    WeightView w_down;            // [D, F]       down_proj
    Vector<float> sinks;          // [Hq]         self_attn.sinks (config.attention_sinks), else empty
};

struct PretrainedModel {
    ModelConfig config;
    WeightPrecision precision = WeightPrecision::float32;
    WeightView embedding;                 // [V, D]  embed_tokens
    std::vector<PretrainedLayer> layers;
    Vector<float> final_norm;             // [D]     norm
    WeightView lm_head;                   // [V, D]  lm_head, or the embedding when tied

    std::string stored_dtypes;            // the file's dtypes of the matrices, e.g. "BF16" or "F32, BF16"
    std::size_t parameters = 0;           // every weight, norms included (lm_head once, and not when tied)
    std::size_t bytes_in_place = 0;       // matrix bytes read where they lie
    std::size_t bytes_converted = 0;      // matrix bytes of the owned bfloat16 copies
    ParallelFor parallel;                 // how projections split their output rows (empty: one thread)

    PretrainedModel() = default;
    PretrainedModel(PretrainedModel&&) = default;
    PretrainedModel& operator=(PretrainedModel&&) = default;
    // The views point into `converted`: a copy would point into the original.
    PretrainedModel(const PretrainedModel&) = delete;
    PretrainedModel& operator=(const PretrainedModel&) = delete;

    std::vector<std::vector<std::uint16_t>> converted;  // the owned bfloat16 copies (bfloat16 only)
};

// Called with a tensor's source bytes once they have been copied and are no longer needed.
using ReleaseBytes = std::function<void(const std::uint8_t* begin, std::size_t size)>;

// The model over a source's bound views (llama_views.hpp), whose bytes must outlive it.
PretrainedModel pretrained_from_views(const LlamaViews& views, WeightPrecision precision, const ReleaseBytes& release = {});

// The model over `shards` (the parsed safetensors files; their bytes must outlive
// the model): pretrained_from_views of their views as llama_views binds them (every
// tensor hf_tensor_specs lists in exactly one shard with exactly that shape, nothing
// else but what is_ignored_tensor accepts; otherwise InputError names the tensor and `source`).
PretrainedModel pretrained_from_hf(const ModelConfig& config, const std::vector<const SafetensorsView*>& shards,
                                   const std::string& source, WeightPrecision precision,
                                   const ReleaseBytes& release = {});

}  // namespace anatomy
