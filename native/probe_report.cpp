#include "probe_report.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "json_input.hpp"
#include "verify/checks.hpp"
#include "number_text.hpp"
#include "verify_table.hpp"

namespace anatomy::native {
namespace {

std::string shape_text(const nlohmann::json& shape) {
    if (!shape.is_array()) return shape.get<std::string>();
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i].get<long long>());
    return text + "]";
}

// 1234567 -> "1,234,567"
std::string grouped(long long n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string rate(const nlohmann::json& value) {
    return value.is_null() ? "-" : number_text("%.2f tok/s", value.get<double>());
}

// One line per pattern: its strongest head, how many heads reach the threshold, and the uniform baseline.
void print_head_patterns(std::ostream& out, const nlohmann::json& patterns) {
    out << "\nhead patterns: mean weight on one key (a head shows the pattern at >= "
        << number_text("%.2f", patterns["threshold"].get<double>()) << "; induction on BOS + "
        << patterns["induction_length"] << " random ids written twice)\n";
    std::size_t heads = 0;
    for (const nlohmann::json& layer : patterns["patterns"][0]["heads"]) heads += layer.size();
    for (const nlohmann::json& pattern : patterns["patterns"]) {
        const nlohmann::json& best = pattern["strongest"];
        std::string name = pattern["name"].get<std::string>();
        std::replace(name.begin(), name.end(), '_', ' ');
        out << "  " << name << std::string(16 - std::min<std::size_t>(name.size(), 15), ' ') << "strongest layer " << best["layer"]
            << " head " << best["head"] << " " << number_text("%.3f", best["score"].get<double>()) << "  heads showing it "
            << pattern["showing"].size() << " of " << heads << "  (spread evenly " << number_text("%.3f", pattern["uniform_baseline"].get<double>())
            << ")\n";
    }
}

}  // namespace

void print_probe_report(std::ostream& out, const nlohmann::json& trace) {
    const nlohmann::json& c = trace["config"];
    const nlohmann::json& p = trace["probe"];
    const nlohmann::json& precision = p["precision"];
    const nlohmann::json& device = p["device"];
    const bool on_gpu = device["kind"] == "cuda";
    out << "attn probe: " << p["model"]["name"].get<std::string>() << " (" << p["model"]["path"].get<std::string>() << "), "
        << (on_gpu ? "cuda:" + std::to_string(device["index"].get<int>()) + ": " + device["name"].get<std::string>() +
                         ", compute capability " + device["compute_capability"].get<std::string>()
                   : "cpu: " + device["name"].get<std::string>())
        << "\n";
    out << "  " << c["n_layers"] << " layers, hidden " << c["hidden_size"] << ", " << c["n_heads"] << " query heads sharing "
        << c["n_kv_heads"] << " KV heads, head dim " << c["head_dim"] << ", SwiGLU " << c["ffn_size"] << ", vocabulary "
        << c["vocab_size"] << "\n";
    out << "  weights " << precision["weights_held"].get<std::string>() << " (stored " << precision["weights_stored"].get<std::string>()
        << "; " << grouped(precision["weight_bytes_in_place"].get<long long>()) << " B read in place, "
        << grouped(precision["weight_bytes_converted"].get<long long>()) << " B converted), activations float32, KV cache "
        << precision["kv_cache"].get<std::string>() << "\n\n";

    out << "prompt (" << trace["tokens"][0].size() << " tokens):";
    for (const nlohmann::json& text : trace["token_text"][0]) out << " " << json_text(text);
    out << "\n\nweights per layer, as stored [out, in]:";
    for (const char* name : {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "input_layernorm",
                             "post_attention_layernorm"})
        out << (std::string(name) == "gate_proj" ? "\n   " : "") << "  " << name << " " << shape_text(p["shapes"]["layer"][name]);
    out << "\n     embed_tokens " << shape_text(p["shapes"]["embed_tokens"]) << "  lm_head " << shape_text(p["shapes"]["lm_head"]) << "\n";
    out << "layer 0 on this prompt, in the order computed:";
    std::size_t column = 0;
    for (const nlohmann::json& step : p["shapes"]["block"]) {
        const std::string item = "  " + step["name"].get<std::string>() + " " + shape_text(step["shape"]);
        if (column + item.size() > 110) out << "\n   ", column = 0;
        out << item;
        column += item.size();
    }
    const nlohmann::json& cache = p["cache"];
    out << "\nKV cache (" << cache["dtype"].get<std::string>() << "): " << grouped(cache["scalars_per_token"].get<long long>())
        << " scalars = " << grouped(cache["bytes_per_token"].get<long long>()) << " B per token; " << cache["tokens"]
        << " tokens held = " << grouped(cache["total_bytes"].get<long long>()) << " B, each layer's keys and values "
        << shape_text(cache["layer_tensor_shape"]) << "\n\n";

    std::vector<CheckRecord> checks;
    for (const nlohmann::json& r : trace["checks"])
        checks.push_back({r["id"], r["name"], r["compares"], r["max_abs_error"].is_null() ? INFINITY : r["max_abs_error"].get<double>(),
                          r["tolerance"], r["relation"], r["passed"]});
    print_check_table(out, checks);
    if (!trace["non_finite"].is_null())
        out << "The first value of the pass that is not finite: " << trace["non_finite"]["text"].get<std::string>() << " ("
            << trace["non_finite"]["count_in_tensor"] << " in that tensor)\n";

    const nlohmann::json& sinks = p["sinks"];
    out << "\nattention sinks: mean weight that queries " << sinks["queries_from"] << ".." << sinks["queries_to"]
        << " give position 0 (spread evenly it would be " << number_text("%.3f", sinks["uniform_baseline"].get<double>()) << ")\n";
    const nlohmann::json& per_head = trace["sink_stats"];
    for (std::size_t l = 0; l < per_head.size(); ++l) {
        double high = 0;
        for (const nlohmann::json& h : per_head[l]) high = std::max(high, h.get<double>());
        out << "  layer " << (l < 10 ? " " : "") << l << "  mean over heads " << number_text("%.3f", sinks["layer_mean"][l].get<double>())
            << "  highest head " << number_text("%.3f", high) << "\n";
    }
    if (sinks.contains("learned_share")) {
        out << "learned attention sinks: mean share the same queries give the sink itself, per head\n";
        for (std::size_t l = 0; l < sinks["learned_share"].size(); ++l) {
            out << "  layer " << (l < 10 ? " " : "") << l << " ";
            for (const nlohmann::json& h : sinks["learned_share"][l]) out << " " << number_text("%.3f", h.get<double>());
            out << "\n";
        }
    }
    if (p.contains("head_patterns")) print_head_patterns(out, p["head_patterns"]);
    out << "\nnext token:";
    for (const nlohmann::json& t : p["top_next"])
        out << "  " << json_text(t["token_text"]) << " " << number_text("%.3f", t["probability"].get<double>());
    const nlohmann::json& cont = p["continuation"];
    out << "\ncontinuation (" << cont["ids"].size() << " of " << cont["requested"] << " tokens"
        << (cont["stopped_at_eos"].get<bool>() ? ", stopped at EOS" : "") << "): " << json_text(cont["text"]) << "\n\n";

    const nlohmann::json& t = p["timing"];
    out << "time: load " << number_text("%.2f s", t["load_seconds"].get<double>()) << "; prefill " << t["prefill_tokens"] << " tokens in one pass "
        << number_text("%.2f s", t["prefill_seconds"].get<double>()) << " (" << rate(t["prefill_tokens_per_second"]) << "); one token at a time "
        << number_text("%.2f s", t["cached_prefill_seconds"].get<double>()) << " (" << rate(t["cached_prefill_tokens_per_second"])
        << "); decode " << t["decode_steps"] << " steps " << number_text("%.2f s", t["decode_seconds"].get<double>()) << " ("
        << rate(t["decode_tokens_per_second"]) << ")\n";
    out << "memory: peak RSS " << number_text("%.1f MB", double(t["peak_rss_bytes"].get<long long>()) / 1e6)
        << " (mapped weight pages count once read); load average " << number_text("%.2f", t["load_average"][0].get<double>()) << " "
        << number_text("%.2f", t["load_average"][1].get<double>()) << " " << number_text("%.2f", t["load_average"][2].get<double>());
    if (on_gpu)
        out << "; the passes ran on the GPU\n";
    else
        out << " on " << device["hardware_threads"] << " hardware threads, " << device["threads_used"] << " used\n";
}

}  // namespace anatomy::native
