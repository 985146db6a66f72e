#include "token_batch.hpp"

#include <string>

namespace anatomy {

TokenIds make_batch(const std::vector<std::int32_t>& ids, int batch, int vocab_size) {
    const std::string vocab_range = "[0, " + std::to_string(vocab_size - 1) + "]";
    if (ids.empty()) throw InputError("at least one token id is required");
    for (std::size_t t = 0; t < ids.size(); ++t) {
        if (ids[t] < 0)
            throw InputError("token id " + std::to_string(ids[t]) + " (position " + std::to_string(t) +
                             ") is negative; ids run from 0 to " + std::to_string(vocab_size - 1));
        if (ids[t] >= vocab_size)
            throw InputError("token id " + std::to_string(ids[t]) + " (position " + std::to_string(t) +
                             ") is outside the vocabulary " + vocab_range);
    }
    if (batch < 1 || batch > max_batch)
        throw InputError("batch must be between 1 and " + std::to_string(max_batch) + " sequences, got " +
                         std::to_string(batch));

    TokenIds tokens({std::size_t(batch), ids.size()});
    for (int b = 0; b < batch; ++b)
        for (std::size_t t = 0; t < ids.size(); ++t)
            tokens(std::size_t(b), t) = std::int32_t((ids[t] + 7LL * b + std::int64_t(t) * b) % vocab_size);
    return tokens;
}

}  // namespace anatomy
