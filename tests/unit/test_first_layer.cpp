// The first layer's attention from its four tensors (core/model/first_layer_attention.hpp)
// against the whole model's forward, to the bit; and the slice a page loads, read back
// through first_layer_from_views.
#include <doctest/doctest.h>

#include <cstring>

#include <xtensor/xview.hpp>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/model_from_views.hpp"
#include "model/first_layer_attention.hpp"
#include "model/forward.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {

TokenIds rows(std::size_t B, const std::vector<std::int32_t>& ids) {
    TokenIds tokens({B, ids.size()});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < ids.size(); ++t) tokens(b, t) = ids[(t + b) % ids.size()];
    return tokens;
}

FirstLayerAttentionWeights first_layer_of(const Model<float>& model) {
    const LayerWeights<float>& l0 = model.weights.layers[0];
    return {model.weights.embedding, l0.attn_norm, l0.wq, l0.wk, l0.wv, l0.wo};
}

}  // namespace

TEST_CASE("the first layer's probabilities from four tensors are the full forward's layer 0, bit for bit") {
    for (const RopePairing pairing : {RopePairing::half_split, RopePairing::interleaved}) {
        ModelConfig config = tiny_config();
        config.rope_pairing = pairing;
        const Model<float> model = random_model(config, 7);
        const TokenIds tokens = rows(2, {1, 5, 5, 9, 30, 2, 17, 31, 0, 4});  // [2, 10]
        ForwardCapture<float> capture;
        full_forward(model, tokens, AttentionPath::grouped, &capture);
        const Tensor4<float> probs = first_layer_probabilities(config, first_layer_of(model), tokens);
        CAPTURE(to_string(pairing));
        CHECK(same_bits(probs, capture.layers[0].probs));
        for (std::size_t h = 0; h < probs.shape(1); ++h) CHECK(probs(0, h, 3, 4) == 0.0f);  // a future cell
    }
}

TEST_CASE("a mutated weight changes the first layer's probabilities") {
    const Model<float> model = random_model(tiny_config());
    const TokenIds tokens = rows(1, {3, 1, 4, 1, 5, 9, 2, 6});
    FirstLayerAttentionWeights weights = first_layer_of(model);
    const Tensor4<float> before = first_layer_probabilities(model.config, weights, tokens);
    weights.wk(0, 0) += 0.5f;
    const Tensor4<float> after = first_layer_probabilities(model.config, weights, tokens);
    CHECK(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) != 0);
}

TEST_CASE("the first-layer slice of a checkpoint reads back to the same probabilities") {
    const Model<float> model = random_model(tiny_config(), 3);
    const TokenIds tokens = rows(1, {0, 7, 7, 7, 12, 3});
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView file = SafetensorsView::parse(bytes.data(), bytes.size());
    const FirstLayerAttentionWeights read = first_layer_from_views(model.config, safetensors_views({&file}), "slice");
    CHECK(same_bits(first_layer_probabilities(model.config, read, tokens),
                    first_layer_probabilities(model.config, first_layer_of(model), tokens)));
}

TEST_CASE("the first layer refuses weights and ids that do not fit its config") {
    const Model<float> model = random_model(tiny_config());
    const TokenIds tokens = rows(1, {1, 2, 3});

    FirstLayerAttentionWeights narrow = first_layer_of(model);
    narrow.wk = xt::view(model.weights.layers[0].wk, xt::all(), xt::range(0, 8));  // one KV head of two
    CHECK_THROWS_WITH_AS(first_layer_probabilities(model.config, narrow, tokens), "wk has shape [32, 8], the config implies [32, 16]",
                         InputError);
    CHECK_THROWS_AS(first_layer_probabilities(model.config, first_layer_of(model), rows(1, {1, 32})), InputError);
    CHECK_THROWS_AS(first_layer_probabilities(model.config, first_layer_of(model), TokenIds({1, 0})), InputError);

    ModelConfig wider = model.config;
    wider.hidden_size = 64;
    wider.head_dim = 16;
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView file = SafetensorsView::parse(bytes.data(), bytes.size());
    CHECK_THROWS_WITH_AS(first_layer_from_views(wider, safetensors_views({&file}), "slice"),
                         "slice: tensor 'model.embed_tokens.weight' has shape [32, 32], config implies [32, 64]", InputError);
    TensorViews without_wq;
    for (const TensorView& t : safetensors_views({&file}))
        if (t.name != "model.layers.0.self_attn.q_proj.weight") without_wq.push_back(t);
    CHECK_THROWS_WITH_AS(first_layer_from_views(model.config, without_wq, "slice"),
                         "slice: missing tensor 'model.layers.0.self_attn.q_proj.weight'", InputError);
}

TEST_CASE("the first layer's attention sublayer from six tensors is the full forward's layer 0, bit for bit") {
    for (const RopePairing pairing : {RopePairing::half_split, RopePairing::interleaved}) {
        ModelConfig config = tiny_config();
        config.rope_pairing = pairing;
        const Model<float> model = random_model(config, 11);
        const TokenIds tokens = rows(2, {1, 5, 5, 9, 30, 2, 17, 31, 0, 4});  // [2, 10]
        ForwardCapture<float> capture;
        full_forward(model, tokens, AttentionPath::grouped, &capture);
        const FirstLayerAttention block = first_layer_attention(config, first_layer_of(model), tokens);
        CAPTURE(to_string(pairing));
        CHECK(same_bits(block.probs, capture.layers[0].probs));
        CHECK(same_bits(block.head_outputs, capture.layers[0].head_outputs));
        CHECK(same_bits(block.update, capture.layers[0].attention_update));
        // merged is the heads side by side: channel h * dh + i of position t is head h's channel i.
        const std::size_t dh = std::size_t(config.head_dim);
        for (std::size_t h = 0; h < block.head_outputs.shape(1); ++h)
            for (std::size_t i = 0; i < dh; ++i) CHECK(block.merged(1, 6, h * dh + i) == block.head_outputs(1, h, 6, i));
    }
}

TEST_CASE("changing the last token leaves every earlier position's attention output as it was, bit for bit") {
    const Model<float> model = random_model(tiny_config(), 5);
    const FirstLayerAttentionWeights weights = first_layer_of(model);
    const FirstLayerAttention before = first_layer_attention(model.config, weights, rows(1, {1, 8, 3, 3, 20, 6}));
    const FirstLayerAttention after = first_layer_attention(model.config, weights, rows(1, {1, 8, 3, 3, 20, 7}));
    const std::size_t T = 6, D = std::size_t(model.config.hidden_size);
    CHECK(std::memcmp(before.update.data(), after.update.data(), (T - 1) * D * sizeof(float)) == 0);
    CHECK(std::memcmp(before.update.data() + (T - 1) * D, after.update.data() + (T - 1) * D, D * sizeof(float)) != 0);
}

TEST_CASE("the first layer's sublayer reads wv and wo from a checkpoint, and refuses them missing or misshapen") {
    const Model<float> model = random_model(tiny_config(), 3);
    const TokenIds tokens = rows(1, {0, 7, 7, 7, 12, 3});
    const std::vector<std::uint8_t> bytes = hf_safetensors(model, DType::f32);
    const SafetensorsView file = SafetensorsView::parse(bytes.data(), bytes.size());
    const FirstLayerAttentionWeights read = first_layer_from_views(model.config, safetensors_views({&file}), "slices", FirstLayerPart::attention);
    CHECK(same_bits(first_layer_attention(model.config, read, tokens).update,
                    first_layer_attention(model.config, first_layer_of(model), tokens).update));

    const FirstLayerAttentionWeights four = first_layer_from_views(model.config, safetensors_views({&file}), "slice");
    CHECK(four.wv.size() == 0);
    CHECK_THROWS_WITH_AS(first_layer_attention(model.config, four, tokens), "wv has shape [0, 0], the config implies [32, 16]", InputError);
    TensorViews without_wo;
    for (const TensorView& t : safetensors_views({&file}))
        if (t.name != "model.layers.0.self_attn.o_proj.weight") without_wo.push_back(t);
    CHECK_THROWS_WITH_AS(first_layer_from_views(model.config, without_wo, "slices", FirstLayerPart::attention),
                         "slices: missing tensor 'model.layers.0.self_attn.o_proj.weight'", InputError);
    FirstLayerAttentionWeights narrow = first_layer_of(model);
    narrow.wo = xt::view(model.weights.layers[0].wo, xt::range(0, 16), xt::all());
    CHECK_THROWS_WITH_AS(first_layer_attention(model.config, narrow, tokens), "wo has shape [16, 32], the config implies [32, 32]", InputError);
}
