// The exercise judge for the page and for tools/judge.mjs.
//
//   judgeCatalogue()                 -> [{id, cases, mistakes: [{id, title}]}]
//   judgeCases(exercise)             -> {exercise, cases: [{name, args}]}   (NaN and infinities as strings)
//   judgeOutputs(exercise, outputs)  outputs: [{value} | {error}] per case  -> the report (core/judge/judge.hpp)
// Every function returns {error} instead of throwing.
#include <emscripten/bind.h>

#include "json_args.hpp"
#include "json_input.hpp"
#include "judge/judge.hpp"

namespace anatomy::wasm {
namespace {

std::string judge_catalogue() {
    return json_or_error([] { return judge::exercise_catalogue(); });
}

std::string judge_cases(const std::string& exercise) {
    return json_or_error([&] { return judge::cases_json(exercise); });
}

std::string judge_outputs(const std::string& exercise, const std::string& outputs_json) {
    return json_or_error([&] {
        return judge::judge_outputs(exercise, parse_json(outputs_json, "the outputs"));
    });
}

}  // namespace

EMSCRIPTEN_BINDINGS(anatomy_judge) {
    emscripten::function("judgeCatalogue", &judge_catalogue);
    emscripten::function("judgeCases", &judge_cases);
    emscripten::function("judgeOutputs", &judge_outputs);
}

}  // namespace anatomy::wasm
