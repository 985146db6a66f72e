// attn diff in wasm, in the trace viewer's module (attention_trace_viewer, with the
// trace and the checkpoint export of bindings_trace.cpp): loaded only when a reader
// uses one of them, so no chapter pays for it (the reader, the float64 forward and
// the mistakes add about 40 kB gzipped).
//
//   diff(options, bytes)   {tokens: [[ids], ...], seed: 1, cached: 0 (the first N tokens
//                          through the KV cache first)}; the bytes of an .npz or
//                          .safetensors file (Uint8Array)
//                          -> core/diff/diff.hpp's report, as `attn diff --json` prints it
//                             for the checkpoint `attn export-checkpoint --seed` writes,
//                             with the first divergence's block: {theirs, ours} to draw
//   checkpointConfig(options) {seed: 1} -> the config.json `attn export-checkpoint` writes
//                          beside model.safetensors (whose bytes exportCheckpoint
//                          gives): the checkpoint a learner runs
//   Bad input answers {"error": "..."}, the same one line the CLI prints.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "checkpoint/hf_llama.hpp"
#include "diff/diff.hpp"
#include "json_args.hpp"

namespace anatomy::wasm {
namespace {

const Options diff_options{"diff", {"tokens", "seed", "cached"}};
std::string diff(const std::string& options_json, const emscripten::val& file) {
    return json_or_error([&] {
        const json options = parse_options(options_json, diff_options);
        if (!options.contains("tokens")) throw InputError("diff needs the tokens the file was made from ({\"tokens\": [[1, 5, 9]]})");
        const Model<float>& model = seeded_tiny_model(seed_option(options));
        const TokenIds tokens = token_rows(options["tokens"], model.config.vocab_size);  // [B, T]
        const std::vector<std::uint8_t> bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(file);
        const int cached = int_option(options, "cached", 0);
        if (cached < 0) throw InputError("cached must not be negative");
        return diff_report(model, tokens, read_learner_tensors(bytes.data(), bytes.size(), "your file"), std::size_t(cached),
                           /*with_block=*/true);
    });
}

const Options checkpoint_config_options{"checkpointConfig", {"seed"}};
std::string checkpoint_config(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, checkpoint_config_options);
        return hf_config_json(seeded_tiny_model(seed_option(options)).config, DType::f32);
    });
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_diff) {
    emscripten::function("diff", &anatomy::wasm::diff);
    emscripten::function("checkpointConfig", &anatomy::wasm::checkpoint_config);
}
