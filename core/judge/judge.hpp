// The judge: test cases for an exercise, and a verdict on a learner's outputs,
// with a named diagnosis when failing cases look like a known mistake.
#pragma once

#include "compare.hpp"
#include "exercises.hpp"

namespace anatomy::judge {

// {exercise, cases: [{name, args}]}: what the sandbox calls the learner's function with.
json cases_json(const std::string& exercise_id);

// `outputs` holds one entry per case, in order: {"value": <result>} or {"error": "message"}
// (a thrown exception, a timeout, a non-serialisable result). Throws InputError, before
// judging any case, for outputs of another structure (not a list, another count, an
// entry that is neither), naming the first entry that is wrong and what its case
// returns. Returns
//   {exercise, passed, passed_count, total, tolerance: {atol, rtol},
//    diagnosis: {id, title, explanation, explained, failing, summary} or null,
//    cases: [{name, passed, problem, details, error, matches: [mistake ids]}]}
// A case's `matches` are the mistakes that reproduce its output where they differ from
// the answer (the page's "Looks like"). The diagnosis is taken from them, so the two
// agree: null when the run passes or no failing case names a mistake; else the mistake
// that reproduces every output if one does, or the one the most failing cases name.
// `explained` of the `failing` cases name it, and `summary` says so in a sentence
// ("3 of the 4 failing tests look like this mistake; the other matches none of the
// mistakes the judge knows.") that the page and tools/judge.* show as they are.
json judge_outputs(const std::string& exercise_id, const json& outputs, const Tolerance& tolerance = {});

// Every exercise with its mistakes: [{id, cases, mistakes: [{id, title}]}].
json exercise_catalogue();

}  // namespace anatomy::judge
