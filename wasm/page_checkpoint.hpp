// A trained checkpoint the page hands over: its files as bytes (copied into the wasm
// heap) and, for a Hugging Face folder, its JSON files already parsed by the page
// (the modules that load one carry no JSON parser). Shared by the explorer's
// CheckpointSession, the trained-model widget and the StreamingLLM widget.
#pragma once

#include <cstdint>
#include <vector>

#include <emscripten/val.h>

#include "model/weights.hpp"
#include "tokenizer/llama_tokenizer.hpp"

namespace anatomy::wasm {

// A JavaScript Uint8Array's bytes, copied into the wasm heap by one TypedArray.set
// (embind's element-by-element conversion took longer than a model's first pass).
// Throws InputError for anything else.
std::vector<std::uint8_t> heap_copy(const emscripten::val& array);

struct PageCheckpoint {
    Model<float> model;
    LlamaTokenizer tokenizer;
    int context = 0;  // the positions it was trained on: max_position_embeddings (2048 when absent), or llama2c's seq_len
};

// What `attn train` writes: config.json (an object), model.safetensors (a Uint8Array)
// with its header (the parsed JSON at its start), tokenizer.json (an object) holding a
// character vocabulary with <s>. Throws InputError for anything that does not fit.
PageCheckpoint checkpoint_from_page(const emscripten::val& config, const emscripten::val& safetensors,
                                    const emscripten::val& header, const emscripten::val& tokenizer);

// A llama2.c model.bin and its tokenizer.bin (Uint8Arrays), read as attn reads them.
PageCheckpoint llama2c_from_page(const emscripten::val& model_bytes, const emscripten::val& tokenizer_bytes);

}  // namespace anatomy::wasm
