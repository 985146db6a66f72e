#include "page_checkpoint.hpp"

#include <string>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/llama2c.hpp"
#include "checkpoint/llama_views.hpp"
#include "checkpoint/model_from_views.hpp"
#include "checkpoint/safetensors.hpp"
#include "checkpoint/tensor_views.hpp"
#include "json_args.hpp"

namespace anatomy::wasm {

std::vector<std::uint8_t> heap_copy(const emscripten::val& array) {
    if (!array.instanceof(emscripten::val::global("Uint8Array"))) throw InputError("expected the file's bytes as a Uint8Array");
    std::vector<std::uint8_t> bytes(array["length"].as<std::size_t>());
    emscripten::val(emscripten::typed_memory_view(bytes.size(), bytes.data())).call<void>("set", array);
    return bytes;
}

PageCheckpoint checkpoint_from_page(const emscripten::val& config_js, const emscripten::val& safetensors,
                                    const emscripten::val& header, const emscripten::val& tokenizer_js) {
    const json config_file = json_from_js(config_js);
    const ModelConfig config = config_from_hf_json(config_file);
    const std::vector<std::uint8_t> bytes = heap_copy(safetensors);
    const SafetensorsView file = SafetensorsView::from_header(json_from_js(header), bytes.data(), bytes.size(), "model.safetensors");
    PageCheckpoint loaded{model_from_views(llama_views(config, safetensors_views({&file}), "model.safetensors")),
                          LlamaTokenizer::from_json(json_from_js(tokenizer_js)), config_file.value("max_position_embeddings", 2048)};
    if (loaded.tokenizer.bos_id() < 0) throw InputError("tokenizer.json has no <s>: not a vocabulary attn train wrote");
    if (loaded.tokenizer.vocab_size() != std::size_t(config.vocab_size))
        throw InputError("tokenizer.json has " + std::to_string(loaded.tokenizer.vocab_size()) + " pieces, config.json " +
                         std::to_string(config.vocab_size));
    return loaded;
}

PageCheckpoint llama2c_from_page(const emscripten::val& model_bytes, const emscripten::val& tokenizer_bytes) {
    const std::vector<std::uint8_t> file = heap_copy(model_bytes);
    const Llama2cCheckpoint checkpoint = llama2c_checkpoint(file.data(), file.size(), "the model file");
    const std::vector<std::uint8_t> tokenizer_file = heap_copy(tokenizer_bytes);
    return {model_from_views(llama_views(checkpoint.config, checkpoint.tensors, "the model file")),
            LlamaTokenizer::from_llama2c(tokenizer_file.data(), tokenizer_file.size(), checkpoint.config.vocab_size,
                                         "the tokenizer file"),
            int(checkpoint.seq_len)};
}

}  // namespace anatomy::wasm
