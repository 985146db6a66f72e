#include "tokenizer_file.hpp"

#include <filesystem>

#include "files.hpp"
#include "tensor.hpp"

namespace anatomy::native {

LlamaTokenizer read_tokenizer_file(const std::string& path, int vocab_size) {
    if (path.size() < 5 || path.compare(path.size() - 5, 5, ".json") != 0) {
        const MappedFile file(path);
        return LlamaTokenizer::from_llama2c(file.data(), file.size(), vocab_size, path);
    }
    const nlohmann::json j = read_json_file(path);
    try {
        return LlamaTokenizer::from_json(j);
    } catch (const InputError& e) {
        throw InputError(path + ": " + e.what());
    }
}

LlamaTokenizer checkpoint_tokenizer(const std::string& model, const std::string& given, bool llama2c, int vocab_size) {
    if (llama2c && given.empty())
        throw InputError("a llama2.c checkpoint needs its tokenizer: --tokenizer FILE (e.g. tok512.bin, or tokenizer.bin for stories15M and up)");
    const std::string path = given.empty() ? (std::filesystem::path(model) / "tokenizer.json").string() : given;
    if (!std::filesystem::exists(path))
        throw InputError(given.empty() ? "checkpoint '" + model + "' has no tokenizer.json" : "tokenizer '" + path + "' does not exist");
    return read_tokenizer_file(path, vocab_size);
}

}  // namespace anatomy::native
