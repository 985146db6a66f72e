// What a model trains on: a text's characters as ids, its last tenth held out, and
// the batches of windows drawn from it.
//
// A window of context T is BOS followed by T - 1 characters of the text; its
// targets are those characters and the one after, so every position predicts the
// next character and the first predicts the text's opening character from BOS
// alone. BOS starts every window, so a sink has somewhere to form.
//
// A repeated window (a share of each batch, `repeat_fraction`) is BOS and a random
// string of 8 to 16 characters written over and over to fill the window: text in
// which the only way to predict is to find where the current character was seen
// before and read what came after it. That is the induction head's job, and plain
// text of this size rarely asks for it often enough for one to form (train/README
// of the shipped model gives the measurements).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../model/random.hpp"
#include "../tensor.hpp"
#include "../tokenizer/llama_tokenizer.hpp"

namespace anatomy {

struct TrainingText {
    std::vector<std::int32_t> train;    // the first 90% of the text's characters, as ids
    std::vector<std::int32_t> heldout;  // the last 10%
    std::int32_t bos_id = 0;
    std::int32_t first_id = 1;          // the first id that is a character (after BOS)
    std::int32_t vocab_size = 0;
};

// Splits `text` (encoded by `tokenizer`, a character vocabulary) for windows of
// `context` tokens. Throws InputError, with the sizes, when either part is shorter
// than one window.
TrainingText training_text(const LlamaTokenizer& tokenizer, std::string_view text, std::size_t context);

struct BatchShape {
    std::size_t windows = 64;      // B
    std::size_t context = 64;      // T
    double repeat_fraction = 0.0;  // the share of windows that are a repeated random string
};

struct Batch {
    TokenIds tokens;   // [B, T]
    TokenIds targets;  // [B, T]
};

// B windows: the first round(repeat_fraction * B) repeated random strings, the rest
// at offsets drawn uniformly from `ids`. Every draw comes from `random`, so a seed
// gives the same batches natively and in wasm.
Batch draw_batch(const TrainingText& text, const std::vector<std::int32_t>& ids, const BatchShape& shape, SplitMix64& random);

// Up to `count` windows of ordinary held-out text at evenly spaced offsets (no
// randomness): the held-out loss is the model's loss on these.
Batch heldout_windows(const TrainingText& text, std::size_t context, std::size_t count);

}  // namespace anatomy
