#include "attention_bench.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "../build_info.hpp"
#include "../model/forward.hpp"
#include "../model/random_tensor.hpp"
#include "../model/token_batch.hpp"
#include "../ops/attention_kernels.hpp"
#include "attention_check.hpp"
#include "harness.hpp"

namespace anatomy {
namespace {

using json = nlohmann::json;
using AttentionFn = Tensor4<float> (*)(const Tensor4<float>&, const Tensor4<float>&, const Tensor4<float>&);

Tensor4<float> reference_repeated(const Tensor4<float>& q, const Tensor4<float>& k, const Tensor4<float>& v) {
    return attention_reference(q, k, v, /*repeated_kv=*/true);
}

struct Kernel {
    const char* name;
    const char* what;
    AttentionFn run;
    bool materialises;  // holds [B, Hq, T, S] three times: skipped above reference_max_T
};

const std::vector<Kernel>& all_kernels() {
    static const std::vector<Kernel> kernels{
        {"grouped", "v2: KV-group rows x transposed K panels, register tiles", attention_grouped, false},
        {"streaming", "v3: online softmax over key blocks (never holds T x S)", attention_streaming, false},
        {"rows", "v1: one query row at a time, contiguous dot products and axpy", attention_rows, false},
        {"steps", "v4: the reference's four steps vectorised, what the model runs (materialises [B, Hq, T, S])", attention_steps, true},
        {"reference", "v0: the core's ops with repeated K/V, materialising [B, Hq, T, S]", reference_repeated, true},
    };
    return kernels;
}

TimingPolicy timing_policy(const BenchOptions& o) { return {o.warmup, o.min_runs, o.max_runs, o.budget_ms}; }

// The harness's timing loop on the steady clock; each timed call's CPU time beside it.
struct Runs {
    std::vector<double> wall_ms;  // each timed call, wall clock
    std::vector<double> cpu_ms;   // the same calls, process CPU time (std::clock)
};

Runs time_runs(const BenchOptions& o, const std::function<void()>& run) {
    SteadyClockTimer timer;
    const Timing timing = time_calls(timer, timing_policy(o), run);
    return {timing.runs_ms, timer.cpu_ms()};
}

// "ms" is the median wall time; "cpu_ms" the median CPU time of the same calls.
// On a machine shared with other work, wall time above CPU time is time spent
// waiting for a core: the table marks such cells.
void put_timing(json& row, const Runs& runs) {
    row["runs_ms"] = runs.wall_ms;
    row["ms"] = median(runs.wall_ms);
    row["cpu_ms"] = median(runs.cpu_ms);
}

json validation_json(const Validation& v) {
    return {{"passed", v.passed},
            {"max_error", v.max_error},
            {"reference_error", v.reference_error},
            {"tolerance", v.tolerance},
            {"rows_checked", v.rows_checked}};
}

std::string describe(const json& row) {
    std::ostringstream line;
    line << row["case"].get<std::string>() << " T=" << row["T"] << " S=" << row["S"] << " "
         << row["kernel"].get<std::string>() << ": ";
    if (row.contains("skipped"))
        line << "skipped (" << row["skipped"].get<std::string>() << ")";
    else
        line << row["ms"].get<double>() << " ms (" << row["runs_ms"].size() << " runs)";
    return line.str();
}

// Floating-point operations of causal attention, counting only the cells a
// query may see (the masked ones are never computed): 2 dh for its score and
// 2 dh for its share of P @ V, for T queries over S = history + T keys.
double attention_flops(std::size_t B, std::size_t Hq, std::size_t T, std::size_t S, std::size_t dh) {
    const double visible = double(T) * double(S - T) + double(T) * double(T + 1) / 2;  // cells per (b, head)
    return 4.0 * double(B) * double(Hq) * double(dh) * visible;
}

// The build's arithmetic ceiling (multiply_add_rounds): what the kernels'
// GFLOP/s are measured against, and what differs between a native and a wasm
// build. Timed before the first case and again after the last; as a ceiling it
// is the fastest of those runs (another tenant of a shared machine can only slow
// a run down), where each kernel's figure is its median.
Runs time_ceiling(const BenchOptions& o) {
    volatile float result = 0;  // kept, so the rounds are done
    return time_runs(o, [&] { result = multiply_add_rounds(o.ceiling_rounds, 1.0f); });
}

void put_ceiling(json& row, const BenchOptions& o, const Runs& runs) {
    put_timing(row, runs);
    const double best_ms = *std::min_element(runs.wall_ms.begin(), runs.wall_ms.end());
    row["best_ms"] = best_ms;
    row["gflops"] = double(o.ceiling_rounds) * multiply_add_flops_per_round() / best_ms / 1e6;
}

// One attention case (T queries over S keys) for every selected kernel.
void attention_case(const BenchOptions& o, const std::string& name, std::size_t T, std::size_t S,
                    const std::vector<std::string>& kernels, json& rows,
                    const std::function<void(const std::string&)>& progress) {
    const std::size_t B = o.batch, Hq = o.heads, Hkv = o.kv_heads, dh = o.head_dim;
    const Tensor4<float> q = random_tensor<float, 4>({B, Hq, T, dh}, o.seed * 3 + 0);
    const Tensor4<float> k = random_tensor<float, 4>({B, Hkv, S, dh}, o.seed * 3 + 1);
    const Tensor4<float> v = random_tensor<float, 4>({B, Hkv, S, dh}, o.seed * 3 + 2);
    const ReferenceRows reference = reference_rows(q, k, v);
    for (const Kernel& kernel : all_kernels()) {
        if (std::find(kernels.begin(), kernels.end(), kernel.name) == kernels.end()) continue;
        json row{{"case", name}, {"kernel", kernel.name}, {"T", T}, {"S", S}};
        const double cells = double(B) * double(Hq) * double(T) * double(S);
        if (kernel.materialises && std::max(T, S) > o.reference_max_T && T > 1) {
            std::ostringstream why;
            why << "T above reference_max_T = " << o.reference_max_T << ": materialises 3 x " << cells * 4 / 1e6
                << " MB";
            row["skipped"] = why.str();
        } else {
            SteadyClockTimer timer;
            const auto validate = [&] {
                const Validation check = validate_rows(kernel.run(q, k, v), reference);
                row["validation"] = validation_json(check);
                return check.passed;
            };
            const std::optional<Timing> timing =
                validate_then_time(validate, timer, timing_policy(o), [&] { kernel.run(q, k, v); });
            if (!timing) {
                row["skipped"] = "failed validation: not timed";
            } else {
                put_timing(row, {timing->runs_ms, timer.cpu_ms()});
                row["gflops"] = attention_flops(B, Hq, T, S, dh) / row["ms"].get<double>() / 1e6;
            }
        }
        if (progress) progress(describe(row));
        rows.push_back(row);
    }
}

// The tiny demo model: a whole-sequence forward, and one decode step over a cache.
void model_case(const BenchOptions& o, json& rows, const std::function<void(const std::string&)>& progress) {
    const Model<float> model = random_model(tiny_config(), o.seed);
    const std::vector<std::int32_t> ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const TokenIds prompt = make_batch(ids, 1, model.config.vocab_size);  // [1, 16]
    {
        json row{{"case", "model"}, {"kernel", "tiny_prefill"}, {"T", ids.size()}, {"S", ids.size()}};
        put_timing(row, time_runs(o, [&] { full_forward(model, prompt); }));
        row["per_second"] = 1000.0 / row["ms"].get<double>();
        if (progress) progress(describe(row));
        rows.push_back(row);
    }
    {
        KVCache<float> filled = empty_cache<float>(model.config, 1);
        forward(model, filled, prompt);  // the cache now holds 16 tokens
        const TokenIds next = make_batch({17}, 1, model.config.vocab_size);
        json row{{"case", "model"}, {"kernel", "tiny_decode_step"}, {"T", 1}, {"S", ids.size() + 1}};
        put_timing(row, time_runs(o, [&] {
            KVCache<float> cache = filled;  // each step starts from the same 16-token cache
            forward(model, cache, next);
        }));
        row["per_second"] = 1000.0 / row["ms"].get<double>();
        if (progress) progress(describe(row));
        rows.push_back(row);
    }
}

std::vector<std::size_t> size_list(const json& value, const char* key) {
    if (!value.is_array()) throw InputError(std::string(key) + " must be a list of positive whole numbers");
    std::vector<std::size_t> sizes;
    for (const json& item : value) {
        if (!item.is_number_integer() || item.get<long long>() < 1 || item.get<long long>() > (1 << 20))
            throw InputError(std::string(key) + " must be a list of whole numbers from 1 to 1048576");
        sizes.push_back(item.get<std::size_t>());
    }
    return sizes;
}

std::size_t positive(const json& value, const char* key, long long most) {
    if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > most)
        throw InputError(std::string(key) + " must be a whole number from 1 to " + std::to_string(most));
    return value.get<std::size_t>();
}

int count(const json& value, const char* key) {
    if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 1000)
        throw InputError(std::string(key) + " must be a whole number from 0 to 1000");
    return value.get<int>();
}

}  // namespace

BenchOptions quick_bench_options() {
    BenchOptions o;
    o.heads = 8;
    o.kv_heads = 2;
    o.head_dim = 40;
    o.prefill_T = {5, 37};
    o.decode_S = {19, 70};
    o.warmup = 0;
    o.min_runs = 1;
    o.max_runs = 3;
    o.budget_ms = 50;
    o.reference_max_T = 1024;
    o.ceiling_rounds = 1 << 12;
    return o;
}

BenchOptions bench_options_from_json(const json& options) {
    if (!options.is_object()) throw InputError("bench options must be a JSON object");
    BenchOptions o = options.value("quick", false) ? quick_bench_options() : BenchOptions{};
    static const std::set<std::string> known{"quick",    "batch",     "heads",     "kv_heads",  "head_dim",
                                             "prefill_T", "decode_S", "kernels",   "warmup",    "min_runs",
                                             "max_runs",  "budget_ms", "reference_max_T", "model", "recompute", "seed"};
    for (const auto& [key, value] : options.items()) {
        if (!known.count(key)) throw InputError("unknown bench option '" + key + "'");
        if (key == "batch") o.batch = positive(value, "batch", 64);
        if (key == "heads") o.heads = positive(value, "heads", 256);
        if (key == "kv_heads") o.kv_heads = positive(value, "kv_heads", 256);
        if (key == "head_dim") o.head_dim = positive(value, "head_dim", 1024);
        if (key == "prefill_T") o.prefill_T = size_list(value, "prefill_T");
        if (key == "decode_S") o.decode_S = size_list(value, "decode_S");
        if (key == "warmup") o.warmup = count(value, "warmup");
        if (key == "min_runs") o.min_runs = count(value, "min_runs");
        if (key == "max_runs") o.max_runs = std::max(1, count(value, "max_runs"));
        if (key == "budget_ms") {
            if (!value.is_number() || !(value.get<double>() >= 0)) throw InputError("budget_ms must be a number >= 0");
            o.budget_ms = value.get<double>();
        }
        if (key == "reference_max_T") o.reference_max_T = positive(value, "reference_max_T", 1 << 20);
        if (key == "model") {
            if (!value.is_boolean()) throw InputError("model must be true or false");
            o.model = value.get<bool>();
        }
        if (key == "recompute") {
            if (!value.is_boolean()) throw InputError("recompute must be true or false");
            o.recompute = value.get<bool>();
        }
        if (key == "seed") {
            if (!value.is_number_unsigned()) throw InputError("seed must be a whole number >= 0");
            o.seed = value.get<std::uint64_t>();
        }
        if (key == "kernels") {
            o.kernels.clear();
            if (!value.is_array()) throw InputError("kernels must be a list of kernel names");
            for (const json& name : value) {
                const auto& all = all_kernels();
                if (!name.is_string() || std::none_of(all.begin(), all.end(), [&](const Kernel& k) {
                        return name.get<std::string>() == k.name;
                    }))
                    throw InputError("kernels: unknown kernel " + name.dump() +
                                     " (known: grouped, streaming, rows, steps, reference)");
                o.kernels.push_back(name.get<std::string>());
            }
        }
    }
    if (o.heads % o.kv_heads != 0) throw InputError("heads must be a multiple of kv_heads");
    return o;
}

json run_attention_bench(const BenchOptions& o, const std::function<void(const std::string&)>& progress) {
    json kernels = json::array();
    for (const Kernel& k : all_kernels())
        if (std::find(o.kernels.begin(), o.kernels.end(), k.name) != o.kernels.end())
            kernels.push_back({{"name", k.name}, {"what", k.what}});
    json report{
        {"bench", "attention-cpu"},
        {"build", build_info_to_json(build_info())},
        {"kernel_isa", kernel_isa()},
        {"threads", 1},
        {"shape", {{"B", o.batch}, {"Hq", o.heads}, {"Hkv", o.kv_heads}, {"dh", o.head_dim}}},
        {"kernels", kernels},
        {"policy",
         {{"warmup", o.warmup}, {"min_runs", o.min_runs}, {"max_runs", o.max_runs}, {"budget_ms", o.budget_ms},
          {"statistic", "median"}, {"reference_max_T", o.reference_max_T}}},
        {"tolerance", "max |kernel - fp64 reference| over up to 16 sampled query rows <= "
                      "2 x max |fp32 reference - fp64 reference| on the same rows + 1e-6"},
    };
    json rows = json::array();
    Runs ceiling = time_ceiling(o);
    for (std::size_t T : o.prefill_T) attention_case(o, "prefill", T, T, o.kernels, rows, progress);
    for (std::size_t S : o.decode_S) {
        attention_case(o, "decode", 1, S, o.kernels, rows, progress);
        if (!o.recompute) continue;
        // Without a cache, the new token's row comes from attention over the whole prefix.
        std::vector<std::string> recompute;
        for (const char* name : {"grouped", "streaming", "steps", "reference"})
            if (std::find(o.kernels.begin(), o.kernels.end(), name) != o.kernels.end()) recompute.push_back(name);
        attention_case(o, "recompute", S, S, recompute, rows, progress);
    }
    if (o.model) model_case(o, rows, progress);
    const Runs again = time_ceiling(o);
    ceiling.wall_ms.insert(ceiling.wall_ms.end(), again.wall_ms.begin(), again.wall_ms.end());
    ceiling.cpu_ms.insert(ceiling.cpu_ms.end(), again.cpu_ms.begin(), again.cpu_ms.end());
    json ceiling_row{{"case", "ceiling"}, {"kernel", "multiply_add"}, {"T", 0}, {"S", 0}};
    put_ceiling(ceiling_row, o, ceiling);
    if (progress) progress(describe(ceiling_row));
    rows.insert(rows.begin(), ceiling_row);
    report["rows"] = rows;
    return report;
}

bool bench_all_validated(const json& report) {
    for (const json& row : report.at("rows"))
        if (row.contains("validation") && !row["validation"].value("passed", false)) return false;
    return true;
}

}  // namespace anatomy
