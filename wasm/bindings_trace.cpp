// The trace, the checks and the checkpoint export, for the trace viewer: in the
// module attention_trace_viewer with attn diff (bindings_diff.cpp), loaded when a reader asks
// for the page's own trace, saves the checkpoint or checks their tensors, so chapter 1's
// module carries none of it. Each takes a JSON string and returns a JSON string
// (exportCheckpoint returns bytes); a failure comes back as {"error": "message"}.
//
//   trace(options)             {tokens: [ids] = [1..6], batch: 2, seed: 1}
//                              -> the trace `attn verify --tokens ... --batch B --export-trace` writes
//   verify(options)            same options -> {checks: [...], all_passed}
//   exportCheckpoint(options)  {seed: 1} -> Uint8Array: model.safetensors (float32), the bytes
//                              `attn export-checkpoint` writes; on failure {error} (an object)
//
// Every model here is the tiny preset with seeded weights, as in `attn verify`.
#include <cstdint>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <nlohmann/json.hpp>

#include "build_info.hpp"
#include "checkpoint/hf_llama.hpp"
#include "json_args.hpp"
#include "model/token_batch.hpp"
#include "verify/checks.hpp"
#include "verify/trace.hpp"

namespace anatomy::wasm {
namespace {

// The model and batch `attn verify` would build from the same options.
struct SeededBatch {
    std::uint64_t seed;
    Model<float> model;
    TokenIds tokens;  // [B, T]
};

SeededBatch seeded_batch(const json& options) {
    const std::uint64_t seed = seed_option(options);
    Model<float> model = random_model(tiny_config(), seed);
    const std::vector<std::int32_t> ids =
        options.contains("tokens") ? token_list(options["tokens"], model.config.vocab_size)
                                   : std::vector<std::int32_t>{1, 2, 3, 4, 5, 6};  // the CLI's --tokens default
    const int batch = int_option(options, "batch", 2);                             // the CLI's --batch default
    TokenIds tokens = make_batch(ids, batch, model.config.vocab_size);
    return {seed, std::move(model), std::move(tokens)};
}

// ---------------------------------------------------------------- exported functions

const Options trace_options{"trace", {"tokens", "batch", "seed"}};
const Options verify_options{"verify", {"tokens", "batch", "seed"}};

std::string trace(const std::string& options_json) {
    return json_or_error([&] {
        const SeededBatch run = seeded_batch(parse_options(options_json, trace_options));
        const std::vector<CheckRecord> checks = run_checks(run.model, run.tokens);
        return make_trace(run.model, {{"source", "seed"}, {"seed", run.seed}}, run.tokens, checks, build_info());
    });
}

std::string verify(const std::string& options_json) {
    return json_or_error([&] {
        const SeededBatch run = seeded_batch(parse_options(options_json, verify_options));
        const std::vector<CheckRecord> checks = run_checks(run.model, run.tokens);
        json records = json::array();
        for (const CheckRecord& check : checks) records.push_back(check_to_json(check));
        return json{{"checks", records}, {"all_passed", all_passed(checks)}};
    });
}

const Options export_checkpoint_options{"exportCheckpoint", {"seed"}};
emscripten::val export_checkpoint(const std::string& options_json) {
    try {
        const json options = parse_options(options_json, export_checkpoint_options);
        const std::vector<std::uint8_t> bytes = hf_safetensors(random_model(tiny_config(), seed_option(options)), DType::f32);
        // A typed_memory_view looks into the wasm heap, which `bytes` leaves on return
        // (and which moves when memory grows): copy it into an array JavaScript owns.
        emscripten::val copy = emscripten::val::global("Uint8Array").new_(bytes.size());
        copy.call<void>("set", emscripten::val(emscripten::typed_memory_view(bytes.size(), bytes.data())));
        return copy;
    } catch (const std::exception& e) {
        emscripten::val error = emscripten::val::object();
        error.set("error", std::string(e.what()));
        return error;
    }
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_trace) {
    using namespace anatomy::wasm;
    emscripten::function("trace", &trace);
    emscripten::function("verify", &verify);
    emscripten::function("exportCheckpoint", &export_checkpoint);
}
