#include "tokenizer_file.hpp"

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

}  // namespace anatomy::native
