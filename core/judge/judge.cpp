#include "judge.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "../json_input.hpp"
#include "../tensor.hpp"
#include "values.hpp"

namespace anatomy::judge {
namespace {

// What a case's result is, for a message: "an array of shape [3, 5]", "a number",
// "an object with fields a, b".
std::string result_kind(const json& expected) {
    if (expected.is_object()) {
        std::string names;
        for (const auto& [key, value] : expected.items()) names += (names.empty() ? "" : ", ") + key;
        return "an object with fields " + names;
    }
    const Nd array = nd_from_json(expected, "the reference");
    return array.dimension() == 0 ? "a number" : "an array of shape " + shape_text({array.shape().begin(), array.shape().end()});
}

// The outputs' structure, checked once before any case is judged: a list of one entry
// per case, each {"value": <the result>} or {"error": "message"} (what the sandboxes
// and tools/judge.py send). Throws InputError naming the first entry that is not.
void require_one_output_per_case(const Exercise& exercise, const json& outputs) {
    const std::size_t count = exercise.cases.size();
    const std::string entries = "one per case, each {\"value\": <the result>} or {\"error\": \"message\"}";
    if (!outputs.is_array() || outputs.size() != count)
        throw InputError("judge: expected " + std::to_string(count) + " outputs for " + exercise.id + " (a list, " + entries + "), not " +
                         (outputs.is_array() ? "a list of " + std::to_string(outputs.size()) : json_kind(outputs)));
    for (std::size_t i = 0; i < count; ++i) {
        const json& output = outputs[i];
        const bool holds_value = output.is_object() && output.contains("value");
        const bool holds_error = output.is_object() && output.contains("error") && output["error"].is_string();
        if (holds_value || holds_error) continue;
        const std::string what = !output.is_object()                                    ? json_kind(output)
                                 : output.contains("error") ? "an object whose \"error\" is " + json_kind(output["error"]) + ", not a string"
                                                            : "an object with neither \"value\" nor \"error\"";
        const JudgeCase& test = exercise.cases[i];
        throw InputError("judge: output " + std::to_string(i + 1) + " of " + std::to_string(count) + " for " + exercise.id + " (case \"" +
                         test.name + "\") is " + what + "; expected {\"value\": " + result_kind(exercise.reference(test.args)) +
                         "} or {\"error\": \"message\"}");
    }
}

}  // namespace

json cases_json(const std::string& exercise_id) {
    const Exercise& exercise = find_exercise(exercise_id);
    json cases = json::array();
    for (const JudgeCase& c : exercise.cases) cases.push_back({{"name", c.name}, {"args", c.args}});
    return {{"exercise", exercise.id}, {"cases", cases}};
}

namespace {

// A count and its verb: count_of(1, "matches", "match") is "1 matches", count_of(2, ...) "2 match".
std::string count_of(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The diagnosis of a failing run, decided from the cases' own "Looks like" lists so that
// the summary and the cases agree: the mistake that reproduces every output when one
// does, else the mistake that the most failing cases look like (the catalogue's order
// breaks a tie); null when no failing case looks like any mistake. `summary` says for
// how many of the failing tests the named mistake accounts, and what the others are.
json diagnose(const Exercise& exercise, const std::vector<bool>& explains, const json& cases) {
    std::vector<std::size_t> looks_like(exercise.mistakes.size(), 0);
    std::size_t failing = 0;
    for (const json& c : cases) {
        if (c["passed"].get<bool>()) continue;
        ++failing;
        for (std::size_t m = 0; m < exercise.mistakes.size(); ++m)
            for (const json& id : c["matches"])
                if (id == exercise.mistakes[m].id) ++looks_like[m];
    }
    std::size_t chosen = exercise.mistakes.size();
    for (std::size_t m = 0; m < exercise.mistakes.size() && chosen == exercise.mistakes.size(); ++m)
        if (explains[m] && looks_like[m] > 0) chosen = m;
    if (chosen == exercise.mistakes.size())
        for (std::size_t m = 0; m < exercise.mistakes.size(); ++m)
            if (looks_like[m] > 0 && (chosen == exercise.mistakes.size() || looks_like[m] > looks_like[chosen])) chosen = m;
    if (chosen == exercise.mistakes.size()) return nullptr;

    const Mistake& mistake = exercise.mistakes[chosen];
    // The failing tests that do not look like it: like another mistake, like none, or stopped by an error.
    std::size_t other_mistake = 0, unknown = 0, errors = 0;
    for (const json& c : cases) {
        if (c["passed"].get<bool>()) continue;
        const json& matches = c["matches"];
        if (std::find(matches.begin(), matches.end(), json(mistake.id)) != matches.end()) continue;
        if (c["problem"] == "error") ++errors;
        else if (!matches.empty()) ++other_mistake;
        else ++unknown;
    }
    const std::size_t explained = looks_like[chosen];
    std::string summary;
    if (explained == failing) {
        summary = failing == 1 ? "The failing test looks like this mistake." : "All " + std::to_string(failing) + " failing tests look like this mistake.";
    } else {
        summary = std::to_string(explained) + " of the " + std::to_string(failing) + " failing tests " + (explained == 1 ? "looks" : "look") + " like this mistake";
        // The rest: "the other ..." when one test is left, else a count for each kind.
        const bool one_left = failing - explained == 1;
        const auto tests = [&](std::size_t n, const char* verb_one, const char* verb_many) {
            return one_left ? std::string("the other ") + verb_one : count_of(n, verb_one, verb_many);
        };
        std::vector<std::string> rest;
        if (other_mistake > 0) rest.push_back(tests(other_mistake, "looks", "look") + " like another mistake (named below)");
        if (unknown > 0) rest.push_back(tests(unknown, "matches", "match") + " none of the mistakes the judge knows");
        if (errors > 0) rest.push_back(tests(errors, "stopped", "stopped") + " with an error");
        for (std::size_t i = 0; i < rest.size(); ++i) summary += (i == 0 ? "; " : ", ") + rest[i];
        summary += ".";
    }
    return {{"id", mistake.id},
            {"title", mistake.title},
            {"explanation", mistake.explanation},
            {"explained", explained},
            {"failing", failing},
            {"summary", summary}};
}

}  // namespace

json judge_outputs(const std::string& exercise_id, const json& outputs, const Tolerance& tolerance) {
    const Exercise& exercise = find_exercise(exercise_id);
    require_one_output_per_case(exercise, outputs);

    // Which outputs each mistake reproduces: a mistake explains the learner's code when it
    // reproduces every output (failing ones included), and at least one output failed
    // (diagnose prefers such a mistake to one that only some failing cases look like).
    std::vector<bool> explains(exercise.mistakes.size(), true);
    json cases = json::array();
    std::size_t passed_count = 0;
    for (std::size_t i = 0; i < exercise.cases.size(); ++i) {
        const JudgeCase& test = exercise.cases[i];
        const json& output = outputs[i];
        json report = {{"name", test.name}};
        if (!output.contains("value")) {
            report["passed"] = false;
            report["problem"] = "error";
            report["error"] = output["error"];
            report["matches"] = json::array();
            std::fill(explains.begin(), explains.end(), false);
            cases.push_back(report);
            continue;
        }
        const json expected = exercise.reference(test.args);
        const Comparison comparison = compare(expected, output["value"], tolerance);
        report["passed"] = comparison.passed;
        report["problem"] = comparison.problem;
        report["details"] = comparison.details;
        json matches = json::array();
        for (std::size_t m = 0; m < exercise.mistakes.size(); ++m) {
            if (!explains[m] && comparison.passed) continue;
            const json mistaken = exercise.mistakes[m].compute(test.args);
            const bool reproduced = agrees(mistaken, output["value"], tolerance);
            explains[m] = explains[m] && reproduced;
            // Name a mistake for this case only when it is visible here (differs from the answer).
            if (!comparison.passed && reproduced && !agrees(mistaken, expected, tolerance)) matches.push_back(exercise.mistakes[m].id);
        }
        report["matches"] = matches;
        passed_count += comparison.passed ? 1 : 0;
        cases.push_back(report);
    }

    const bool passed = passed_count == exercise.cases.size();
    return {{"exercise", exercise.id},
            {"passed", passed},
            {"passed_count", passed_count},
            {"total", exercise.cases.size()},
            {"tolerance", {{"atol", tolerance.atol}, {"rtol", tolerance.rtol}}},
            {"diagnosis", passed ? json(nullptr) : diagnose(exercise, explains, cases)},
            {"cases", cases}};
}

json exercise_catalogue() {
    json list = json::array();
    for (const Exercise& e : exercises()) {
        json mistakes = json::array();
        for (const Mistake& m : e.mistakes) mistakes.push_back({{"id", m.id}, {"title", m.title}});
        list.push_back({{"id", e.id}, {"cases", e.cases.size()}, {"mistakes", mistakes}});
    }
    return list;
}

}  // namespace anatomy::judge
