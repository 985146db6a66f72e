// The pretrained path: the synthetic tokenizer, weights read in place, the
// in-place forward against the reference forward, the loader's errors, the
// config.json fields it relies on, and the probe's trace.
#include <algorithm>
#include <cmath>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "model/forward.hpp"
#include "pretrained/probe.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"
#include "verify/compare.hpp"
#include "verify/trace.hpp"

using namespace anatomy;

namespace {

// Small, but with what TinyLlama has: grouped KV heads (8 query heads on 2), an
// untied lm_head, a vocabulary with byte fallback and merges.
ModelConfig small_config() {
    ModelConfig c = tiny_config();
    c.name = "small";
    c.vocab_size = 400;
    c.hidden_size = 64;
    c.n_heads = 8;
    c.n_kv_heads = 2;
    c.head_dim = 8;
    c.ffn_size = 96;
    c.rms_norm_eps = 1e-5;
    c.tie_embeddings = false;
    return c;
}

struct Checkpoint {
    std::vector<std::uint8_t> bytes;
    SafetensorsView view;
};

Checkpoint checkpoint_of(const Model<float>& model, DType dtype) {
    Checkpoint c{hf_safetensors(model, dtype), {}};
    c.view = SafetensorsView::parse(c.bytes.data(), c.bytes.size());
    return c;
}

TokenIds ids_of(std::vector<std::int32_t> ids) {
    TokenIds t({1, ids.size()});
    std::copy(ids.begin(), ids.end(), t.begin());
    return t;
}

const std::vector<std::int32_t> prompt = {1, 17, 300, 42, 5, 399, 260, 8, 120, 77, 3, 64};

std::string load_error(const std::vector<const SafetensorsView*>& shards, const ModelConfig& config) {
    try {
        pretrained_from_hf(config, shards, "ck", WeightPrecision::float32);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the synthetic tokenizer has exactly vocab_size pieces, in Llama's layout") {
    for (int V : {4, 32, 300, 353, 354, 1000, 32000}) {
        CAPTURE(V);
        const nlohmann::json j = synthetic_tokenizer_json(V);
        const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(j);
        CHECK(tokenizer.vocab_size() == std::size_t(V));
        CHECK(tokenizer.piece(0) == "<unk>");
        CHECK(tokenizer.piece(1) == "<s>");
        CHECK(tokenizer.piece(2) == "</s>");
        const bool bytes = V >= 354;
        CHECK(j["model"]["byte_fallback"] == bytes);
        if (bytes) {
            CHECK(tokenizer.piece(3) == "<0x00>");
            CHECK(tokenizer.piece(258) == "<0xFF>");
            CHECK(tokenizer.piece(259) == "\xE2\x96\x81");
            CHECK(j["model"]["merges"].size() == std::size_t(V - 354));
        }
        // Each merge makes the next piece, from halves that exist before it.
        const nlohmann::json& merges = j["model"]["merges"];
        const nlohmann::json& vocab = j["model"]["vocab"];
        const std::size_t first_merged = std::size_t(V) - merges.size();
        for (std::size_t m = 0; m < merges.size(); ++m) {
            const std::string text = merges[m];
            const std::string left = text.substr(0, text.find(' ')), right = text.substr(text.find(' ') + 1);
            REQUIRE(vocab.contains(left));
            REQUIRE(vocab.contains(right));
            CHECK(vocab[left + right] == first_merged + m);
            CHECK(vocab[left].get<std::size_t>() < first_merged + m);
            CHECK(vocab[right].get<std::size_t>() < first_merged + m);
        }
        // Any text encodes to ids inside the vocabulary.
        for (const char* text : {"The cache keeps the keys.", "naïve café 東京 🙂", "a\tb\nc", "</s> <s>"}) {
            for (std::int32_t id : tokenizer.encode(text)) CHECK((id >= 0 && id < V));
        }
    }
    CHECK_THROWS_AS(synthetic_tokenizer_json(3), InputError);
}

TEST_CASE("the synthetic tokenizer round-trips text and merges common pieces") {
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(synthetic_tokenizer_json(32000));
    for (const char* text : {"The cache keeps the keys and values.", "naïve café 東京 🙂", "x = [1, 2]; y = {a: 'b'}"}) {
        CHECK(tokenizer.decode(tokenizer.encode(text)) == text);
    }
    // " the" is four characters (▁ t h e); the merges ▁+t and h+e outrank ▁t+h, so BPE gives "▁t" "he".
    const std::vector<std::int32_t> ids = tokenizer.encode("the", false);
    REQUIRE(ids.size() == 2);
    CHECK(tokenizer.piece(ids[0]) == "\xE2\x96\x81t");
    CHECK(tokenizer.piece(ids[1]) == "he");
    // Deterministic: two calls give the same document.
    CHECK(synthetic_tokenizer_json(1000) == synthetic_tokenizer_json(1000));
}

TEST_CASE("streaming the safetensors pieces gives write_safetensors' bytes") {
    const Model<float> model = random_model(small_config(), 3);
    for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        std::vector<std::uint8_t> streamed = safetensors_header(hf_tensor_specs(model.config), dtype, hf_safetensors_metadata());
        for_each_hf_tensor(model, [&](NamedTensor&& t) { encode_values(t.values, dtype, streamed); });
        CHECK(streamed == hf_safetensors(model, dtype));
    }
}

TEST_CASE("project reads [out, in] rows in place and matches a double-precision product") {
    // w: [3, 40] stored [out, in]; x: [1, 2, 40].
    std::vector<float> w(3 * 40);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3) * 0.25f;
    Tensor3<float> x({1, 2, 40});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = float(int(i % 5) - 2) * 0.5f;
    const std::vector<std::uint8_t> f32 = write_safetensors({{"w", {3, 40}, w}}, DType::f32);
    const std::vector<std::uint8_t> bf16 = write_safetensors({{"w", {3, 40}, w}}, DType::bf16);
    const std::vector<std::uint8_t> f16 = write_safetensors({{"w", {3, 40}, w}}, DType::f16);
    for (const std::vector<std::uint8_t>* bytes : {&f32, &bf16, &f16}) {
        const SafetensorsView view = SafetensorsView::parse(bytes->data(), bytes->size());
        const Tensor3<float> y = project(x, weight_view(view, "w"));
        REQUIRE(y.shape() == std::array<std::size_t, 3>{1, 2, 3});
        for (std::size_t r = 0; r < 2; ++r)
            for (std::size_t j = 0; j < 3; ++j) {
                double expected = 0;
                for (std::size_t i = 0; i < 40; ++i) expected += double(x(0, r, i)) * double(w[j * 40 + i]);
                CHECK(y(0, r, j) == doctest::Approx(expected).epsilon(1e-6));  // the values are exact in every dtype
            }
    }
}

TEST_CASE("a split of the output rows gives the same bits") {
    const Model<float> model = random_model(small_config(), 5);
    const Checkpoint ck = checkpoint_of(model, DType::bf16);
    PretrainedModel serial = pretrained_from_hf(model.config, {&ck.view}, "ck", WeightPrecision::float32);
    PretrainedModel split = pretrained_from_hf(model.config, {&ck.view}, "ck", WeightPrecision::float32);
    // Pieces of 7 rows, run last to first: any order, any cut.
    split.parallel = [](std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
        for (std::size_t end = n; end > 0;) {
            const std::size_t begin = end > 7 ? end - 7 : 0;
            body(begin, end);
            end = begin;
        }
    };
    PretrainedCache a = empty_pretrained_cache(model.config, 1, DType::f32), b = empty_pretrained_cache(model.config, 1, DType::f32);
    CHECK(max_abs_diff(pretrained_forward(serial, a, ids_of(prompt)), pretrained_forward(split, b, ids_of(prompt))) == 0);
}

TEST_CASE("the in-place forward matches the reference forward on the same weights") {
    // Tolerance: both are float32 with different summation orders (32 partial sums
    // vs one running sum per output); measured differences on this model are below
    // 2e-6 with logits of magnitude ~3, so 1e-5 leaves five times that.
    const Model<float> model = random_model(small_config(), 7);
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
        CAPTURE(dtype_name(dtype));
        const Checkpoint ck = checkpoint_of(model, dtype);
        const Model<float> reference_model = model_from_hf(model.config, {&ck.view});  // weights rounded as stored
        ForwardCapture<float> reference_capture;
        const Tensor3<float> reference = full_forward(reference_model, ids_of(prompt), AttentionPath::grouped, &reference_capture);

        const PretrainedModel pretrained = pretrained_from_hf(model.config, {&ck.view}, "ck", WeightPrecision::float32);
        CHECK(pretrained.bytes_converted == 0);
        CHECK(pretrained.stored_dtypes == dtype_name(dtype));
        PretrainedCache cache = empty_pretrained_cache(model.config, 1, DType::f32);
        PassCapture capture;
        const Tensor3<float> logits = pretrained_forward(pretrained, cache, ids_of(prompt), &capture);
        CHECK(max_abs_diff(logits, reference) <= 1e-5);
        REQUIRE(capture.layers.size() == reference_capture.layers.size());
        for (std::size_t l = 0; l < capture.layers.size(); ++l) {
            const Tensor4<float>& p = capture.layers[l].probs;
            const Tensor4<float>& q = reference_capture.layers[l].probs;
            REQUIRE(p.shape() == q.shape());
            double worst = 0;
            for (std::size_t i = 0; i < p.size(); ++i) worst = std::max(worst, double(std::fabs(p.data()[i] - q.data()[i])));
            CHECK(worst <= 1e-6);
        }
        CHECK(cache.stored_bytes() == 2 * 2 * 2 * 8 * prompt.size() * 4);  // 2 x L x Hkv x dh x T x 4 bytes
    }
}

TEST_CASE("one token at a time through the cache gives the full pass's logits bit for bit") {
    const Model<float> model = random_model(small_config(), 9);
    const Checkpoint ck = checkpoint_of(model, DType::bf16);
    for (WeightPrecision precision : {WeightPrecision::float32, WeightPrecision::bfloat16}) {
        const PretrainedModel m = pretrained_from_hf(model.config, {&ck.view}, "ck", precision);
        const DType cache_dtype = precision == WeightPrecision::float32 ? DType::f32 : DType::bf16;
        PretrainedCache full_cache = empty_pretrained_cache(model.config, 1, cache_dtype);
        const Tensor3<float> full = pretrained_forward(m, full_cache, ids_of(prompt));
        PretrainedCache cache = empty_pretrained_cache(model.config, 1, cache_dtype);
        for (std::size_t t = 0; t < prompt.size(); ++t) {
            const Tensor3<float> step = pretrained_forward(m, cache, ids_of({prompt[t]}));
            for (std::size_t v = 0; v < step.size(); ++v) REQUIRE(step.data()[v] == full(0, t, v));
        }
        CHECK(cache.position == std::int64_t(prompt.size()));
        CHECK(cache.stored_bytes() == full_cache.stored_bytes());
        CHECK(cache.stored_bytes() == 2 * 2 * 2 * 8 * prompt.size() * dtype_size(cache_dtype));
    }
}

TEST_CASE("--dtype bfloat16 from a float32 file holds one bfloat16 copy, half the bytes") {
    const Model<float> model = random_model(small_config(), 11);
    const Checkpoint f32 = checkpoint_of(model, DType::f32), bf16 = checkpoint_of(model, DType::bf16);
    std::size_t released = 0;
    const PretrainedModel converted = pretrained_from_hf(model.config, {&f32.view}, "ck", WeightPrecision::bfloat16,
                                                         [&](const std::uint8_t*, std::size_t size) { released += size; });
    const PretrainedModel in_place = pretrained_from_hf(model.config, {&bf16.view}, "ck", WeightPrecision::bfloat16);
    CHECK(converted.bytes_in_place == 0);
    CHECK(converted.bytes_converted * 2 == released);
    CHECK(in_place.bytes_converted == 0);
    CHECK(in_place.bytes_in_place == converted.bytes_converted);
    // Rounding a float32 file to bfloat16 here gives what a bfloat16 file holds.
    PretrainedCache a = empty_pretrained_cache(model.config, 1, DType::bf16), b = empty_pretrained_cache(model.config, 1, DType::bf16);
    CHECK(max_abs_diff(pretrained_forward(converted, a, ids_of(prompt)), pretrained_forward(in_place, b, ids_of(prompt))) == 0);
}

TEST_CASE("the loader names a missing, misshapen, duplicated or unexpected tensor") {
    const Model<float> model = random_model(small_config(), 13);
    std::vector<NamedTensor> tensors = hf_tensors(model);
    auto bytes_without = [&](const std::string& name) {
        std::vector<NamedTensor> kept;
        for (const NamedTensor& t : tensors)
            if (t.name != name) kept.push_back(t);
        return write_safetensors(kept, DType::f32);
    };
    {
        const std::vector<std::uint8_t> bytes = bytes_without("lm_head.weight");
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        CHECK(load_error({&view}, model.config) == "ck: missing tensor 'lm_head.weight'");
        ModelConfig tied = model.config;  // the same file is a complete tied model
        tied.tie_embeddings = true;
        CHECK(load_error({&view}, tied).empty());
    }
    {
        std::vector<NamedTensor> changed = tensors;
        changed[7].shape = {changed[7].shape[1], changed[7].shape[0]};  // gate_proj of layer 0, stored [in, out]
        const std::vector<std::uint8_t> bytes = write_safetensors(changed, DType::f32);
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        CHECK(load_error({&view}, model.config) ==
              "ck: tensor 'model.layers.0.mlp.gate_proj.weight' has shape [64, 96], config implies [96, 64]");
    }
    {
        std::vector<NamedTensor> changed = tensors;
        changed[3].shape = {8, 64};  // k_proj of layer 0 with too few rows
        changed[3].values.resize(8 * 64);
        const std::vector<std::uint8_t> bytes = write_safetensors(changed, DType::f32);
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        CHECK(load_error({&view}, model.config) ==
              "ck: tensor 'model.layers.0.self_attn.k_proj.weight' has shape [8, 64], config implies [16, 64]");
    }
    {
        std::vector<NamedTensor> changed = tensors;
        changed.push_back({"model.layers.0.self_attn.q_proj.bias", {64}, std::vector<float>(64)});
        changed.push_back({"model.layers.1.self_attn.rotary_emb.inv_freq", {4}, std::vector<float>(4)});  // ignored
        const std::vector<std::uint8_t> bytes = write_safetensors(changed, DType::f32);
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        CHECK(load_error({&view}, model.config) ==
              "ck: unexpected tensor 'model.layers.0.self_attn.q_proj.bias' (not part of a untied Llama with this config)");
    }
    {
        const std::vector<std::uint8_t> all = write_safetensors(tensors, DType::f32);
        const std::vector<std::uint8_t> one = write_safetensors({tensors[0]}, DType::f32);
        const SafetensorsView a = SafetensorsView::parse(all.data(), all.size()), b = SafetensorsView::parse(one.data(), one.size());
        CHECK(load_error({&a, &b}, model.config) == "ck: tensor 'model.embed_tokens.weight' appears in more than one shard");
    }
}

TEST_CASE("config.json: fields the decoder cannot honour are errors, special ids are read") {
    const nlohmann::json good = hf_config_json(small_config(), DType::bf16);
    CHECK(config_from_hf_json(good).n_kv_heads == 2);
    auto error_of = [](nlohmann::json j) {
        try {
            config_from_hf_json(j);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    nlohmann::json j = good;
    j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    CHECK(error_of(j).find("rope_scaling") != std::string::npos);
    j = good;
    j["hidden_act"] = "gelu";
    CHECK(error_of(j).find("hidden_act") != std::string::npos);
    j = good;
    j["architectures"] = {"MistralForCausalLM"};
    CHECK(error_of(j).find("architectures") != std::string::npos);
    j = good;
    j["attention_bias"] = true;
    CHECK(error_of(j).find("attention_bias") != std::string::npos);
    j = good;
    j["tie_word_embeddings"] = "yes";
    CHECK(error_of(j).find("tie_word_embeddings") != std::string::npos);
    j = good;
    j["_name_or_path"] = 7;
    CHECK(error_of(j).find("_name_or_path") != std::string::npos);
    j = good;
    j["hidden_size"] = 1LL << 40;
    CHECK(error_of(j).find("hidden_size") != std::string::npos);
    j = good;
    j.erase("tie_word_embeddings");  // absent means untied, as in transformers' LlamaConfig
    CHECK_FALSE(config_from_hf_json(j).tie_embeddings);

    HfCheckpointInfo info = hf_checkpoint_info(good);
    CHECK(info.bos_token_id == 1);
    CHECK(info.eos_token_ids == std::vector<std::int32_t>{2});
    CHECK(info.torch_dtype == "bfloat16");
    CHECK(info.architectures == std::vector<std::string>{"LlamaForCausalLM"});
    j = good;
    j["eos_token_id"] = {2, 7};
    CHECK(hf_checkpoint_info(j).eos_token_ids == std::vector<std::int32_t>{2, 7});
    j["eos_token_id"] = "2";
    CHECK_THROWS_WITH_AS(hf_checkpoint_info(j), doctest::Contains("eos_token_id"), InputError);
    j = good;
    j["bos_token_id"] = -1;
    CHECK_THROWS_WITH_AS(hf_checkpoint_info(j), doctest::Contains("bos_token_id"), InputError);
}

TEST_CASE("the chat prompt is BOS, the user turn, EOS as one id, then the assistant turn") {
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(synthetic_tokenizer_json(1000));
    const std::vector<std::int32_t> plain = prompt_ids(tokenizer, "hello there", false, 1, 2);
    CHECK(plain.front() == 1);
    CHECK(tokenizer.decode(plain) == "hello there");
    const std::vector<std::int32_t> chat = prompt_ids(tokenizer, "hello", true, 1, 2);
    CHECK(chat.front() == 1);
    const auto eos = std::find(chat.begin() + 1, chat.end(), 2);
    REQUIRE(eos != chat.end());
    const std::vector<std::int32_t> user(chat.begin() + 1, eos), assistant(eos + 1, chat.end());
    CHECK(user == tokenizer.encode("<|user|>\nhello", false));
    CHECK(assistant == tokenizer.encode("\n<|assistant|>\n", false));
    CHECK(tokenizer.piece(assistant.front()).rfind("\xE2\x96\x81", 0) == 0);  // the segment after </s> starts with "▁"
}

TEST_CASE("the probe's trace has the trace fields, the probe fields, and passing checks") {
    const Model<float> model = random_model(small_config(), 17);
    const Checkpoint ck = checkpoint_of(model, DType::bf16);
    const PretrainedModel m = pretrained_from_hf(model.config, {&ck.view}, "ck", WeightPrecision::bfloat16);
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(synthetic_tokenizer_json(400));
    ProbeRequest request;
    request.ids = prompt;
    request.generate = 5;
    request.stop_ids = {};
    request.cache_dtype = DType::bf16;
    ProbeResult result = run_probe(m, tokenizer, request);
    const nlohmann::json trace = probe_result_to_json(result);

    const std::size_t T = prompt.size(), L = 2, H = 8, V = 400;
    CHECK(trace["kind"] == "attention-anatomy-trace");
    CHECK(trace["schema_version"] == trace_schema_version);
    CHECK(trace["tokens"] == nlohmann::json::array({prompt}));
    CHECK(trace["token_text"][0].size() == T);
    CHECK(trace["positions"].size() == T);
    REQUIRE(trace["layers"].size() == L);
    CHECK(trace["layers"][1]["probabilities"][0].size() == H);
    CHECK(trace["layers"][1]["probabilities"][0][0].size() == T);
    CHECK(trace["layers"][1]["probabilities"][0][0][T - 1].size() == T);
    CHECK(trace["logits"].size() == 1);
    CHECK(trace["logits"][0].size() == 1);
    CHECK(trace["logits"][0][0].size() == V);
    CHECK(trace["logits_positions"] == nlohmann::json::array({T - 1}));
    CHECK(trace["all_checks_passed"] == true);
    REQUIRE(trace["sink_stats"].size() == L);
    for (const nlohmann::json& layer : trace["sink_stats"]) {
        REQUIRE(layer.size() == H);
        for (const nlohmann::json& s : layer) CHECK((s.get<double>() >= 0 && s.get<double>() <= 1));
    }
    const nlohmann::json& probe = trace["probe"];
    CHECK(probe["cached_vs_full"]["max_abs_diff"] == 0.0);
    CHECK(probe["cached_vs_full"]["all_argmax_agree"] == true);
    CHECK(probe["top_next"].size() == 5);
    CHECK(probe["top_next"][0]["id"] == probe["cached_vs_full"]["argmax_full"][T - 1]);
    CHECK(probe["continuation"]["ids"].size() == 5);
    CHECK(probe["continuation"]["ids"][0] == probe["top_next"][0]["id"]);
    // The cache holds the prompt and the four continuation tokens fed back (the fifth is only predicted).
    CHECK(probe["cache"]["tokens"] == T + 4);
    CHECK(probe["cache"]["bytes_per_token"] == 2 * 2 * 2 * 8 * 2);
    CHECK(probe["cache"]["total_bytes"] == probe["cache"]["expected_total_bytes"]);
    CHECK(probe["shapes"]["layer"]["k_proj"] == nlohmann::json::array({16, 64}));
    CHECK(probe["shapes"]["lm_head"] == nlohmann::json::array({400, 64}));
    CHECK(probe["precision"]["kv_cache"] == "bfloat16");
    bool saw_scores = false;
    for (const nlohmann::json& step : probe["shapes"]["block"])
        if (step["name"] == "scores") saw_scores = step["shape"] == nlohmann::json::array({1, H, T, T});
    CHECK(saw_scores);

    // Stopping: an EOS list holding the first greedy token ends the continuation there.
    request.stop_ids = {probe["top_next"][0]["id"].get<std::int32_t>()};
    const nlohmann::json stopped = probe_result_to_json(run_probe(m, tokenizer, request));
    CHECK(stopped["probe"]["continuation"]["ids"].size() == 1);
    CHECK(stopped["probe"]["continuation"]["stopped_at_eos"] == true);

    // The trace is the result written out; the caller's fields appear only once set.
    CHECK(trace["probe"]["cached_vs_full"]["max_abs_diff"] == result.cached_vs_full.max_abs_diff);
    CHECK(trace["sink_stats"] == nlohmann::json(result.sinks.heads));
    CHECK(trace["probe"]["continuation"]["ids"] == nlohmann::json(result.continuation.ids));
    CHECK(trace["probe"]["precision"]["note"] == nlohmann::json(result.precision_note));
    for (const char* field : {"model", "prompt", "device", "software"}) CHECK_FALSE(trace["probe"].contains(field));
    CHECK_FALSE(trace.contains("weights"));
    CHECK_FALSE(trace["probe"]["timing"].contains("load_seconds"));
    ProbeCheckpoint& checkpoint = result.checkpoint.emplace();
    checkpoint.path = "ck";
    checkpoint.eos_token_ids = {2};
    ProbePrompt& given = result.prompt.emplace();
    given.from_ids = true;
    given.ids = "1,17,300";
    result.cpu = ProbeCpu{"a CPU", 8, 2};
    result.process = ProbeProcess{0.5, 1000, {1, 2, 3}, 2.5};
    const nlohmann::json filled = probe_result_to_json(result);
    CHECK(filled["weights"] == nlohmann::json{{"source", "checkpoint"}, {"path", "ck"}});
    CHECK(filled["probe"]["model"]["trained_positions"].is_null());
    CHECK(filled["probe"]["model"]["eos_token_ids"] == nlohmann::json::array({2}));
    CHECK(filled["probe"]["prompt"] == nlohmann::json{{"source", "ids"}, {"ids", "1,17,300"}});
    CHECK(filled["probe"]["device"] == nlohmann::json{{"kind", "cpu"}, {"name", "a CPU"}, {"hardware_threads", 8}, {"threads_used", 2}});
    CHECK(filled["probe"]["timing"]["load_average"] == nlohmann::json::array({1.0, 2.0, 3.0}));
    CHECK(filled["probe"]["timing"]["total_seconds"] == 2.5);
    // A GPU's facts are the device, whatever else is set.
    result.gpu = {{"kind", "cuda"}, {"index", 0}};
    CHECK(probe_result_to_json(result)["probe"]["device"] == result.gpu);
}
