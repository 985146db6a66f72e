// The pretrained probe: one prompt through a real checkpoint, recording what the
// chapter says about attention in a trained model, and checking the KV cache on it.
//   1. a full pass over the prompt, capturing every layer's attention;
//   2. the same prompt prefilled one token at a time through the KV cache, whose
//      logits must match the full pass at every position;
//   3. attention sinks: how much the second half of the queries give position 0;
//   4. the top next tokens, and a greedy continuation decoded through the cache;
//   5. on request, each head's pattern scores (previous token, first token, self,
//      induction) from two more passes (lessons/head_patterns.hpp).
// The result is a ProbeResult (probe_result.hpp), which probe_result_to_json writes
// as a trace (docs/trace-schema.md) with the probe's fields.
#pragma once

#include <string_view>
#include <vector>

#include "../tokenizer/llama_tokenizer.hpp"
#include "pretrained_backend.hpp"
#include "probe_result.hpp"

namespace anatomy {

// How far the cached logits may be from the full pass's. Both paths compute every
// row with the same operations in the same order (project() sums a row the same
// way whatever T is, the masked keys add exact zeros), so in this build they agree
// bit for bit. The bound leaves room for an implementation that sums in another
// order: this forward and core/model/forward.cpp's differ by 1.7e-5 on the 22-layer
// TinyLlama-shaped random checkpoint (logits up to 4.9; both within 2.3e-5 of a
// float64 forward), and trained weights have larger logits. A cache bug (a wrong
// position, a mask one column off) moves logits by 0.1 or more.
inline constexpr double probe_logit_tolerance = 1e-3;
// Probability rows sum to 1 within float32 rounding of up to a few thousand terms.
inline constexpr double probe_row_sum_tolerance = 1e-5;

struct ProbeRequest {
    std::vector<std::int32_t> ids;       // the prompt [T], BOS included when wanted
    int generate = 0;                    // greedy continuation length (0: none)
    std::vector<std::int32_t> stop_ids;  // end-of-sequence ids: the continuation stops after one
    std::int32_t bos_id = -1;            // the beginning of text (-1: none), for head_patterns' induction pass
    DType cache_dtype = DType::f32;      // the CPU KV cache's precision (f32 or bf16)
    int top_k = 5;                       // how many next tokens to list
    bool head_patterns = false;          // add probe.head_patterns (lessons/head_patterns.hpp): two more passes
};

// The prompt's ids: BOS, then the text. With `chat`, the text is wrapped in
// TinyLlama's chat template "<|user|>\n" TEXT "</s>" "\n<|assistant|>\n": "</s>" is
// the EOS id (a special token, as Hugging Face splits it out), and the part after
// it is encoded as its own segment, starting with "▁" as Hugging Face's Llama
// tokenizer does. Without `chat` the text is plain text ("</s>" in it is not special).
std::vector<std::int32_t> prompt_ids(const LlamaTokenizer& tokenizer, std::string_view text, bool chat,
                                     std::int32_t bos_id, std::int32_t eos_id);

// A token id as readable text (the tokenizer's display piece), or "<id N>" for an id
// the tokenizer does not have (a model vocabulary padded beyond the tokenizer's).
std::string token_text(const LlamaTokenizer& tokenizer, std::int32_t id);

// The k most likely tokens of one logits row [V], most likely first (the lower id on a tie).
std::vector<TokenChoice> top_next_tokens(const float* logits, std::size_t V, std::size_t k);

// Runs the probe on request.ids (1 to max_probe_tokens ids); `backend` computes
// every forward (a PretrainedBackend over `model` when not given, with
// request.cache_dtype; natively, the GPU's: native/cuda/gpu_probe.cpp). The
// caller's fields are left empty for it to fill.
ProbeResult run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request,
                      Backend& backend);
ProbeResult run_probe(const PretrainedModel& model, const LlamaTokenizer& tokenizer, const ProbeRequest& request);

// The longest prompt the probe takes: the trace holds L x Hq x T^2 probabilities
// (22 x 32 x 256^2 is 46 million numbers, several hundred MB of JSON).
inline constexpr std::size_t max_probe_tokens = 256;

}  // namespace anatomy
