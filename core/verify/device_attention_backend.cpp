#include "device_attention_backend.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>

#include "../ops/attention.hpp"

namespace anatomy {
namespace {

// FNV-1a over the bytes of every input, as 16 hex digits.
class Fnv1a {
public:
    void add(const void* data, std::size_t bytes) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * 0x100000001b3ULL;
    }
    std::string hex() const {
        char text[17];
        std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
        return text;
    }

private:
    std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

template <typename Tensor>
std::vector<float> flat(const Tensor& x) {
    return std::vector<float>(x.begin(), x.end());
}

}  // namespace

SuiteOptions device_suite_options() {
    SuiteOptions options;
    options.cache_tolerance = 1e-4;
    return options;
}

void DeviceAttentionBackend::reset(std::size_t batch) {
    cache_ = empty_cache<float>(model_.config, batch);
    lowest_stand_in_layer_ = std::numeric_limits<int>::max();
}

Tensor3<float> DeviceAttentionBackend::forward(const TokenIds& tokens, PassCapture* capture) {
    next_layer_ = 0;  // the decoder block asks for attention once per layer, in order
    const ExternalAttention<float> external = [this](const Tensor4<float>& q, const Tensor4<float>& k,
                                                     const Tensor4<float>& v, const Vector<float>* sinks) {
        return attend(q, k, v, sinks);
    };
    if (!capture) return anatomy::forward(model_, cache_, tokens, AttentionPath::grouped, static_cast<ForwardCapture<float>*>(nullptr), &external);
    ForwardCapture<float> full;
    Tensor3<float> logits = anatomy::forward(model_, cache_, tokens, AttentionPath::grouped, &full, &external);
    capture->shapes = full.layers.empty() ? decltype(capture->shapes){} : full.layers[0].shapes;
    capture->layers = std::move(full.layers);
    return logits;
}

AttentionResult<float> DeviceAttentionBackend::attend(const Tensor4<float>& q, const Tensor4<float>& k,
                                                      const Tensor4<float>& v, const Vector<float>* sinks) {
    KernelShape shape;
    shape.B = std::int64_t(q.shape(0)), shape.Hq = std::int64_t(q.shape(1)), shape.T = std::int64_t(q.shape(2));
    shape.D = std::int64_t(q.shape(3)), shape.Hkv = std::int64_t(k.shape(1)), shape.S = std::int64_t(k.shape(2));
    Fnv1a hash;
    hash.add(&shape, sizeof shape);
    hash.add(q.data(), q.size() * sizeof(float));
    hash.add(k.data(), k.size() * sizeof(float));
    hash.add(v.data(), v.size() * sizeof(float));
    if (sinks) hash.add(sinks->data(), sinks->size() * sizeof(float));
    const std::string key = hash.hex();
    const int layer = next_layer_++;
    if (const auto found = answers_.find(key); found != answers_.end()) return found->second;

    // Not answered yet: ask the device, unless the inputs rest on a stand-in, which a
    // stand-in at an earlier layer (in this pass, or in the cache's earlier passes) makes them.
    if (layer <= lowest_stand_in_layer_ && asked_this_round_.insert(key).second) {
        AttentionRequest request{key, shape, {flat(q), flat(k), flat(v), sinks ? flat(*sinks) : std::vector<float>{}, {}}};
        MaskSpec spec;
        spec.kind = MaskKind::causal;
        spec.T = shape.T;
        spec.S = shape.S;
        request.inputs.ranges = visible_key_ranges(spec);
        asked_[key] = shape;
        requests_.push_back(std::move(request));
    }
    lowest_stand_in_layer_ = std::min(lowest_stand_in_layer_, layer);
    // The core's attention stands in, so the pass can go on.
    return masked_attention(q, k, v, causal_mask(q.shape(2), k.shape(2)), sinks);
}

void DeviceAttentionBackend::answer(const std::string& key, const std::vector<float>& out, const std::vector<float>& probs) {
    const auto asked = asked_.find(key);
    if (asked == asked_.end()) throw InputError("no attention was asked for under the key '" + key + "'");
    const KernelShape& s = asked->second;
    const auto size = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
        return std::array<std::size_t, 4>{std::size_t(a), std::size_t(b), std::size_t(c), std::size_t(d)};
    };
    if (out.size() != std::size_t(s.B * s.Hq * s.T * s.D))
        throw InputError("the answer to '" + key + "' holds " + std::to_string(out.size()) + " outputs where " +
                         std::to_string(s.B * s.Hq * s.T * s.D) + " were asked for");
    if (!probs.empty() && probs.size() != std::size_t(s.B * s.Hq * s.T * s.S))
        throw InputError("the answer to '" + key + "' holds " + std::to_string(probs.size()) +
                         " probabilities where " + std::to_string(s.B * s.Hq * s.T * s.S) + " were asked for");
    AttentionResult<float> result;
    result.heads = Tensor4<float>::from_shape(size(s.B, s.Hq, s.T, s.D));
    std::copy(out.begin(), out.end(), result.heads.begin());
    if (!probs.empty()) {
        result.probs = Tensor4<float>::from_shape(size(s.B, s.Hq, s.T, s.S));
        std::copy(probs.begin(), probs.end(), result.probs.begin());
    }
    answers_[key] = std::move(result);
}

}  // namespace anatomy
