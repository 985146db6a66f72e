// safetensors reading and writing, and the Hugging Face Llama mapping.
#include <cmath>
#include <cstring>
#include <limits>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/safetensors.hpp"
#include "checkpoint/tensor_views.hpp"
#include "model/forward.hpp"

using namespace anatomy;

namespace {

SafetensorsView view_of(const std::vector<std::uint8_t>& bytes) { return SafetensorsView::parse(bytes.data(), bytes.size()); }

// Rewrites the JSON header of a safetensors buffer, keeping the data.
std::vector<std::uint8_t> with_header(const std::vector<std::uint8_t>& bytes, const nlohmann::json& header) {
    std::uint64_t old_size = 0;
    for (int i = 7; i >= 0; --i) old_size = (old_size << 8) | bytes[std::size_t(i)];
    const std::string text = header.dump();
    std::vector<std::uint8_t> out(8 + text.size());
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
    std::memcpy(out.data() + 8, text.data(), text.size());
    out.insert(out.end(), bytes.begin() + 8 + std::ptrdiff_t(old_size), bytes.end());
    return out;
}

nlohmann::json header_of(const std::vector<std::uint8_t>& bytes) {
    std::uint64_t size = 0;
    for (int i = 7; i >= 0; --i) size = (size << 8) | bytes[std::size_t(i)];
    return nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + std::ptrdiff_t(size));
}

std::string parse_error(const std::vector<std::uint8_t>& bytes) {
    try {
        view_of(bytes);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("16-bit conversions are exact for representable values and round to nearest even") {
    for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0x1.0p-24f, 0x1.0p-14f, 3.140625f}) {
        CHECK(half_to_float(float_to_half(v)) == v);
    }
    for (float v : {0.0f, 1.0f, -3.0f, 0x1.0p100f, 1.5f}) CHECK(bfloat16_to_float(float_to_bfloat16(v)) == v);
    CHECK(std::isinf(half_to_float(float_to_half(1e6f))));
    CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
    // 1 + 2^-11 lies halfway between two halves: ties go to the even one (1.0).
    CHECK(half_to_float(float_to_half(1.0f + 0x1.0p-11f)) == 1.0f);
    CHECK(half_to_float(float_to_half(1.0f + 3 * 0x1.0p-11f)) == 1.0f + 0x1.0p-9f);
    // Every half converts to a float and back unchanged.
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const float f = half_to_float(std::uint16_t(bits));
        if (!std::isnan(f)) REQUIRE(float_to_half(f) == bits);
    }
}

TEST_CASE("safetensors round trip in every dtype") {
    const std::vector<NamedTensor> tensors = {{"a", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"b", {4}, {0.5f, -0.25f, 8, 1024}}};
    for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        const std::vector<std::uint8_t> bytes = write_safetensors(tensors, dtype, {{"format", "pt"}});
        const SafetensorsView view = view_of(bytes);
        CHECK(view.tensors().size() == 2);
        CHECK(view.metadata().at("format") == "pt");
        CHECK(view.find("a")->shape == std::vector<std::size_t>{2, 3});
        CHECK(view.read_floats("b") == tensors[1].values);  // all exactly representable
        std::uint64_t header = 0;
        for (int i = 7; i >= 0; --i) header = (header << 8) | bytes[std::size_t(i)];
        CHECK(header % 8 == 0);  // data starts aligned
    }
}

TEST_CASE("safetensors F64: read exactly as doubles (attn diff), refused as a checkpoint's weights") {
    const std::vector<std::uint8_t> bytes = write_safetensors({{"x", {3}, {0.1f, -2.5f, 3e-8f}}}, DType::f64);
    const SafetensorsView file = SafetensorsView::parse(bytes.data(), bytes.size(), "test");
    CHECK(file.find("x")->dtype == DType::f64);
    CHECK(file.find("x")->end - file.find("x")->begin == 24);
    const std::vector<double> values = file.read_doubles("x");
    CHECK(values == std::vector<double>{double(0.1f), double(-2.5f), double(3e-8f)});  // each float widened, exactly
    CHECK(file.read_floats("x") == std::vector<float>{0.1f, -2.5f, 3e-8f});
    CHECK_THROWS_WITH_AS(safetensors_views({&file}), "tensor 'x' has unsupported dtype 'F64' for weights (supported: F32, F16, BF16)", InputError);
}

TEST_CASE("safetensors reader rejects malformed files with a message naming the problem") {
    const std::vector<std::uint8_t> good = write_safetensors({{"w", {2, 2}, {1, 2, 3, 4}}}, DType::f32);
    CHECK(parse_error(std::vector<std::uint8_t>(good.begin(), good.begin() + 5)).find("truncated") != std::string::npos);
    CHECK(parse_error(std::vector<std::uint8_t>(good.begin(), good.end() - 4)).find("outside the file") != std::string::npos);
    CHECK(parse_error(std::vector<std::uint8_t>(good.begin(), good.begin() + 20)).find("truncated") != std::string::npos);

    nlohmann::json header = header_of(good);
    nlohmann::json bad = header;
    bad["w"]["dtype"] = "I64";
    CHECK(parse_error(with_header(good, bad)).find("unsupported dtype 'I64'") != std::string::npos);
    bad = header;
    bad["w"]["shape"] = {3, 2, 1, 5};
    CHECK(parse_error(with_header(good, bad)).find("shape and dtype need") != std::string::npos);
    bad = header;
    bad["w"]["data_offsets"] = {0, 1ull << 40};
    CHECK(parse_error(with_header(good, bad)).find("outside the file") != std::string::npos);
    bad = header;
    bad["v"] = header["w"];
    CHECK(parse_error(with_header(good, bad)).find("overlap") != std::string::npos);
    bad = header;
    bad["w"]["shape"] = {-2, -2};
    CHECK(parse_error(with_header(good, bad)).find("non-negative") != std::string::npos);

    std::vector<std::uint8_t> not_json = good;
    not_json[8] = '#';
    CHECK(parse_error(not_json).find("not valid JSON") != std::string::npos);
    std::vector<std::uint8_t> huge = good;
    huge[7] = 0x7f;
    CHECK(parse_error(huge).find("implausible") != std::string::npos);
}

TEST_CASE("safetensors from a header parsed elsewhere (the page's JSON.parse) reads as parse does, with the same checks") {
    const std::vector<NamedTensor> tensors = {{"a", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"b", {4}, {0.5f, -0.25f, 8, 1024}}};
    const std::vector<std::uint8_t> bytes = write_safetensors(tensors, DType::bf16, {{"format", "pt"}});
    const SafetensorsView parsed = view_of(bytes);
    const SafetensorsView given = SafetensorsView::from_header(header_of(bytes), bytes.data(), bytes.size(), "model.safetensors");
    CHECK(given.metadata() == parsed.metadata());
    CHECK(given.data() == parsed.data());
    for (const auto& [name, entry] : parsed.tensors()) {
        CHECK(given.find(name)->shape == entry.shape);
        CHECK(given.read_floats(name) == parsed.read_floats(name));
    }
    CHECK(SafetensorsView::header_length(bytes.data(), bytes.size(), "x") + 8 == std::size_t(given.data() - bytes.data()));

    // The header is checked against the bytes it comes with.
    nlohmann::json bad = header_of(bytes);
    bad["b"]["data_offsets"] = {0ull, 1ull << 20};
    CHECK_THROWS_WITH_AS(SafetensorsView::from_header(bad, bytes.data(), bytes.size(), "model.safetensors"),
                         doctest::Contains("model.safetensors: tensor 'b' lies outside the file"), InputError);
    CHECK_THROWS_WITH_AS(SafetensorsView::from_header(nlohmann::json::array(), bytes.data(), bytes.size(), "m"),
                         "m: header is not a JSON object", InputError);
    CHECK_THROWS_WITH_AS(SafetensorsView::from_header(header_of(bytes), bytes.data(), 5, "m"),
                         "m: file is truncated (5 bytes, no header length)", InputError);
}

TEST_CASE("a Hugging Face export loads back to the identical model") {
    const Model<float> model = random_model(tiny_config(), 9);
    const std::vector<NamedTensor> tensors = hf_tensors(model);
    CHECK(tensors.size() == 1 + 2 * 9 + 1);  // embedding, 9 per layer, final norm; tied: no lm_head
    CHECK(tensors[2].name == "model.layers.0.self_attn.q_proj.weight");
    CHECK(tensors[2].shape == std::vector<std::size_t>{32, 32});  // [out, in]
    CHECK(tensors[3].shape == std::vector<std::size_t>{16, 32});  // k_proj: [Hkv*dh, D]

    const std::vector<std::uint8_t> bytes = write_safetensors(tensors, DType::f32);
    const SafetensorsView view = view_of(bytes);
    const ModelConfig config = config_from_hf_json(hf_config_json(model.config, DType::f32));
    const Model<float> loaded = model_from_hf(config, {&view});
    const TokenIds tokens = {{1, 2, 3, 4, 5}};
    CHECK(double(xt::amax(xt::abs(full_forward(model, tokens) - full_forward(loaded, tokens)))()) == 0.0);
}

TEST_CASE("an interleaved-RoPE model exported in the half-split layout computes the same logits") {
    ModelConfig interleaved = tiny_config();
    interleaved.rope_pairing = RopePairing::interleaved;
    const Model<float> model = random_model(interleaved, 3);
    const std::vector<std::uint8_t> bytes = write_safetensors(hf_tensors(model), DType::f32);
    const SafetensorsView view = view_of(bytes);
    const Model<float> loaded = model_from_hf(config_from_hf_json(hf_config_json(interleaved, DType::f32)), {&view});
    CHECK(loaded.config.rope_pairing == RopePairing::half_split);
    const TokenIds tokens = {{5, 4, 3, 2, 1, 0, 31}};
    // Only the channel order inside q and k changed; each dot product sums the same terms in another order.
    CHECK(double(xt::amax(xt::abs(full_forward(model, tokens) - full_forward(loaded, tokens)))()) < 1e-5);
}

TEST_CASE("model_from_hf names missing, misshapen and unexpected tensors") {
    const Model<float> model = random_model(tiny_config());
    std::vector<NamedTensor> tensors = hf_tensors(model);
    auto error_for = [&](const std::vector<NamedTensor>& list) -> std::string {
        const std::vector<std::uint8_t> bytes = write_safetensors(list, DType::bf16);
        const SafetensorsView view = view_of(bytes);
        try {
            model_from_hf(model.config, {&view});
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    };
    std::vector<NamedTensor> missing(tensors.begin() + 1, tensors.end());
    CHECK(error_for(missing).find("missing tensor 'model.embed_tokens.weight'") != std::string::npos);
    std::vector<NamedTensor> extra = tensors;
    extra.push_back({"lm_head.weight", {32, 32}, std::vector<float>(1024, 0.0f)});
    CHECK(error_for(extra).find("unexpected tensor 'lm_head.weight'") != std::string::npos);
    std::vector<NamedTensor> wrong = tensors;
    wrong[3].shape = {32, 16};  // k_proj stored the wrong way round
    CHECK(error_for(wrong).find("'model.layers.0.self_attn.k_proj.weight' has shape [32, 16]") != std::string::npos);
}

TEST_CASE("config.json errors name the field") {
    nlohmann::json config = hf_config_json(tiny_config(), DType::f32);
    config.erase("num_key_value_heads");
    CHECK(config_from_hf_json(config).n_kv_heads == 4);  // absent means multi-head attention, as in HF
    config.erase("hidden_size");
    CHECK_THROWS_WITH_AS(config_from_hf_json(config), doctest::Contains("hidden_size"), InputError);
    config = hf_config_json(tiny_config(), DType::f32);
    config["num_attention_heads"] = "four";
    CHECK_THROWS_WITH_AS(config_from_hf_json(config), doctest::Contains("num_attention_heads"), InputError);
}

TEST_CASE("a model with attention sinks: written as gpt-oss names them, read back to the same logits, refused where it has no place") {
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    const Model<float> model = random_model(config, 5);
    const std::vector<NamedTensor> tensors = hf_tensors(model);
    CHECK(tensors.size() == 1 + 2 * 10 + 1);  // each layer's nine, then its sinks
    CHECK(tensors[10].name == "model.layers.0.self_attn.sinks");
    CHECK(tensors[10].shape == std::vector<std::size_t>{4});
    const nlohmann::json json = hf_config_json(config, DType::f32);
    CHECK(json["attention_sinks"] == true);
    CHECK_FALSE(hf_config_json(tiny_config(), DType::f32).contains("attention_sinks"));

    const std::vector<std::uint8_t> bytes = write_safetensors(tensors, DType::f32);
    const SafetensorsView view = view_of(bytes);
    const Model<float> loaded = model_from_hf(config_from_hf_json(json), {&view});
    CHECK(loaded.weights.layers[1].sinks == model.weights.layers[1].sinks);
    const TokenIds tokens = {{1, 2, 3, 4, 5}};
    CHECK(double(xt::amax(xt::abs(full_forward(model, tokens) - full_forward(loaded, tokens)))()) == 0.0);
    // Without the sinks the logits differ: they are read, not ignored.
    Model<float> without = loaded;
    for (LayerWeights<float>& l : without.weights.layers) l.sinks.fill(-1e30f);
    CHECK(double(xt::amax(xt::abs(full_forward(model, tokens) - full_forward(without, tokens)))()) > 1e-3);

    // The tensors with a config that does not ask for them: named, with what to do.
    try {
        model_from_hf(tiny_config(), {&view});
        FAIL("a checkpoint with sinks loaded as a model without them");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("tensor 'model.layers.0.self_attn.sinks' holds learned attention sinks, but the config does not say \"attention_sinks\": true") != std::string::npos);
    }
    nlohmann::json bad = json;
    bad["attention_sinks"] = "yes";
    CHECK_THROWS_WITH_AS(config_from_hf_json(bad), "config.json: field 'attention_sinks' must be true or false", InputError);
}
