// libFuzzer target: the readers a downloaded checkpoint goes through. The first
// byte picks the reader; the rest is the file:
//   0  safetensors: SafetensorsView::parse, then every tensor read as floats and,
//      where it is a matrix or vector, row by row in place (WeightView::row)
//   1  config.json: config_from_hf_json and hf_checkpoint_info
//   2  tokenizer.json: LlamaTokenizer::from_json, then encode, decode and display
//   3  model.safetensors for a fixed micro config: pretrained_from_hf in float32
//      and bfloat16, then one forward pass of two tokens
//   4  a learner's tensors for attn diff: read_learner_tensors (.npz or safetensors)
//   5  a llama2.c tokenizer.bin: LlamaTokenizer::from_llama2c for a vocabulary of the
//      size its second byte picks, then encode, decode and display
//   6  a llama2.c model.bin: llama2c_checkpoint, then the model widened to float32 and
//      one forward pass of two tokens
// A malformed file must end in InputError: any other exception, a crash, a
// sanitizer report, a hang (-timeout) or runaway memory (-rss_limit_mb) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/llama2c.hpp"
#include "checkpoint/model_from_views.hpp"
#include "diff/learner_file.hpp"
#include "fuzz_config.hpp"
#include "pretrained/pretrained_forward.hpp"
#include "model/forward.hpp"
#include "tokenizer/llama_tokenizer.hpp"
#include "tokenizer/utf8.hpp"

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

// Encodes, decodes and displays with a tokenizer that read without complaint.
void use_tokenizer(const LlamaTokenizer& tokenizer) {
    for (const char* text : {"The cache keeps the keys.", "naïve 東京 🙂\n\t", "</s><s> <unk>"}) {
        std::vector<std::int32_t> ids;
        try {
            ids = tokenizer.encode(text);
        } catch (const InputError&) {
            continue;  // a vocabulary that cannot spell the text, or has no <s>
        }
        for (std::int32_t id : ids)
            if (id < 0 || std::size_t(id) >= tokenizer.vocab_size()) __builtin_trap();
        if (first_invalid_utf8(tokenizer.decode(ids))) __builtin_trap();  // decode gives valid UTF-8, always
    }
    for (std::size_t id = 0; id < tokenizer.vocab_size() && id < 4096; ++id) tokenizer.display(std::int32_t(id));
}

void read_tokenizer(const std::uint8_t* data, std::size_t size) {
    const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return;
    use_tokenizer(LlamaTokenizer::from_json(j));
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

void read_llama2c_tokenizer(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return;
    const int vocab_size = 1 + data[0] * 4;  // 1 to 1021 pieces
    use_tokenizer(LlamaTokenizer::from_llama2c(data + 1, size - 1, vocab_size, "fuzz"));
}

void load_llama2c_model(const std::uint8_t* data, std::size_t size) {
    const Llama2cCheckpoint checkpoint = llama2c_checkpoint(data, size, "fuzz");
    // A header may promise a model far larger than the fuzzer's memory: only small ones are run.
    if (checkpoint.config.parameter_count() > 4e6) return;
    const Model<float> model = model_from_views(llama_views(checkpoint.config, checkpoint.tensors, "fuzz"));
    KVCache<float> cache = empty_cache<float>(model.config, 1);
    TokenIds tokens({1, 2});
    tokens(0, 0) = 0;
    tokens(0, 1) = std::int32_t(model.config.vocab_size - 1);
    forward(model, cache, tokens);
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
        switch (data[0] % 7) {
            case 0: read_safetensors(data + 1, size - 1); break;
            case 1: read_config(data + 1, size - 1); break;
            case 2: read_tokenizer(data + 1, size - 1); break;
            case 3: load_model(data + 1, size - 1); break;
            case 4: read_learner_file(data + 1, size - 1); break;
            case 5: read_llama2c_tokenizer(data + 1, size - 1); break;
            case 6: load_llama2c_model(data + 1, size - 1); break;
        }
    } catch (const InputError&) {
        // The expected end of a malformed file: a message for the user.
    }
    return 0;
}
