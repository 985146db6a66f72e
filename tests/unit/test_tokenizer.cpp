// The Llama tokenizer on a small hand-made vocabulary whose answers can be worked out by hand.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tensor.hpp"
#include "tokenizer/llama_tokenizer.hpp"

using namespace anatomy;

namespace {

// Vocabulary: specials, the 256 byte tokens, single characters, then merged pieces.
LlamaTokenizer small_tokenizer() {
    nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
    int next = 3;
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        vocab[name] = next++;
    }
    for (const char* piece : {"\xE2\x96\x81", "a", "b", "c", "ab", "\xE2\x96\x81" "ab", "bc", "abc", "\xC3\xA9"}) vocab[piece] = next++;
    // Priority: "a b" first, then "▁ ab", then "b c", then "ab c".
    nlohmann::json merges = {"a b", "\xE2\x96\x81 ab", "b c", "ab c"};
    return LlamaTokenizer::from_json({{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}});
}

std::vector<std::string> pieces(const LlamaTokenizer& t, const std::vector<std::int32_t>& ids) {
    std::vector<std::string> out;
    for (std::int32_t id : ids) out.push_back(t.piece(id));
    return out;
}

}  // namespace

TEST_CASE("merges apply in priority order, with BOS and the space marker") {
    const LlamaTokenizer t = small_tokenizer();
    // " abc" -> ▁ a b c -> (a b first) ▁ ab c -> (▁ ab next) ▁ab c: "ab c" never gets its turn.
    CHECK(pieces(t, t.encode("abc")) == std::vector<std::string>{"<s>", "\xE2\x96\x81" "ab", "c"});
    CHECK(pieces(t, t.encode("bc", false)) == std::vector<std::string>{"\xE2\x96\x81", "bc"});
    CHECK(t.encode("").empty());  // no BOS for an empty text
}

TEST_CASE("characters outside the vocabulary fall back to their UTF-8 bytes") {
    const LlamaTokenizer t = small_tokenizer();
    // "é" is in the vocabulary; "ü" (C3 BC) is not and becomes two byte tokens.
    CHECK(pieces(t, t.encode("\xC3\xA9", false)) == std::vector<std::string>{"\xE2\x96\x81", "\xC3\xA9"});
    CHECK(pieces(t, t.encode("\xC3\xBC", false)) == std::vector<std::string>{"\xE2\x96\x81", "<0xC3>", "<0xBC>"});
    CHECK(t.decode(t.encode("a\xC3\xBC b")) == "a\xC3\xBC b");
    CHECK(t.display(t.encode("\n", false)[1]) == "\n");
}

TEST_CASE("decode undoes encode and skips special tokens") {
    const LlamaTokenizer t = small_tokenizer();
    for (const char* text : {"abc", "  ab  c ", "cab\tba", "\xF0\x9F\x98\x80 emoji"}) CHECK(t.decode(t.encode(text)) == text);
    CHECK(t.bos_id() == 1);
    CHECK(t.eos_id() == 2);
    CHECK_THROWS_AS(t.decode({100000}), InputError);
}

TEST_CASE("a byte piece is exactly <0xHH>: a piece that only looks like one is text") {
    CHECK(byte_piece(0) == "<0x00>");
    CHECK(byte_piece(10) == "<0x0A>");
    CHECK(byte_piece(255) == "<0xFF>");
    const nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"<0x41>", 3}, {"<0x4G>", 4}, {"<0x4>", 5}, {"<0x0a>", 6}};
    const LlamaTokenizer t = LlamaTokenizer::from_json({{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}});
    CHECK(t.decode({3}) == "A");
    CHECK(t.decode({4}) == "<0x4G>");  // not the byte 0x04, as a scanf("<0x%2X>") would read it
    CHECK(t.decode({5}) == "<0x4>");
    CHECK(t.decode({6}) == "\n");      // lower-case hex digits name a byte too
    CHECK(t.display(4) == "<0x4G>");
    CHECK(t.display(6) == "\n");
}

TEST_CASE("malformed tokenizer.json is rejected with a reason") {
    CHECK_THROWS_WITH_AS(LlamaTokenizer::from_json(nlohmann::json::object()), doctest::Contains("model"), InputError);
    CHECK_THROWS_WITH_AS(LlamaTokenizer::from_json({{"model", {{"type", "Unigram"}}}}), doctest::Contains("not BPE"), InputError);
    CHECK_THROWS_WITH_AS(LlamaTokenizer::from_json({{"model", {{"vocab", {{"a", 5}}}, {"merges", nlohmann::json::array()}}}}),
                         doctest::Contains("the id of 'a' is 5, outside 0 to 0"), InputError);
}

TEST_CASE("a part of tokenizer.json that is there but of the wrong kind is named as such, not as missing") {
    const nlohmann::json merges = nlohmann::json::array();
    const auto fails_with = [](const nlohmann::json& file, const std::string& message) {
        CAPTURE(file.dump());
        CHECK_THROWS_WITH_AS(LlamaTokenizer::from_json(file), doctest::Contains(message.c_str()), InputError);
    };
    fails_with({{"model", {{"vocab", {"a", "b"}}, {"merges", merges}}}},
               "model.vocab is a list; expected an object mapping each token to its id");
    fails_with({{"model", {{"merges", merges}}}}, "model.vocab is missing; expected an object mapping each token to its id");
    fails_with({{"model", {{"vocab", {{"a", 0}}}, {"merges", {{"a", "b"}}}}}}, "model.merges is an object; expected a list of merges");
    fails_with({{"model", {{"vocab", {{"a", 0}}}}}}, "model.merges is missing; expected a list of merges");
    fails_with({{"model", nlohmann::json::array()}}, "model is a list; expected an object");
    fails_with(nlohmann::json::object(), "model is missing; expected an object");
    fails_with(nlohmann::json::array(), "the file holds a list; expected an object with a \"model\"");
    fails_with({{"model", {{"vocab", {{"a", "0"}}}, {"merges", merges}}}}, "the id of 'a' in model.vocab is a string (\"0\"); expected a whole number");
    fails_with({{"model", {{"vocab", {{"a", 0}, {"b", -1}}}, {"merges", merges}}}}, "the id of 'b' is -1, outside 0 to 1 (model.vocab holds 2 tokens)");
    // The same parts, of the right kinds: read.
    CHECK(LlamaTokenizer::from_json({{"model", {{"vocab", {{"a", 0}, {"b", 1}}}, {"merges", merges}}}}).vocab_size() == 2);
}

namespace {

// A llama2.c tokenizer.bin of `pieces`, each scored 0.
std::vector<std::uint8_t> llama2c_bytes(const std::vector<std::string>& pieces) {
    std::vector<std::uint8_t> out;
    const auto put = [&](const void* p, std::size_t n) { out.insert(out.end(), (const std::uint8_t*)p, (const std::uint8_t*)p + n); };
    const std::int32_t longest = 8;
    put(&longest, 4);
    for (const std::string& piece : pieces) {
        const float score = 0;
        const std::int32_t length = std::int32_t(piece.size());
        put(&score, 4), put(&length, 4), put(piece.data(), piece.size());
    }
    return out;
}

}  // namespace

TEST_CASE("text that is not UTF-8 is refused, and decode always gives UTF-8") {
    const LlamaTokenizer t = LlamaTokenizer::from_json(nlohmann::json::parse(R"({"model": {"type": "BPE", "vocab":
        {"<unk>": 0, "<s>": 1, "</s>": 2, "a": 3, "<0xC3>": 4, "<0xA9>": 5}, "merges": []}})"));
    for (const char* bad : {"a\xff", "\xe2\x96", "\xed\xa0\x80", "\xc0\xaf", "\xf5\x80\x80\x80"}) CHECK_THROWS_AS(t.encode(bad), InputError);
    CHECK(t.decode({3, 4}) == "a\xEF\xBF\xBD");  // "a" and a character cut short: U+FFFD, as Hugging Face decodes
    CHECK(t.decode({3, 4, 5}) == "a\xC3\xA9");    // the whole character, é
}

TEST_CASE("a continuation keeps its first space; the start of a text drops the one encode put there") {
    const LlamaTokenizer t = LlamaTokenizer::from_json(nlohmann::json::parse(R"({"model": {"type": "BPE", "vocab":
        {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581he": 3, "\u2581loved": 4}, "merges": []}})"));
    CHECK(t.decode({3, 4}) == "he loved");
    CHECK(t.decode({3, 4}, false) == " he loved");
}

TEST_CASE("special tokens exist only where the vocabulary has them") {
    // A tokenizer.json without <s> has no BOS (not id 1, which holds another piece).
    const LlamaTokenizer json = LlamaTokenizer::from_json(nlohmann::json::parse(R"({"model": {"type": "BPE", "vocab":
        {"<unk>": 0, "x": 1, "</s>": 2}, "merges": []}})"));
    CHECK(json.bos_id() == -1);
    CHECK(json.eos_id() == 2);
    CHECK_THROWS_AS(json.encode("x"), InputError);
    CHECK(json.encode("x", false).back() == 1);  // without BOS it encodes
    // llama2.c's ids 0, 1, 2 only where the vocabulary reaches them.
    const std::vector<std::uint8_t> one = llama2c_bytes({"a"});
    const LlamaTokenizer tiny = LlamaTokenizer::from_llama2c(one.data(), one.size(), 1, "one.bin");
    CHECK(tiny.bos_id() == -1);
    CHECK_THROWS_AS(tiny.encode("a"), InputError);
    // More pieces than the model's vocabulary: another model's tokenizer.
    const std::vector<std::uint8_t> four = llama2c_bytes({"<unk>", "<s>", "</s>", "a"});
    CHECK_THROWS_WITH_AS(LlamaTokenizer::from_llama2c(four.data(), four.size(), 3, "four.bin"),
                         doctest::Contains("more pieces than the model's vocabulary"), InputError);
    CHECK(LlamaTokenizer::from_llama2c(four.data(), four.size(), 4, "four.bin").bos_id() == 1);
}
