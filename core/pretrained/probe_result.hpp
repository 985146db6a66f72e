// What the probe (probe.hpp) found, as typed fields, with the facts its caller
// adds; probe_result_to_json writes it as the trace (docs/trace-schema.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../build_info.hpp"
#include "../model/cache_payload.hpp"
#include "../lessons/head_patterns.hpp"
#include "../non_finite.hpp"
#include "../tensor.hpp"
#include "../verify/checks.hpp"
#include "pretrained_model.hpp"

namespace anatomy {

// One candidate next token: its id, its probability (softmax of the logits row, in
// double) and its logit.
struct TokenChoice {
    std::int32_t id = 0;
    double probability = 0;
    float logit = 0;
};

// One tensor's name and shape, e.g. {"q_proj", [Hq*dh, D]} or {"scores", [1, Hq, T, T]}.
using NamedShapes = std::vector<std::pair<std::string, std::vector<std::size_t>>>;

// The checkpoint's weights as the probe found them (probe.dtype, probe.precision,
// probe.shapes): matrices as stored, [out, in]; layer 0's stand for every layer's.
struct ProbeWeights {
    WeightPrecision held = WeightPrecision::float32;
    std::string stored_dtypes;                // e.g. "BF16" or "F32, BF16"
    std::size_t parameters = 0, bytes_in_place = 0, bytes_converted = 0;
    std::vector<std::size_t> embed_tokens;    // [V, D]
    std::vector<std::size_t> lm_head;         // [V, D]; the trace says "tied" instead when config.tie_embeddings
    std::vector<std::size_t> norm;            // [D]
    NamedShapes layer;                        // input_layernorm [D], q_proj [Hq*dh, D], ... down_proj [D, F]
};

// 2. The prompt prefilled one token at a time through the cache, against the full pass.
struct ProbeCachedVsFull {
    double max_abs_diff = 0;                    // max |cached - full| over the logits [T, V]
    double max_abs_logit = 0;                   // max |full|: the scale of that difference
    std::vector<std::int32_t> argmax_full;      // [T] the most likely next token of each row
    std::vector<std::int32_t> argmax_cached;    // [T]
    std::vector<bool> argmax_agrees;            // [T]
    std::size_t disagreements = 0;              // positions where argmax_full != argmax_cached
};

// The KV cache after the passes: the prompt and the continuation fed back.
struct ProbeCache {
    DType dtype = DType::f32;
    std::int64_t tokens = 0;       // positions held
    std::size_t total_bytes = 0;   // keys and values of every layer, as the backend stores them
    CachePayload payload;          // per token (model/cache_payload.hpp)
};

// 3. Attention sinks: sink[l][h] = mean over queries t in [queries_from, T) of probs[0, h, t, 0].
struct ProbeSinks {
    std::size_t queries_from = 0;             // T / 2
    std::vector<std::vector<double>> heads;   // [L][Hq]
    std::vector<double> layer_mean;           // [L] the mean over heads
    double uniform_baseline = 0;              // what position 0 would get if every query spread its attention evenly
    // With learned attention sinks (config.attention_sinks): the mean share the same
    // queries give the sink itself, 1 - the row's sum, per layer and head [L][Hq]; else empty.
    std::vector<std::vector<double>> learned;
};

// 4. A candidate next token and its text.
struct ProbeNextToken {
    TokenChoice choice;
    std::string text;
};

// 4. The greedy continuation, decoded through the cache.
struct ProbeContinuation {
    int requested = 0;
    std::vector<std::int32_t> ids;
    std::vector<std::string> token_text;   // one per id
    std::string text;                      // the ids read on from the prompt
    bool stopped_at_eos = false;
};

// How long the passes took.
struct ProbeTiming {
    double prefill_seconds = 0;          // the full pass over the T prompt tokens
    double cached_prefill_seconds = 0;   // the same tokens one at a time through the cache
    std::size_t decode_steps = 0;        // continuation tokens fed back
    double decode_seconds = 0;
};

// Facts only the caller knows, each written to the trace when set (the page's
// probe sets none).

// The checkpoint (probe.model; its path is also the trace's weights.path).
struct ProbeCheckpoint {
    std::string path;
    std::string name;                          // the config's name
    std::vector<std::string> architectures;    // config.json's, e.g. ["LlamaForCausalLM"]
    std::string torch_dtype;                   // config.json's ("" if absent)
    std::int32_t bos_token_id = -1;
    std::vector<std::int32_t> eos_token_ids;
    std::size_t tokenizer_pieces = 0;
    std::optional<std::int64_t> trained_positions;
    std::size_t shards = 0;
};

// Where the prompt came from (probe.prompt): a text, or ids as typed.
struct ProbePrompt {
    bool from_ids = false;
    std::string text;          // the text (from_ids false)
    bool chat = false;         // wrapped in the chat template
    bool is_default = false;   // no prompt was given
    std::string ids;           // the ids as typed, e.g. "1,5,9" (from_ids true)
};

// The CPU the passes ran on (probe.device).
struct ProbeCpu {
    std::string name;
    int hardware_threads = 0;
    int threads_used = 0;
};

// The build's compiler and libraries (probe.software).
struct ProbeSoftware {
    BuildInfo build;
    long cxx_standard = 0;        // __cplusplus
    std::string nlohmann_json;    // "3.11.2"
    std::string xtensor;
};

// The command around the passes (probe.timing's other fields).
struct ProbeProcess {
    double load_seconds = 0;              // reading the checkpoint and tokenizer
    std::int64_t peak_rss_bytes = 0;
    std::array<double, 3> load_average{};  // the machine's 1, 5 and 15 minute load
    double total_seconds = 0;             // the whole command
};

// Everything the probe computed, in the order of its steps (probe.hpp), then what
// its caller adds.
struct ProbeResult {
    ModelConfig config;
    std::vector<std::int32_t> ids;            // the prompt [T]
    std::vector<std::string> token_text;      // [T]
    ProbeWeights weights;
    std::string precision_note;               // how the passes compute, in words (the GPU's probe writes its own)
    // 1. The full pass.
    std::vector<Tensor4<float>> probabilities;   // [L] x [1, Hq, T, T]
    Tensor3<float> last_logits;                  // [1, 1, V] the row of position T - 1
    NamedShapes block_shapes;                    // layer 0's tensors in the order computed (PassCapture::shapes)
    std::optional<NonFinite> non_finite;         // the pass's first value that is not finite
    // 2. The cached pass against the full one, and the cache; 3. sinks; 4. next tokens.
    ProbeCachedVsFull cached_vs_full;
    ProbeCache cache;
    ProbeSinks sinks;
    std::vector<ProbeNextToken> top_next;        // most likely first
    ProbeContinuation continuation;
    ProbeTiming timing;
    std::vector<CheckRecord> checks;             // p1-p4
    std::optional<HeadPatterns> head_patterns;   // 5. when requested

    // The caller's (see above); the GPU's probe.device is its own JSON (gpu_info_to_json).
    std::optional<ProbeCheckpoint> checkpoint;
    std::optional<ProbePrompt> prompt;
    std::optional<ProbeCpu> cpu;
    nlohmann::json gpu;                          // null: not a GPU run
    std::optional<ProbeSoftware> software;
    std::optional<ProbeProcess> process;
};

// The trace (docs/trace-schema.md) with the probe's fields, those of the caller
// that are set included.
nlohmann::json probe_result_to_json(const ProbeResult& result);

}  // namespace anatomy
