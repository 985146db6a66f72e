#include "token_list.hpp"

#include <charconv>

namespace anatomy::native {

std::vector<std::int32_t> parse_token_list(const std::string& text, int vocab_size) {
    std::vector<std::int32_t> ids;
    if (text.find_first_not_of(" \t") == std::string::npos) throw InputError("--tokens needs at least one token id");
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t comma = std::min(text.find(',', begin), text.size());
        std::string item = text.substr(begin, comma - begin);
        const std::size_t first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
        item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
        if (item.empty()) throw InputError("--tokens has an empty entry at position " + std::to_string(ids.size()) + " in '" + text + "'");
        long long value = 0;
        const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (error == std::errc::result_out_of_range || (error == std::errc() && end == item.data() + item.size() && value > 1'000'000'000LL))
            throw InputError("token id " + item + " is outside the vocabulary [0, " + std::to_string(vocab_size - 1) + "]");
        if (error != std::errc() || end != item.data() + item.size())
            throw InputError("'" + item + "' in --tokens is not an integer token id");
        if (value < 0) throw InputError("token id " + item + " is negative; ids run from 0 to " + std::to_string(vocab_size - 1));
        if (value >= vocab_size)
            throw InputError("token id " + item + " is outside the vocabulary [0, " + std::to_string(vocab_size - 1) + "]");
        ids.push_back(std::int32_t(value));
        begin = comma + 1;
    }
    return ids;
}

}  // namespace anatomy::native
