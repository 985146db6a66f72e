// Reading the options that JavaScript passes to the wasm core, and turning any
// failure into {"error": message}. Shared by every bindings file. Options come as
// JSON text (parse_options), or, in the modules the page's widgets call
// (attention_core, attention_notebook, attention_trained), which carry no JSON
// parser, as the JavaScript object itself (options_from_js).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <emscripten/val.h>
#include <nlohmann/json.hpp>

#include "model/weights.hpp"
#include "tensor.hpp"

namespace anatomy::wasm {

using nlohmann::json;

// A method's options, declared once beside the method as a namespace-scope constant
// (its name unique in the module: the unity build compiles the bindings files together),
// on one line, in this form:
//   const Options run_options{"StreamSession.run", {"text", "window", ...}};
// `method` is the name JavaScript calls ("Class.method" for a class's, "Class" for its
// constructor). parse_options and options_from_js reject any other key, and
// tests/wasm/interface.test.mjs reads these declarations from the files each module of
// wasm/CMakeLists.txt compiles and holds the page's TypeScript types (web/src/lib) to them.
struct Options {
    const char* method;
    std::vector<const char*> names;
};

// Parses `text` as a JSON object and rejects keys outside `known`, so a typo
// ("tokns") is an error rather than a silent default.
json parse_options(const std::string& text, const Options& known);

// The same for options passed as a JavaScript object.
json options_from_js(const emscripten::val& options, const Options& known);

// Throws InputError unless `options` is an object whose keys are all in `known` (an
// object nested in another method's options).
void require_known_options(const json& options, const Options& known);

// A JavaScript value as the JSON that JSON.stringify would make of it: whole numbers
// that a double holds exactly become integers (unsigned when not negative), as
// nlohmann's parser reads them; typed arrays become lists; an object's undefined
// properties are left out and an array's become null. Throws InputError for what
// JSON cannot hold (a function, a symbol, a BigInt) and for nesting deeper than 64.
json json_from_js(const emscripten::val& value);

std::uint64_t seed_option(const json& options);                       // default_seed when absent
bool is_int32(const json& value);
int int_option(const json& options, const char* key, int fallback);  // throws unless an int32
bool bool_option(const json& options, const char* key, bool fallback);
double number_option(const json& options, const char* key, double fallback);  // finite numbers only
std::string string_option(const json& options, const char* key, const std::string& fallback);

std::int32_t token_id(const json& value, int vocab_size);
std::vector<std::int32_t> token_list(const json& value, int vocab_size);  // [ids] -> [T]
TokenIds token_rows(const json& value, int vocab_size);                   // [[ids], ...] -> [B, T]
std::vector<double> number_list(const json& value, const char* what);    // [x, ...] -> doubles

// The tiny model with seeded weights; the last one made is kept, since the page
// asks for the same seed on every update.
const Model<float>& seeded_tiny_model(std::uint64_t seed);

// Runs `body` and returns its JSON as text, or {"error": message} if it throws.
template <typename Body>
std::string json_or_error(Body body) {
    try {
        return body().dump();
    } catch (const std::exception& e) {
        // replace: a message quoting the caller's bytes must not fail to serialise.
        return json{{"error", e.what()}}.dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (...) {
        return json{{"error", "unknown error in the wasm core"}}.dump();
    }
}

}  // namespace anatomy::wasm
