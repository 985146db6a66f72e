// What training reads and how a step is cut up: the character vocabulary
// (tokenizer/character_vocabulary.hpp) and the text-as-is tokenizer it gives, the
// windows and batches (train/training_text.hpp), and training_step's shards
// (train/train_steps.hpp), which must give the same bits on any number of threads
// and the gradient of the whole batch.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/backward.hpp"
#include "model/random.hpp"
#include "tokenizer/character_vocabulary.hpp"
#include "train/train_steps.hpp"
#include "train/trainer.hpp"
#include "train/training_text.hpp"
#include "test_helpers.hpp"

using namespace anatomy;

namespace {

LlamaTokenizer characters_of(const std::string& text) { return LlamaTokenizer::from_json(character_tokenizer_json(text)); }

// A ParallelFor that runs each index on a thread of its own (the most threads a cut can have).
void thread_per_index(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i) threads.emplace_back(body, i, i + 1);
    for (std::thread& t : threads) t.join();
}

std::string repeated(const std::string& piece, std::size_t times) {
    std::string out;
    for (std::size_t i = 0; i < times; ++i) out += piece;
    return out;
}

}  // namespace

TEST_CASE("the character vocabulary: BOS at 0, then the distinct characters in code-point order") {
    const std::string text = "b\xC3\xA9" "a b\n\xE2\x96\x81";  // b é a space b newline ▁
    const nlohmann::json j = character_tokenizer_json(text);
    const nlohmann::json& vocab = j["model"]["vocab"];
    CHECK(vocab.size() == 7);
    CHECK(vocab["<s>"] == 0);
    CHECK(vocab["\n"] == 1);
    CHECK(vocab[" "] == 2);
    CHECK(vocab["a"] == 3);
    CHECK(vocab["b"] == 4);
    CHECK(vocab["\xC3\xA9"] == 5);
    CHECK(vocab["\xE2\x96\x81"] == 6);
    CHECK(j["normalizer"].is_null());
    CHECK(j["model"]["merges"].empty());

    // Read back, the text is taken as it is: no leading space, spaces stay spaces,
    // "▁" is an ordinary character, BOS only when asked, and decode inverts encode.
    const LlamaTokenizer t = LlamaTokenizer::from_json(j);
    CHECK(t.bos_id() == 0);
    CHECK(t.eos_id() == -1);
    CHECK(t.unk_id() == -1);
    CHECK(t.encode("a b") == std::vector<std::int32_t>{0, 3, 2, 4});
    CHECK(t.encode("a b", false) == std::vector<std::int32_t>{3, 2, 4});
    CHECK(t.decode(t.encode(text)) == text);
    CHECK(t.display(1) == "\n");
    CHECK(t.display(2) == " ");
    CHECK_THROWS_WITH_AS(t.encode("abc"), doctest::Contains("'c'"), InputError);
}

TEST_CASE("the character vocabulary refuses what is not text") {
    CHECK_THROWS_WITH_AS(character_tokenizer_json(""), doctest::Contains("empty"), InputError);
    CHECK_THROWS_WITH_AS(character_tokenizer_json(std::string("ab\0c", 4)), doctest::Contains("offset 2"), InputError);
    CHECK_THROWS_WITH_AS(character_tokenizer_json("caf\xE9!"), doctest::Contains("offset 3"), InputError);      // Latin-1 é
    CHECK_THROWS_WITH_AS(character_tokenizer_json("\xC0\xAF"), doctest::Contains("not UTF-8"), InputError);      // overlong
    CHECK_THROWS_WITH_AS(character_tokenizer_json("\xED\xA0\x80"), doctest::Contains("not UTF-8"), InputError);  // surrogate
    CHECK_THROWS_WITH_AS(character_tokenizer_json("ok\xE2\x96"), doctest::Contains("offset 2"), InputError);     // cut short
    CHECK_NOTHROW(character_tokenizer_json("\xF0\x9F\x99\x82 \xE2\x82\xAC"));                                     // 🙂 €
}

TEST_CASE("windows start with BOS and predict the next character; repeated windows repeat their string") {
    const std::string text = repeated("to be or not to be, that is the question\n", 40);  // 1,640 characters
    const LlamaTokenizer t = characters_of(text);
    const TrainingText data = training_text(t, text, 16);
    CHECK(data.train.size() + data.heldout.size() == text.size());
    CHECK(data.heldout.size() == text.size() / 10);
    CHECK(data.first_id == 1);

    SplitMix64 random(7);
    const Batch batch = draw_batch(data, data.train, BatchShape{8, 16, 0.25}, random);
    for (std::size_t b = 0; b < 8; ++b) {
        CHECK(batch.tokens(b, 0) == 0);
        for (std::size_t t = 1; t < 16; ++t) CHECK(batch.tokens(b, t) == batch.targets(b, t - 1));
    }
    // The first round(0.25 * 8) = 2 windows: a string of 8 to 16 characters, written over and over.
    for (std::size_t b = 0; b < 2; ++b) {
        std::size_t period = 8;
        while (period <= 16) {
            bool repeats = true;
            for (std::size_t t = period; t < 16; ++t) repeats = repeats && batch.targets(b, t) == batch.targets(b, t - period);
            if (repeats) break;
            ++period;
        }
        CHECK(period <= 16);
    }
    // The others are the text itself: their targets are a stretch of the training part.
    const std::string window = t.decode(std::vector<std::int32_t>(&batch.targets(5, 0), &batch.targets(5, 0) + 16));
    CHECK(text.find(window) != std::string::npos);

    // The same seed, the same batch; held-out windows are fixed and from the held-out part.
    SplitMix64 again(7);
    CHECK(draw_batch(data, data.train, BatchShape{8, 16, 0.25}, again).tokens == batch.tokens);
    const Batch heldout = heldout_windows(data, 16, 4);
    CHECK(heldout.tokens.shape(0) == 4);
    CHECK(std::vector<std::int32_t>(&heldout.targets(0, 0), &heldout.targets(0, 0) + 16) ==
          std::vector<std::int32_t>(data.heldout.begin(), data.heldout.begin() + 16));

    CHECK_THROWS_WITH_AS(training_text(t, text.substr(0, 100), 16), doctest::Contains("shorter than one window"), InputError);
}

TEST_CASE("a step's shards give the same bits on any number of threads, and the whole batch's gradient") {
    const std::string text = repeated("the quick brown fox jumps over the lazy dog. ", 60);
    const LlamaTokenizer t = characters_of(text);
    const TrainingText data = training_text(t, text, 24);
    TrainingSettings settings;
    settings.batch = BatchShape{20, 24, 0.2};  // 3 shards: 8, 8 and 4 windows
    Trainer one(tiny_config(), data, settings), many(tiny_config(), data, settings);
    for (int step = 0; step < 3; ++step) {
        const StepResult a = one.step(), b = many.step(thread_per_index);
        CHECK(a.loss == b.loss);
        CHECK(a.gradient_norm == b.gradient_norm);
    }
    CHECK(weights_hash(one.model().weights) == weights_hash(many.model().weights));

    // The shards' weighted sum is the gradient of the batch as one: the same in
    // double precision to rounding (a broken weighting, e.g. equal shares for the
    // short last shard, is off by percents).
    SplitMix64 random(3);
    const Batch batch = draw_batch(data, data.train, settings.batch, random);
    Model<double> model = cast_model<double>(one.model());
    ModelWeights<double> whole = zero_gradients(model);
    const double whole_loss = loss_and_gradients(model, batch.tokens, batch.targets, whole);
    Model<float> stepped = one.model();
    AdamWState<float> state = adamw_state(stepped);
    AdamWSettings no_clipping;
    no_clipping.clip_norm = 0;
    const StepResult sharded = training_step(stepped, state, batch.tokens, batch.targets, no_clipping, 0.0);
    CHECK(sharded.loss == doctest::Approx(whole_loss).epsilon(1e-5));
    CHECK(sharded.gradient_norm == doctest::Approx(gradient_norm(whole)).epsilon(1e-5));
}

// Under the sanitizers, the sharded step runs on one thread and on one per shard in the case
// above, and a model with sinks trains in tests/cli/test_train.py (test_attention_sinks_train_and_verify_and_probe_read_them).
TEST_CASE("a model with attention sinks trains: the sink logits move, the shards agree on any number of threads" *
          doctest::skip(test::under_sanitizer)) {
    const std::string text = repeated("the quick brown fox jumps over the lazy dog. ", 60);
    const TrainingText data = training_text(characters_of(text), text, 24);
    TrainingSettings settings;
    settings.batch = BatchShape{20, 24, 0.2};
    settings.steps = 40;
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    Trainer one(config, data, settings), many(config, data, settings);
    const Vector<float> before = one.model().weights.layers[1].sinks;
    const double first = one.heldout_loss();
    for (int step = 0; step < 40; ++step) {
        const StepResult a = one.step(), b = many.step(thread_per_index);
        REQUIRE(a.loss == b.loss);
        REQUIRE(std::isfinite(a.loss));
    }
    CHECK(weights_hash(one.model().weights) == weights_hash(many.model().weights));
    CHECK(one.heldout_loss() < first - 0.5);
    REQUIRE(one.model().weights.layers[1].sinks.size() == 4);
    double moved = 0;
    for (std::size_t h = 0; h < 4; ++h) moved = std::max(moved, double(std::abs(one.model().weights.layers[1].sinks(h) - before(h))));
    CHECK(moved > 1e-3);  // AdamW stepped them (a gradient left at zero would leave them as drawn)
}

TEST_CASE("a trainer refuses settings that cannot train") {
    const std::string text = repeated("abcdefgh ", 100);
    const TrainingText data = training_text(characters_of(text), text, 16);
    TrainingSettings s;
    s.batch = BatchShape{4, 16, 0};
    s.steps = 0;
    CHECK_THROWS_WITH_AS(Trainer(tiny_config(), data, s), doctest::Contains("at least 1 step"), InputError);
    s.steps = 10;
    s.batch.repeat_fraction = 1.5;
    CHECK_THROWS_WITH_AS(Trainer(tiny_config(), data, s), doctest::Contains("repeat fraction"), InputError);
    s.batch.repeat_fraction = 0;
    s.peak_rate = 0;
    CHECK_THROWS_WITH_AS(Trainer(tiny_config(), data, s), doctest::Contains("learning rate"), InputError);
}
