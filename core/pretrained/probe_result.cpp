// A ProbeResult as the trace (docs/trace-schema.md): the trace's fields, then
// the probe's, with those of the caller that are set.
#include "probe_result.hpp"

#include "../nested_json.hpp"
#include "../verify/trace.hpp"
#include "probe.hpp"

namespace anatomy {
namespace {

nlohmann::json per_second(double count, double seconds) {
    return count > 0 && seconds > 0 ? nlohmann::json(count / seconds) : nlohmann::json(nullptr);
}

// The KV cache's precision as the trace names it (the CPU keeps it in float32 or bfloat16).
std::string cache_dtype_name(DType dtype) { return dtype == DType::f32 ? "float32" : "bfloat16"; }

nlohmann::json precision_json(const ProbeResult& r) {
    return {{"weights_stored", r.weights.stored_dtypes},
            {"weights_held", to_string(r.weights.held)},
            {"weight_bytes_in_place", r.weights.bytes_in_place},
            {"weight_bytes_converted", r.weights.bytes_converted},
            {"parameters", r.weights.parameters},
            {"activations", "float32"},
            {"kv_cache", cache_dtype_name(r.cache.dtype)},
            {"note", r.precision_note}};
}

nlohmann::json shapes_json(const ProbeResult& r) {
    nlohmann::json layer = nlohmann::json::object(), block = nlohmann::json::array();
    for (const auto& [name, shape] : r.weights.layer) layer[name] = shape;
    for (const auto& [name, shape] : r.block_shapes) block.push_back({{"name", name}, {"shape", shape}});
    return {{"weights_layout", "[out, in], as stored in the checkpoint"},
            {"embed_tokens", r.weights.embed_tokens},
            {"lm_head", r.config.tie_embeddings ? nlohmann::json("tied to embed_tokens") : nlohmann::json(r.weights.lm_head)},
            {"norm", r.weights.norm},
            {"layers", r.config.n_layers},
            {"layer", layer},
            {"block", block}};
}

nlohmann::json cache_json(const ProbeResult& r) {
    const ProbeCache& cache = r.cache;
    const std::int64_t bytes_per_token = cache.payload.scalars_per_token * std::int64_t(dtype_size(cache.dtype));
    return {{"dtype", cache_dtype_name(cache.dtype)},
            {"bytes_per_scalar", dtype_size(cache.dtype)},
            {"layer_tensor_shape", {1, r.config.n_kv_heads, cache.tokens, r.config.head_dim}},
            {"scalars_per_token", cache.payload.scalars_per_token},
            {"bytes_per_token", bytes_per_token},
            {"tokens", cache.tokens},
            {"total_bytes", cache.total_bytes},
            {"expected_total_bytes", bytes_per_token * cache.tokens}};
}

nlohmann::json cached_vs_full_json(const ProbeResult& r) {
    const ProbeCachedVsFull& vs = r.cached_vs_full;
    return {{"positions", r.ids.size()},
            {"max_abs_diff", vs.max_abs_diff},
            {"tolerance", probe_logit_tolerance},
            {"max_abs_logit", vs.max_abs_logit},
            {"argmax_full", vs.argmax_full},
            {"argmax_cached", vs.argmax_cached},
            {"argmax_agrees", vs.argmax_agrees},
            {"all_argmax_agree", vs.disagreements == 0}};
}

nlohmann::json top_next_json(const std::vector<ProbeNextToken>& top_next) {
    nlohmann::json top = nlohmann::json::array();
    for (const ProbeNextToken& next : top_next)
        top.push_back({{"id", next.choice.id},
                       {"token_text", next.text},
                       {"probability", next.choice.probability},
                       {"logit", next.choice.logit}});
    return top;
}

nlohmann::json continuation_json(const ProbeContinuation& c) {
    return {{"requested", c.requested},
            {"ids", c.ids},
            {"token_text", c.token_text},
            {"text", c.text},
            {"stopped_at_eos", c.stopped_at_eos}};
}

nlohmann::json timing_json(const ProbeResult& r) {
    const std::size_t T = r.ids.size();
    const ProbeTiming& t = r.timing;
    nlohmann::json timing = {{"prefill_tokens", T},
                             {"prefill_seconds", t.prefill_seconds},
                             {"prefill_tokens_per_second", per_second(double(T), t.prefill_seconds)},
                             {"cached_prefill_seconds", t.cached_prefill_seconds},
                             {"cached_prefill_tokens_per_second", per_second(double(T), t.cached_prefill_seconds)},
                             {"decode_steps", t.decode_steps},
                             {"decode_seconds", t.decode_seconds},
                             {"decode_tokens_per_second", per_second(double(t.decode_steps), t.decode_seconds)}};
    if (r.process) {
        timing["load_seconds"] = r.process->load_seconds;
        timing["peak_rss_bytes"] = r.process->peak_rss_bytes;
        timing["load_average"] = r.process->load_average;
        timing["total_seconds"] = r.process->total_seconds;
    }
    return timing;
}

nlohmann::json checkpoint_json(const ProbeCheckpoint& c) {
    return {{"path", c.path},
            {"name", c.name},
            {"architectures", c.architectures},
            {"torch_dtype", c.torch_dtype},
            {"bos_token_id", c.bos_token_id},
            {"eos_token_ids", c.eos_token_ids},
            {"tokenizer_pieces", c.tokenizer_pieces},
            {"trained_positions", c.trained_positions ? nlohmann::json(*c.trained_positions) : nlohmann::json(nullptr)},
            {"shards", c.shards}};
}

nlohmann::json prompt_json(const ProbePrompt& p) {
    if (p.from_ids) return {{"source", "ids"}, {"ids", p.ids}};
    return {{"source", "text"}, {"text", p.text}, {"chat", p.chat}, {"default", p.is_default}};
}

nlohmann::json software_json(const ProbeSoftware& s) {
    return {{"project_version", s.build.project_version},
            {"compiler", s.build.compiler},
            {"platform", s.build.platform},
            {"cxx_standard", s.cxx_standard},
            {"nlohmann_json", s.nlohmann_json},
            {"xtensor", s.xtensor}};
}

// The probe's own field of the trace.
nlohmann::json probe_json(const ProbeResult& r) {
    nlohmann::json probe = {
        {"dtype", to_string(r.weights.held)},
        {"precision", precision_json(r)},
        {"shapes", shapes_json(r)},
        {"cache", cache_json(r)},
        {"cached_vs_full", cached_vs_full_json(r)},
        {"sinks",
         {{"queries_from", r.sinks.queries_from},
          {"queries_to", r.ids.size() - 1},
          {"uniform_baseline", r.sinks.uniform_baseline},
          {"layer_mean", r.sinks.layer_mean}}},
        {"top_next", top_next_json(r.top_next)},
        {"continuation", continuation_json(r.continuation)},
        {"timing", timing_json(r)},
    };
    if (!r.sinks.learned.empty()) probe["sinks"]["learned_share"] = r.sinks.learned;
    if (r.head_patterns) probe["head_patterns"] = head_patterns_to_json(*r.head_patterns);
    if (r.checkpoint) probe["model"] = checkpoint_json(*r.checkpoint);
    if (r.prompt) probe["prompt"] = prompt_json(*r.prompt);
    if (!r.gpu.is_null())
        probe["device"] = r.gpu;
    else if (r.cpu)
        probe["device"] = {{"kind", "cpu"}, {"name", r.cpu->name}, {"hardware_threads", r.cpu->hardware_threads},
                           {"threads_used", r.cpu->threads_used}};
    if (r.software) probe["software"] = software_json(*r.software);
    return probe;
}

}  // namespace

nlohmann::json probe_result_to_json(const ProbeResult& r) {
    const std::size_t T = r.ids.size();
    nlohmann::json layers = nlohmann::json::array();
    for (const Tensor4<float>& p : r.probabilities) layers.push_back({{"probabilities", to_nested_json(p)}});
    nlohmann::json checks = nlohmann::json::array();
    for (const CheckRecord& c : r.checks) checks.push_back(check_to_json(c));
    std::vector<std::int64_t> positions(T);
    for (std::size_t t = 0; t < T; ++t) positions[t] = std::int64_t(t);

    nlohmann::json trace = {
        {"schema_version", trace_schema_version},
        {"kind", "attention-anatomy-trace"},
        {"config", config_to_json(r.config)},
        {"tokens", nlohmann::json::array({r.ids})},
        {"token_text", nlohmann::json::array({r.token_text})},
        {"positions", positions},
        {"layers", layers},
        {"logits", to_nested_json(r.last_logits)},
        {"logits_positions", {T - 1}},
        {"checks", checks},
        {"all_checks_passed", all_passed(r.checks)},
        {"non_finite", non_finite_json(r.non_finite)},
        {"cache_payload", payload_to_json(r.cache.payload)},
        {"build", build_info_to_json(build_info())},
        {"sink_stats", r.sinks.heads},
        {"probe", probe_json(r)},
    };
    if (r.checkpoint) trace["weights"] = {{"source", "checkpoint"}, {"path", r.checkpoint->path}};
    return trace;
}

}  // namespace anatomy
