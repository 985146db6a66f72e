// The one reader behind both loaders: verify's widened Model<float> (model_from_hf)
// and the probe's in-place model (pretrained_from_hf) read exactly the names of the
// one list (llama_tensor_specs), refuse the same files with the same messages, and
// follow the same rule for harmless extra tensors (rotary_emb.inv_freq).
#include <cmath>

#include <doctest/doctest.h>

#include "checkpoint/hf_llama.hpp"
#include "model/forward.hpp"
#include "pretrained/pretrained_forward.hpp"

using namespace anatomy;

namespace {

// Tied (the tiny model) and untied with grouped KV heads (TinyLlama's layout).
std::vector<ModelConfig> configs() {
    ModelConfig untied = tiny_config();
    untied.tie_embeddings = false;
    untied.n_kv_heads = 1;
    return {tiny_config(), untied};
}

// What each loader says about `tensors` written as one float32 file ("" when it loads).
struct Verdicts {
    std::string verify, probe;
};

Verdicts verdicts(const ModelConfig& config, const std::vector<NamedTensor>& tensors) {
    const std::vector<std::uint8_t> bytes = write_safetensors(tensors, DType::f32);
    const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
    Verdicts v;
    try {
        model_from_hf(config, {&view}, "ck");
    } catch (const InputError& e) {
        v.verify = e.what();
    }
    try {
        pretrained_from_hf(config, {&view}, "ck", WeightPrecision::float32);
    } catch (const InputError& e) {
        v.probe = e.what();
    }
    return v;
}

// RoPE's inverse frequencies as transformers saved them: [dh / 2], theta^(-2i/dh).
NamedTensor inv_freq(int layer, const ModelConfig& c) {
    NamedTensor t{"model.layers." + std::to_string(layer) + ".self_attn.rotary_emb.inv_freq", {std::size_t(c.head_dim / 2)}, {}};
    for (int i = 0; i < c.head_dim / 2; ++i) t.values.push_back(float(std::pow(c.rope_theta, -2.0 * i / c.head_dim)));
    return t;
}

Tensor3<float> probe_logits(const ModelConfig& config, const std::vector<std::uint8_t>& bytes, const TokenIds& tokens) {
    const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
    const PretrainedModel model = pretrained_from_hf(config, {&view}, "ck", WeightPrecision::float32);
    PretrainedCache cache = empty_pretrained_cache(config, 1, DType::f32);
    return pretrained_forward(model, cache, tokens);
}

}  // namespace

TEST_CASE("the one name list is what the writer writes and exactly what both loaders read") {
    for (const ModelConfig& config : configs()) {
        CAPTURE(config.tie_embeddings);
        const Model<float> model = random_model(config, 4);
        const std::vector<NamedTensor> tensors = hf_tensors(model);
        const std::vector<TensorSpec> specs = hf_tensor_specs(config);
        REQUIRE(tensors.size() == specs.size());
        REQUIRE(specs.size() == 1 + 9 * std::size_t(config.n_layers) + 1 + (config.tie_embeddings ? 0 : 1));
        for (std::size_t i = 0; i < specs.size(); ++i) {
            CHECK(tensors[i].name == specs[i].name);
            CHECK(tensors[i].shape == specs[i].shape);
        }
        // All of them: both load. Any one left out: both name it as missing, in the same words.
        const Verdicts all = verdicts(config, tensors);
        CHECK(all.verify.empty());
        CHECK(all.probe.empty());
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            std::vector<NamedTensor> without = tensors;
            without.erase(without.begin() + std::ptrdiff_t(i));
            const Verdicts v = verdicts(config, without);
            CHECK(v.verify == "ck: missing tensor '" + specs[i].name + "'");
            CHECK(v.probe == v.verify);
        }
    }
}

TEST_CASE("rotary_emb.inv_freq is accepted and ignored by both loaders") {
    for (const ModelConfig& config : configs()) {
        CAPTURE(config.tie_embeddings);
        const Model<float> model = random_model(config, 6);
        std::vector<NamedTensor> tensors = hf_tensors(model);
        const std::vector<std::uint8_t> plain = write_safetensors(tensors, DType::f32);
        for (int layer = 0; layer < config.n_layers; ++layer) tensors.push_back(inv_freq(layer, config));
        const std::vector<std::uint8_t> with_buffers = write_safetensors(tensors, DType::f32);
        const SafetensorsView view = SafetensorsView::parse(with_buffers.data(), with_buffers.size());
        REQUIRE(view.find("model.layers.1.self_attn.rotary_emb.inv_freq"));

        const TokenIds tokens = {{1, 2, 3, 4, 5}};
        const Model<float> loaded = model_from_hf(config, {&view}, "ck");  // verify's loader
        CHECK(double(xt::amax(xt::abs(full_forward(model, tokens) - full_forward(loaded, tokens)))()) == 0.0);
        const Tensor3<float> a = probe_logits(config, plain, tokens), b = probe_logits(config, with_buffers, tokens);
        CHECK(double(xt::amax(xt::abs(a - b))()) == 0.0);  // the probe's loader: the same model bit for bit
    }
}

TEST_CASE("both loaders refuse a truly unknown tensor, naming it the same way") {
    const ModelConfig config = tiny_config();
    const Model<float> model = random_model(config, 8);
    // A bias this decoder has no use for, RoPE's buffer somewhere it never lives, and
    // one with the buffer's name as a prefix only.
    for (const std::string name : {"model.layers.0.self_attn.q_proj.bias", "model.layers.0.mlp.rotary_emb.inv_freq",
                                   "rotary_emb.inv_freq", "model.layers.1.self_attn.rotary_emb.inv_freq_scale"}) {
        CAPTURE(name);
        std::vector<NamedTensor> tensors = hf_tensors(model);
        tensors.push_back({name, {4}, std::vector<float>(4, 1.0f)});
        tensors.push_back(inv_freq(0, config));  // harmless, and not what is reported
        const Verdicts v = verdicts(config, tensors);
        CHECK(v.verify == "ck: unexpected tensor '" + name + "' (not part of a tied Llama with this config)");
        CHECK(v.probe == v.verify);
    }
}

TEST_CASE("both loaders give the same shape and duplicate errors") {
    const ModelConfig config = configs()[1];
    const Model<float> model = random_model(config, 10);
    std::vector<NamedTensor> tensors = hf_tensors(model);
    std::swap(tensors[4].shape[0], tensors[4].shape[1]);  // v_proj of layer 0 stored [in, out]
    const Verdicts v = verdicts(config, tensors);
    CHECK(v.verify == "ck: tensor 'model.layers.0.self_attn.v_proj.weight' has shape [32, 8], config implies [8, 32]");
    CHECK(v.probe == v.verify);

    const std::vector<std::uint8_t> all = write_safetensors(hf_tensors(model), DType::f32);
    const std::vector<std::uint8_t> norm = write_safetensors({hf_tensors(model).back()}, DType::f32);  // lm_head again
    const SafetensorsView a = SafetensorsView::parse(all.data(), all.size()), b = SafetensorsView::parse(norm.data(), norm.size());
    const std::string expected = "ck: tensor 'lm_head.weight' appears in more than one shard";
    CHECK_THROWS_WITH_AS(model_from_hf(config, {&a, &b}, "ck"), expected.c_str(), InputError);
    CHECK_THROWS_WITH_AS(pretrained_from_hf(config, {&a, &b}, "ck", WeightPrecision::float32), expected.c_str(), InputError);
}
