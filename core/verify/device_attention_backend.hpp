// The tiny model with its attention computed on a device the core cannot call (the
// page's WebGPU kernels), so that the check suite (check_suite.hpp) runs on that
// device unchanged. The device answers asynchronously and the suite is synchronous,
// so the suite runs in rounds, by replay:
//
//   1. run the suite; every attention whose answer is not known yet is recorded as a
//      request (its q, keys, values, sinks and each row's visible keys), and the
//      core's own attention stands in for it so the pass can go on;
//   2. the host computes the requests on its device and hands the answers back;
//   3. run the suite again: the answered attentions now come from the device.
//
// A request at a layer above one where a stand-in was used (in the same pass, or in the
// cache's earlier passes since the last reset) is not recorded: its inputs depend on the
// stand-in and would change once the device answers. So round r answers the attentions
// of layer r - 1, whatever the passes and steps, and a model of L layers completes in
// L + 1 rounds, after which every attention the suite used came from the device
// (complete(): no request was recorded).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend.hpp"
#include "check_suite.hpp"
#include "kernel_cases.hpp"

namespace anatomy {

// The suite's options on a device: checks a and b compare its decode kernel (which sums
// each chunk of keys, then merges the chunks) with its kernel for several tokens (one sum
// over the keys), two f32 summation orders that the CPU's shared code does not have (0
// there): logits of magnitude up to about 10 then differ by some ulps, and 1e-4 allows it
// while a wrong answer moves them by 1e-3 or more (the unit test's decode answers, off by
// 1e-2 in one element, move them by about that).
SuiteOptions device_suite_options();

struct AttentionRequest {
    std::string key;                    // the inputs' hash: the same attention asked twice is one request
    KernelShape shape;                  // T new queries over S = history + T keys, causal over the cache
    KernelInputs inputs;                // q, k, v, the sinks and each query row's visible keys (kernel_cases.hpp)
};

class DeviceAttentionBackend final : public Backend {
public:
    explicit DeviceAttentionBackend(const Model<float>& model) : model_(model) {}
    const ModelConfig& config() const override { return model_.config; }
    void reset(std::size_t batch) override;
    Tensor3<float> forward(const TokenIds& tokens, PassCapture* capture) override;
    DType cache_dtype() const override { return DType::f32; }
    std::int64_t cached_tokens() const override { return cache_.position; }
    std::size_t cache_bytes() const override { return cache_.stored_scalars() * sizeof(float); }

    // A new round: forgets the last round's requests (the answers stay).
    void begin_round() {
        requests_.clear();
        asked_this_round_.clear();
    }
    // The attentions the last round asked for and could not be given, in the order asked.
    const std::vector<AttentionRequest>& requests() const { return requests_; }
    bool complete() const { return requests_.empty(); }
    // The device's answer to request `key`: out [B, Hq, T, D]; probs [B, Hq, T, S] or empty
    // (a kernel that writes none). Throws InputError for an unknown key or a wrong size.
    void answer(const std::string& key, const std::vector<float>& out, const std::vector<float>& probs);
    std::size_t answered() const { return answers_.size(); }

private:
    AttentionResult<float> attend(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v,
                                  const Vector<float>* sinks);
    const Model<float>& model_;
    KVCache<float> cache_;
    // The lowest layer whose attention a stand-in gave since the last reset: the inputs of
    // every later layer's attention depend on it (its outputs, and the cache they filled).
    int lowest_stand_in_layer_ = std::numeric_limits<int>::max();
    int next_layer_ = 0;  // the layer of the pass's next attention
    std::vector<AttentionRequest> requests_;
    std::set<std::string> asked_this_round_;
    std::map<std::string, KernelShape> asked_;  // every key ever asked for, with its shape
    std::map<std::string, AttentionResult<float>> answers_;
};

}  // namespace anatomy
