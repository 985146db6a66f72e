#include "json_args.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "json_input.hpp"

namespace anatomy::wasm {

namespace {

// One JavaScript number as JSON: an integer when it is whole and held exactly.
json number_from_js(double x) {
    constexpr double exact_limit = 9007199254740992.0;  // 2^53: every whole double up to it is exact
    if (std::isfinite(x) && x == std::trunc(x) && std::fabs(x) <= exact_limit)
        return x >= 0 ? json(std::uint64_t(x)) : json(std::int64_t(x));
    return json(x);
}

json json_from_js_at(const emscripten::val& value, int depth) {
    using emscripten::val;
    if (depth > 64) throw InputError("options nest deeper than 64 levels");
    const std::string type = value.typeOf().as<std::string>();
    if (type == "number") return number_from_js(value.as<double>());
    if (type == "string") return value.as<std::string>();
    if (type == "boolean") return value.as<bool>();
    if (type == "undefined" || value.isNull()) return nullptr;
    if (type != "object") throw InputError("options cannot hold a JavaScript " + type);
    if (val::global("ArrayBuffer").call<bool>("isView", value)) {
        json out = json::array();
        for (const double x : emscripten::convertJSArrayToNumberVector<double>(value)) out.push_back(number_from_js(x));
        return out;
    }
    if (value.isArray()) {
        json out = json::array();
        const unsigned n = value["length"].as<unsigned>();
        for (unsigned i = 0; i < n; ++i) out.push_back(json_from_js_at(value[i], depth + 1));
        return out;
    }
    json out = json::object();
    const val keys = val::global("Object").call<val>("keys", value);
    const unsigned n = keys["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
        const val item = value[keys[i]];
        if (item.isUndefined()) continue;  // as JSON.stringify leaves it out
        out[keys[i].as<std::string>()] = json_from_js_at(item, depth + 1);
    }
    return out;
}

}  // namespace

// Rejects keys outside `known`, so a typo ("tokns") is an error rather than a silent default.
void require_known_options(const json& options, const Options& known) {
    if (!options.is_object()) throw InputError("options must be a JSON object, got " + options.dump());
    for (const auto& item : options.items()) {
        bool found = false;
        std::string expected;
        for (const char* key : known.names) {
            found = found || item.key() == key;
            expected += (expected.empty() ? "" : ", ") + std::string(key);
        }
        if (!found) throw InputError("unknown option '" + item.key() + "' (expected " + expected + ")");
    }
}


// Parses `text` as a JSON object and rejects keys outside `known`.
json parse_options(const std::string& text, const Options& known) {
    const json options = parse_json(text.empty() ? std::string("{}") : text, "the options");
    require_known_options(options, known);
    return options;
}

json options_from_js(const emscripten::val& options, const Options& known) {
    json parsed = options.isUndefined() ? json::object() : json_from_js(options);
    require_known_options(parsed, known);
    return parsed;
}

json json_from_js(const emscripten::val& value) { return json_from_js_at(value, 0); }

std::uint64_t seed_option(const json& options) {
    if (!options.contains("seed")) return default_seed;
    const json& seed = options["seed"];
    if (!seed.is_number_unsigned()) throw InputError("seed must be a non-negative integer, got " + seed.dump());
    return seed.get<std::uint64_t>();
}

// True when `value` is an integer that fits an int32 (JSON keeps large unsigned values apart).
bool is_int32(const json& value) {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int32_t>::max());
    return value.is_number_integer() && value.get<std::int64_t>() >= std::numeric_limits<std::int32_t>::min() &&
           value.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max();
}

int int_option(const json& options, const char* key, int fallback) {
    if (!options.contains(key)) return fallback;
    if (!is_int32(options[key])) throw InputError(std::string(key) + " must be an integer, got " + options[key].dump());
    return options[key].get<int>();
}

bool bool_option(const json& options, const char* key, bool fallback) {
    if (!options.contains(key)) return fallback;
    if (!options[key].is_boolean()) throw InputError(std::string(key) + " must be true or false, got " + options[key].dump());
    return options[key].get<bool>();
}

// One id as int32. Range against the vocabulary is the core's check (make_batch,
// embed); here only what does not fit an int32 at all is stopped.
std::int32_t token_id(const json& value, int vocab_size) {
    if (!value.is_number_integer()) throw InputError("token ids must be integers, got " + value.dump());
    if (!is_int32(value))
        throw InputError("token id " + value.dump() + " is outside the vocabulary [0, " +
                         std::to_string(vocab_size - 1) + "]");
    return value.get<std::int32_t>();
}

// [ids] -> [T]
std::vector<std::int32_t> token_list(const json& value, int vocab_size) {
    if (!value.is_array()) throw InputError("tokens must be a list of token ids, got " + value.dump());
    std::vector<std::int32_t> ids;
    for (const json& id : value) ids.push_back(token_id(id, vocab_size));
    return ids;
}

// [[ids], ...] -> [B, T]
TokenIds token_rows(const json& value, int vocab_size) {
    if (!value.is_array() || value.empty() || !value[0].is_array())
        throw InputError("tokens must be a non-empty list of rows of token ids, e.g. [[1, 2, 3]], got " + value.dump());
    const std::size_t B = value.size(), T = value[0].size();
    TokenIds tokens({B, T});
    for (std::size_t b = 0; b < B; ++b) {
        const std::vector<std::int32_t> row = token_list(value[b], vocab_size);
        if (row.size() != T)
            throw InputError("tokens row " + std::to_string(b) + " has " + std::to_string(row.size()) +
                             " ids but row 0 has " + std::to_string(T) + "; every row must be as long");
        for (std::size_t t = 0; t < T; ++t) tokens(b, t) = row[t];
    }
    return tokens;
}


double number_option(const json& options, const char* key, double fallback) {
    if (!options.contains(key)) return fallback;
    if (!options[key].is_number()) throw InputError(std::string(key) + " must be a number, got " + options[key].dump());
    const double value = options[key].get<double>();
    if (!std::isfinite(value)) throw InputError(std::string(key) + " must be finite");
    return value;
}

std::string string_option(const json& options, const char* key, const std::string& fallback) {
    if (!options.contains(key)) return fallback;
    if (!options[key].is_string()) throw InputError(std::string(key) + " must be a string, got " + options[key].dump());
    return options[key].get<std::string>();
}

std::vector<double> number_list(const json& value, const char* what) {
    if (!value.is_array()) throw InputError(std::string(what) + " must be a list of numbers, got " + value.dump());
    std::vector<double> out;
    for (const json& x : value) {
        if (!x.is_number() || !std::isfinite(x.get<double>()))
            throw InputError(std::string(what) + " must hold finite numbers, got " + x.dump());
        out.push_back(x.get<double>());
    }
    return out;
}

const Model<float>& seeded_tiny_model(std::uint64_t seed) {
    static std::uint64_t cached_seed = 0;
    static std::optional<Model<float>> cached;
    if (!cached || cached_seed != seed) {
        cached = random_model(tiny_config(), seed);
        cached_seed = seed;
    }
    return *cached;
}

}  // namespace anatomy::wasm

