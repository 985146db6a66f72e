// Training in wasm: the module the page's training widget will load (attention_train).
// For now it holds what the determinism test needs:
//   trainingBits('{"seed": 5, "steps": 100}')  -> train_steps.hpp's training_bits as JSON, or {error}
#include <emscripten/bind.h>

#include "json_args.hpp"
#include "train/train_steps.hpp"

namespace anatomy::wasm {
namespace {

std::string training_bits_json(const std::string& options_json) {
    return json_or_error([&] {
        const json options = parse_options(options_json, {"seed", "steps"});
        const int steps = int_option(options, "steps", 100);
        if (steps < 1 || steps > 100000) throw InputError("steps must be 1 to 100000");
        return training_bits(seed_option(options), steps);
    });
}

}  // namespace
}  // namespace anatomy::wasm

EMSCRIPTEN_BINDINGS(anatomy_train) {
    emscripten::function("trainingBits", &anatomy::wasm::training_bits_json);
}
