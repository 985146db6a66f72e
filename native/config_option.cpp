#include "config_option.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "files.hpp"
#include "json_input.hpp"
#include "tensor.hpp"

namespace anatomy::native {

std::string preset_names_text() {
    std::string known;
    for (const std::string& name : preset_names()) known += (known.empty() ? "" : ", ") + name;
    return known;
}

ModelConfig preset_option(const std::string& name) {
    const std::optional<ModelConfig> config = preset_config(name);
    if (!config) throw InputError("unknown --config '" + name + "' (known: " + preset_names_text() + ")");
    return *config;
}

nlohmann::json config_keys_option(const std::string& text) {
    const std::size_t first = text.find_first_not_of(" \t\n");
    if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) return parse_json(text, "--config");
    struct stat info {};
    if (::stat(text.c_str(), &info) != 0 && (errno == ENOENT || errno == ENOTDIR))
        throw InputError("--config takes config.json keys as a JSON object, e.g. '{\"hidden_size\": 64}', or a file holding one; '" +
                         text + "' is neither (no file has that name)");
    return read_json_file(text);
}

}  // namespace anatomy::native
