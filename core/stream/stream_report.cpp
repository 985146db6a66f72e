#include "stream_report.hpp"

#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

namespace anatomy {
namespace {

double mean_from(const std::vector<double>& losses, std::size_t from) {
    if (from >= losses.size()) return NAN;
    return std::accumulate(losses.begin() + std::ptrdiff_t(from), losses.end(), 0.0) / double(losses.size() - from);
}

std::int64_t departs_at(const std::vector<double>& losses, const std::vector<double>& reference) {
    for (std::size_t t = 0; t < losses.size(); ++t)
        if (!(std::abs(losses[t] - reference[t]) <= stream_departure_nats)) return std::int64_t(t);
    return -1;
}

}  // namespace

void require_tokens_past_window(std::size_t tokens, std::size_t window) {
    if (tokens <= window + 1)
        throw InputError("the text gives " + std::to_string(tokens) + " tokens: a window of " + std::to_string(window) +
                         " evicts nothing before " + std::to_string(window + 2) + " (give a longer text or a smaller window)");
}

template <typename Real>
StreamReport stream_report(const Model<Real>& model, const std::vector<std::int32_t>& ids, std::size_t window,
                           std::size_t sinks, std::size_t generate, bool with_reference) {
    require_sinks_inside_window(window, sinks);
    require_tokens_past_window(ids.size(), window);
    StreamReport report;
    report.tokens = ids.size(), report.window = window, report.sinks = sinks, report.first_eviction_at = window;
    const std::pair<const char*, EvictionSpec> policies[] = {
        {"keep_all", {EvictionPolicy::keep_all, 0, 0}},
        {"sliding_window", {EvictionPolicy::sliding_window, window, 0}},
        {"sinks_and_window", {EvictionPolicy::sinks_and_window, window, sinks}}};
    for (const auto& [name, spec] : policies) {
        PolicyReport p{name, stream_through_cache(model, ids, spec, generate)};
        p.mean_loss_after_first_eviction = mean_from(p.run.losses, report.first_eviction_at);
        p.mean_loss = mean_from(p.run.losses, 0);
        report.policies.push_back(std::move(p));
    }
    if (with_reference) add_reference(report, model, ids, generate);
    return report;
}

template <typename Real>
void add_reference(StreamReport& report, const Model<Real>& model, const std::vector<std::int32_t>& ids, std::size_t generate) {
    if (ids.size() != report.tokens) throw InputError("the reference must be computed on the report's own tokens");
    if (has_reference(report)) throw InputError("the report has its reference already");
    add_reference(report, stream_recomputed(model, ids, report.window, generate));
}

void add_reference(StreamReport& report, StreamRun reference) {
    if (has_reference(report)) throw InputError("the report has its reference already");
    if (reference.losses.size() + 1 != report.tokens)
        throw InputError("a reference of " + std::to_string(reference.losses.size()) + " losses for a report of " +
                         std::to_string(report.tokens) + " tokens (one loss per token after the first)");
    if (!report.policies.empty() && reference.continuation.size() != report.policies.front().run.continuation.size())
        throw InputError("the reference continues the text by " + std::to_string(reference.continuation.size()) +
                         " tokens, the policies by " + std::to_string(report.policies.front().run.continuation.size()));
    PolicyReport p{"recompute_window", std::move(reference)};
    p.mean_loss_after_first_eviction = mean_from(p.run.losses, report.first_eviction_at);
    p.mean_loss = mean_from(p.run.losses, 0);
    for (PolicyReport& policy : report.policies) policy.departs_at = departs_at(policy.run.losses, p.run.losses);
    report.policies.push_back(std::move(p));
}

bool has_reference(const StreamReport& report) {
    return !report.policies.empty() && report.policies.back().policy == "recompute_window";
}

std::size_t tokens_read(const StreamReport& report) {
    const std::size_t generated = report.policies.empty() ? 0 : report.policies.front().run.continuation.size();
    return report.tokens + (generated > 0 ? generated - 1 : 0);
}

nlohmann::json stream_report_json(const StreamReport& report, const LlamaTokenizer& tokenizer) {
    nlohmann::json out = {{"tokens", report.tokens},
                          {"window", report.window},
                          {"sinks", report.sinks},
                          {"first_eviction_at", report.first_eviction_at},
                          {"departure_nats", stream_departure_nats},
                          {"policies", nlohmann::json::array()}};
    const bool with_reference = has_reference(report);
    for (const PolicyReport& p : report.policies) {
        nlohmann::json policy = {{"policy", p.policy},
                                 {"mean_loss_after_first_eviction", p.mean_loss_after_first_eviction},
                                 {"mean_loss", p.mean_loss},
                                 {"losses", p.run.losses}};
        if (with_reference && p.policy != "recompute_window")
            policy["departs_from_reference_at"] = p.departs_at < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.departs_at);
        if (!p.run.continuation.empty())
            policy["continuation"] = {{"ids", p.run.continuation}, {"text", tokenizer.decode(p.run.continuation)}};
        out["policies"].push_back(std::move(policy));
    }
    return out;
}

template StreamReport stream_report(const Model<float>&, const std::vector<std::int32_t>&, std::size_t, std::size_t, std::size_t, bool);
template StreamReport stream_report(const Model<double>&, const std::vector<std::int32_t>&, std::size_t, std::size_t, std::size_t, bool);
template void add_reference(StreamReport&, const Model<float>&, const std::vector<std::int32_t>&, std::size_t);
template void add_reference(StreamReport&, const Model<double>&, const std::vector<std::int32_t>&, std::size_t);

}  // namespace anatomy
