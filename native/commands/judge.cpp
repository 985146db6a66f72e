// attn judge: the page's exercise judge (core/judge) for programs outside the
// browser, such as tools/judge.py, which runs a learner's Python and hands the
// outputs back here. Every answer is the judge's JSON, as the page's wasm gives it.
//
//   attn judge --list                          -> [{id, cases, mistakes: [{id, title}]}]
//   attn judge EXERCISE --cases                -> {exercise, cases: [{name, args}]}
//   attn judge EXERCISE --outputs FILE|-       -> the report; exit 0 when every case
//                                                 passes, 1 when any fails
// NaN and infinities travel as the strings "NaN", "Infinity", "-Infinity" both ways.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "judge/judge.hpp"
#include "tensor.hpp"

namespace anatomy::native {
namespace {

struct JudgeOptions {
    std::string exercise;
    bool list = false;
    bool cases = false;
    std::string outputs;  // a file, or "-" for standard input
};

// An exercise's outputs are a few kilobytes; 64 MB is room for any, and a bound on a
// stream that never ends (/dev/zero given as standard input).
constexpr std::size_t outputs_limit = std::size_t(64) << 20;

nlohmann::json read_outputs(const std::string& path) {
    if (path != "-") return read_json_file(path, outputs_limit);
    return parse_json(read_standard_input(outputs_limit), "standard input");
}

int run_judge(const JudgeOptions& o) {
    if (int(o.list) + int(o.cases) + int(!o.outputs.empty()) != 1) throw InputError("judge takes one of --list, --cases or --outputs FILE");
    if (o.list) {
        std::cout << json_text(judge::exercise_catalogue()) << "\n";
        return 0;
    }
    if (o.exercise.empty()) throw InputError("judge needs an EXERCISE (attn judge --list names them)");
    if (o.cases) {
        std::cout << json_text(judge::cases_json(o.exercise)) << "\n";
        return 0;
    }
    const nlohmann::json report = judge::judge_outputs(o.exercise, read_outputs(o.outputs));
    std::cout << json_text(report) << "\n";
    return report["passed"].get<bool>() ? 0 : 1;
}

}  // namespace

CommandRunner add_judge_command(CLI::App& app) {
    auto options = std::make_shared<JudgeOptions>();
    CLI::App* cmd = app.add_subcommand("judge", "The exercise judge: an exercise's test cases, or the verdict on your outputs (for tools/judge.py)");
    cmd->add_option("exercise", options->exercise, "The exercise's id, e.g. softmax");
    cmd->add_flag("--list", options->list, "Every exercise with its mistakes, as JSON");
    cmd->add_flag("--cases", options->cases, "The exercise's test cases, as JSON");
    cmd->add_option("--outputs", options->outputs, "Your function's outputs, one {\"value\"} or {\"error\"} per case (JSON; - for stdin)");
    return [options] { return run_judge(*options); };
}

}  // namespace anatomy::native
