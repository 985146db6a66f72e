// The verification checks: each compares two ways of computing the same thing
// (or a result against a closed-form fact) and records how far apart they are.
// The checks that hold for any implementation are written once in
// verify/check_suite.hpp and run on any Backend; run_checks runs them on the tiny
// model, with c (grouped vs repeated K/V), f1 and h1.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../model/weights.hpp"

namespace anatomy {

struct CheckRecord {
    std::string id;         // "a" .. "h", with a suffix where one letter has several parts
    std::string name;       // short name, e.g. "decode_matches_full"
    std::string compares;   // what is compared with what, in words
    double max_abs_error = 0;
    double tolerance = 0;
    // "<=": passes when max_abs_error <= tolerance (agreement);
    // ">":  passes when max_abs_error > tolerance (a difference that must exist).
    std::string relation = "<=";
    bool passed = false;
};

// The longest sequence run_checks accepts: check d reruns the whole forward once
// per position, so the cost grows as T^3; 512 tokens take seconds, not hours.
inline constexpr std::size_t max_check_tokens = 512;

// Runs every check on `tokens` ([B, T], 2 <= T <= max_check_tokens). When B == 1 the batch check adds
// a second, different sequence of its own. Throws InputError for bad tokens.
std::vector<CheckRecord> run_checks(const Model<float>& model, const TokenIds& tokens);

// A record with `passed` worked out from the relation ("<=" or ">").
CheckRecord make_check(std::string id, std::string name, std::string compares, double error, double tolerance,
                       std::string relation = "<=");

// The inputs of checks d and g, so that another implementation (the GPU forward)
// is checked on exactly the same tokens:
//   tokens_changed_after: [B, T] -> [B, T], every token after position t replaced
//                         by another id (positions <= t untouched)
//   batch_of_two_or_more: [B, T] -> the tokens themselves when B >= 2, else
//                         [2, T]: the tokens, then a second sequence (7 id + 3 + t mod V,
//                         a different sequence, though it may agree at a position)
TokenIds tokens_changed_after(const TokenIds& tokens, std::size_t t, int vocab_size);
TokenIds batch_of_two_or_more(const TokenIds& tokens, int vocab_size);

bool all_passed(const std::vector<CheckRecord>& checks);

nlohmann::json check_to_json(const CheckRecord& check);

}  // namespace anatomy
