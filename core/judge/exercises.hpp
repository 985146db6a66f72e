// The exercises the judge knows: for each, deterministic test cases, the
// reference answer and the mistakes it can name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../tensor.hpp"
#include "values.hpp"

namespace anatomy::judge {

struct JudgeCase {
    std::string name;         // e.g. "cache offset: T = 3 queries, S = 7 keys"
    json args;                // positional arguments of the learner's function
};

struct Mistake {
    std::string id;           // e.g. "mask_after_softmax"
    std::string title;        // e.g. "Mask applied after softmax"
    std::string explanation;  // what went wrong and how to fix it, in a sentence or two
    std::function<json(const json& args)> compute;
};

struct Exercise {
    std::string id;           // the function name learners implement, e.g. "attention"
    std::vector<JudgeCase> cases;
    std::function<json(const json& args)> reference;
    std::vector<Mistake> mistakes;
};

// Every exercise, in the order the page lists them. Cases come from a fixed seed
// per exercise, so the page, the command line and the tests see the same inputs.
const std::vector<Exercise>& exercises();
const Exercise& find_exercise(const std::string& id);  // throws InputError for an unknown id

}  // namespace anatomy::judge
