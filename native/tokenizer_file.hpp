// A tokenizer read from its file, for every command that takes one: a Hugging Face
// tokenizer.json (by its .json name), or else a llama2.c tokenizer.bin.
#pragma once

#include <string>

#include "tokenizer/llama_tokenizer.hpp"

namespace anatomy::native {

// A tokenizer.bin is read for a model of `vocab_size` ids (0: without a model, every
// piece the file holds). Throws InputError naming the file and what is wrong.
LlamaTokenizer read_tokenizer_file(const std::string& path, int vocab_size = 0);

// A checkpoint's tokenizer: `given` when not empty (a --tokenizer option), else the
// folder `model`'s tokenizer.json; a llama2.c checkpoint (`llama2c`) has no folder, so it
// needs `given`. Throws InputError saying which file is missing and what to pass.
LlamaTokenizer checkpoint_tokenizer(const std::string& model, const std::string& given, bool llama2c, int vocab_size);

}  // namespace anatomy::native
