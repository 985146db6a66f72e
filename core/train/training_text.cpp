#include "training_text.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace anatomy {
namespace {

// One window from `characters` (at least T of them): tokens BOS, c[0 .. T-2]; targets c[0 .. T-1].
void write_window(std::int32_t bos_id, const std::int32_t* characters, std::size_t T, Batch& batch, std::size_t b) {
    batch.tokens(b, 0) = bos_id;
    for (std::size_t t = 1; t < T; ++t) batch.tokens(b, t) = characters[t - 1];
    for (std::size_t t = 0; t < T; ++t) batch.targets(b, t) = characters[t];
}

std::size_t below(SplitMix64& random, std::size_t n) { return std::size_t(random.next_u64() % n); }

}  // namespace

TrainingText training_text(const LlamaTokenizer& tokenizer, std::string_view text, std::size_t context) {
    TrainingText out;
    out.bos_id = tokenizer.bos_id();
    out.first_id = out.bos_id + 1;
    out.vocab_size = std::int32_t(tokenizer.vocab_size());
    const std::vector<std::int32_t> ids = tokenizer.encode(text, false);
    const std::size_t split = ids.size() - ids.size() / 10;
    out.train.assign(ids.begin(), ids.begin() + std::ptrdiff_t(split));
    out.heldout.assign(ids.begin() + std::ptrdiff_t(split), ids.end());
    if (out.heldout.size() < context)
        throw InputError("the text has " + std::to_string(ids.size()) + " characters: its held-out last tenth (" +
                         std::to_string(out.heldout.size()) + ") is shorter than one window of " + std::to_string(context) +
                         " (give a longer text or a smaller --context)");
    return out;
}

Batch draw_batch(const TrainingText& text, const std::vector<std::int32_t>& ids, const BatchShape& shape, SplitMix64& random) {
    const std::size_t B = shape.windows, T = shape.context;
    if (ids.size() < T) throw InputError("draw_batch: fewer characters than one window");
    Batch batch{TokenIds({B, T}), TokenIds({B, T})};
    const std::size_t repeated = std::size_t(std::lround(shape.repeat_fraction * double(B)));
    const std::size_t characters = std::size_t(text.vocab_size - text.first_id);
    std::vector<std::int32_t> pattern(std::max<std::size_t>(T, 16));
    for (std::size_t b = 0; b < B; ++b) {
        if (b < repeated) {
            const std::size_t length = 8 + below(random, 9);  // 8 .. 16
            for (std::size_t i = 0; i < length; ++i) pattern[i] = text.first_id + std::int32_t(below(random, characters));
            for (std::size_t i = length; i < T; ++i) pattern[i] = pattern[i - length];
            write_window(text.bos_id, pattern.data(), T, batch, b);
        } else {
            write_window(text.bos_id, ids.data() + below(random, ids.size() - T + 1), T, batch, b);
        }
    }
    return batch;
}

Batch heldout_windows(const TrainingText& text, std::size_t context, std::size_t count) {
    const std::size_t T = context, starts = text.heldout.size() - T + 1;
    const std::size_t B = std::min(count, starts);
    Batch batch{TokenIds({B, T}), TokenIds({B, T})};
    for (std::size_t b = 0; b < B; ++b) write_window(text.bos_id, text.heldout.data() + b * starts / B, T, batch, b);
    return batch;
}

}  // namespace anatomy
