// libFuzzer target: the readers a downloaded checkpoint goes through. The first
// byte picks the reader; the rest is the file:
//   0  safetensors: SafetensorsView::parse, then every tensor read as floats and,
//      where it is a matrix or vector, row by row in place (WeightView::row)
//   1  config.json: config_from_hf_json and hf_checkpoint_info
//   2  tokenizer.json: LlamaTokenizer::from_json, then encode, decode and display
//   3  model.safetensors for a fixed micro config: pretrained_from_hf in float32
//      and bfloat16, then one forward pass of two tokens
//   4  a learner's tensors for attn diff: read_learner_tensors (.npz or safetensors)
// A malformed file must end in InputError: any other exception, a crash, a
// sanitizer report, a hang (-timeout) or runaway memory (-rss_limit_mb) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "diff/learner_file.hpp"
#include "fuzz_config.hpp"
#include "pretrained/pretrained_forward.hpp"
#include "tokenizer/llama_tokenizer.hpp"

using namespace anatomy;

namespace {

void read_safetensors(const std::uint8_t* data, std::size_t size) {
    const SafetensorsView view = SafetensorsView::parse(data, size, "fuzz");
    std::vector<float> buffer;
    for (const auto& [name, entry] : view.tensors()) {
        const std::vector<float> values = view.read_floats(name);
        if (values.size() != entry.elements()) __builtin_trap();
        if (entry.shape.empty() || entry.shape.size() > 2 || entry.elements() == 0) continue;
        const WeightView w = weight_view(view, name);
        buffer.resize(w.cols);
        for (std::size_t j = 0; j < w.rows; ++j) {
            const float* row = w.row(j, buffer.data());
            for (std::size_t i = 0; i < w.cols; ++i)  // the same values read_floats gave (NaN payloads aside)
                if (row[i] != values[j * w.cols + i] && row[i] == row[i]) __builtin_trap();
        }
    }
}

void read_config(const std::uint8_t* data, std::size_t size) {
    const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return;
    hf_checkpoint_info(j);
    config_from_hf_json(j);
}

void read_tokenizer(const std::uint8_t* data, std::size_t size) {
    const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return;
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(j);
    for (const char* text : {"The cache keeps the keys.", "naïve 東京 🙂\n\t", "</s><s> <unk>"}) {
        const std::vector<std::int32_t> ids = tokenizer.encode(text);
        for (std::int32_t id : ids)
            if (id < 0 || std::size_t(id) >= tokenizer.vocab_size()) __builtin_trap();
        tokenizer.decode(ids);
    }
    for (std::size_t id = 0; id < tokenizer.vocab_size() && id < 4096; ++id) tokenizer.display(std::int32_t(id));
}

void load_model(const std::uint8_t* data, std::size_t size) {
    const SafetensorsView view = SafetensorsView::parse(data, size, "fuzz");
    for (WeightPrecision precision : {WeightPrecision::float32, WeightPrecision::bfloat16}) {
        const PretrainedModel model = pretrained_from_hf(fuzz_micro_config(), {&view}, "fuzz", precision);
        PretrainedCache cache = empty_pretrained_cache(model.config, 1, precision == WeightPrecision::float32 ? DType::f32 : DType::bf16);
        TokenIds tokens({1, 2});
        tokens(0, 0) = 1;
        tokens(0, 1) = 2;
        pretrained_forward(model, cache, tokens);
    }
}

void read_learner_file(const std::uint8_t* data, std::size_t size) {
    for (const auto& [name, tensor] : read_learner_tensors(data, size, "fuzz")) {
        std::size_t n = 1;
        for (const std::size_t d : tensor.shape) n *= d;
        if (tensor.values.size() != n) __builtin_trap();  // every value the shape promises, read
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    try {
        switch (data[0] % 5) {
            case 0: read_safetensors(data + 1, size - 1); break;
            case 1: read_config(data + 1, size - 1); break;
            case 2: read_tokenizer(data + 1, size - 1); break;
            case 3: load_model(data + 1, size - 1); break;
            case 4: read_learner_file(data + 1, size - 1); break;
        }
    } catch (const InputError&) {
        // The expected end of a malformed file: a message for the user.
    }
    return 0;
}
