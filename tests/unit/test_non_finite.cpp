// A value that is NaN or infinite is never a pass: every comparison (max_abs_diff,
// the check suite, the probe's checks, attn diff, the exercise judge) counts one on
// either side as an infinite error, and the reports name the first such value.
// Each case puts one such value where a check reads it; the same case without it
// passes, so the test fails if the check ignores it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <xtensor/xview.hpp>

#include "checkpoint/hf_llama.hpp"
#include "diff/diff.hpp"
#include "judge/compare.hpp"
#include "pretrained/probe.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"
#include "verify/check_suite.hpp"
#include "verify/compare.hpp"
#include "test_helpers.hpp"

using namespace anatomy;
using namespace anatomy::test;

namespace {

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

// The tiny model with one weight of layer 0's q_proj replaced by `value` (head 0's first output channel).
Model<float> with_q_weight(float value) {
    Model<float> model = random_model(tiny_config());
    model.weights.layers[0].wq(5, 0) = value;  // [in, out]
    return model;
}

}  // namespace

TEST_CASE("max_abs_diff: a value that is not finite on either side is an infinite error") {
    const Vector<float> a = {1.0f, 2.0f, 3.0f};
    CHECK(max_abs_diff(a, a) == 0.0);
    for (const float bad : {nan_f, inf_f, -inf_f}) {
        Vector<float> b = a;
        b(1) = bad;
        CHECK(std::isinf(max_abs_diff(a, b)));
        CHECK(std::isinf(max_abs_diff(b, a)));
        CHECK(std::isinf(max_abs_diff(b, b)));  // the same NaN or infinity on both sides is not agreement
        CHECK(std::isinf(max_abs(b)));
    }
    CHECK(std::isinf(worse_error(0.5, not_a_number)));
    CHECK(worse_error(0.5, 0.25) == 0.5);
}

TEST_CASE("make_check: an error that is not finite never passes, whichever the relation") {
    for (const double error : {not_a_number, infinity}) {
        CHECK_FALSE(make_check("x", "x", "", error, 1e-5).passed);
        CHECK_FALSE(make_check("x", "x", "", error, 1e-3, ">").passed);  // a difference that must exist cannot be infinite
        CHECK(std::isinf(make_check("x", "x", "", error, 1e-5).max_abs_error));
    }
    CHECK_FALSE(make_check("x", "x", "", 0.0, infinity).passed);  // nor is a bound that is not finite a bound
    CHECK(make_check("x", "x", "", 1e-6, 1e-5).passed);
    CHECK(make_check("x", "x", "", 0.5, 1e-3, ">").passed);
}

TEST_CASE("e1-e3 fail on a probability matrix that holds a NaN anywhere, even in a row that sums to 1") {
    Tensor4<float> p = xt::zeros<float>({1, 1, 3, 3});  // [B, Hq, T, S]: a valid causal matrix
    p(0, 0, 0, 0) = 1;
    p(0, 0, 1, 0) = p(0, 0, 1, 1) = 0.5f;
    p(0, 0, 2, 0) = p(0, 0, 2, 1) = p(0, 0, 2, 2) = 1.0f / 3;
    for (const CheckRecord& r : check_probabilities({p})) CHECK(r.passed);
    Tensor4<float> bad = p;
    bad(0, 0, 2, 1) = nan_f;  // row 2 only: e2 reads row 0 and e3 the forbidden cells, both still clean
    for (const CheckRecord& r : check_probabilities({bad})) {
        CAPTURE(r.id);
        CHECK_FALSE(r.passed);
        CHECK(std::isinf(r.max_abs_error));
    }
}

TEST_CASE("attn verify's checks on a model with one NaN weight: every check that reads the pass fails") {
    const TokenIds tokens = {{1, 2, 3, 4, 5}};
    for (const CheckRecord& r : run_checks(with_q_weight(0.25f), tokens)) CHECK(r.passed);
    const std::vector<CheckRecord> checks = run_checks(with_q_weight(nan_f), tokens);
    for (const char* id : {"a", "b", "c", "d", "e1", "e2", "e3", "g", "h1", "h2"}) {
        CAPTURE(id);
        CHECK_FALSE(find_check(checks, id).passed);
        CHECK(std::isinf(find_check(checks, id).max_abs_error));
    }
    // f1 and f2 count the cache's scalars and bytes, which no weight changes.
    CHECK(find_check(checks, "f1").passed);
    CHECK(find_check(checks, "f2").passed);
}

TEST_CASE("the first value of a pass that is not finite is named, in the order the pass computes") {
    const TokenIds tokens = {{1, 2, 3}};
    for (const auto& [value, tensor] : {std::pair{nan_f, "layers.0.q"}, {inf_f, "layers.0.q"}}) {
        const Model<float> model = with_q_weight(value);
        TinyBackend backend(model);
        backend.reset(1);
        PassCapture capture;
        const Tensor3<float> logits = backend.forward(tokens, &capture);
        const std::optional<NonFinite> found = first_non_finite(capture.layers, logits);
        REQUIRE(found);
        CHECK(found->tensor == tensor);
        CHECK(found->index == std::vector<std::size_t>{0, 0, 0, 0});  // head 0's channel 0 at position 0: x[5] * NaN
        CHECK(describe(*found).rfind(std::string(tensor) + " [0, 0, 0, 0] = ", 0) == 0);
    }
    const Model<float> clean = with_q_weight(0.25f);
    TinyBackend backend(clean);
    backend.reset(1);
    PassCapture capture;
    CHECK_FALSE(first_non_finite(capture.layers, backend.forward(tokens, &capture)));
}

TEST_CASE("a checkpoint's weights that are not finite are counted from their stored bits, in every dtype") {
    Model<float> model = random_model(tiny_config());
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
        CAPTURE(dtype_name(dtype));
        const std::vector<std::uint8_t> clean_bytes = hf_safetensors(model, dtype);
        const SafetensorsView clean = SafetensorsView::parse(clean_bytes.data(), clean_bytes.size());
        CHECK_FALSE(non_finite_weights(safetensors_views({&clean})));

        Model<float> broken = model;
        broken.weights.embedding(3, 7) = nan_f;
        broken.weights.layers[1].ffn_norm(2) = -inf_f;
        const std::vector<std::uint8_t> bytes = hf_safetensors(broken, dtype);
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        const std::optional<NonFinite> found = non_finite_weights(safetensors_views({&view}));
        REQUIRE(found);
        CHECK(found->count == 2);
        CHECK(found->tensor == "model.embed_tokens.weight");  // the first tensor written
        CHECK(found->index == std::vector<std::size_t>{3, 7});
        CHECK(std::isnan(found->value));
    }
}

TEST_CASE("the probe's checks fail on a checkpoint with a NaN weight, and its trace names the first NaN") {
    const Model<float> clean = with_q_weight(0.25f), broken = with_q_weight(nan_f);
    const LlamaTokenizer tokenizer = LlamaTokenizer::from_json(synthetic_tokenizer_json(32));
    ProbeRequest request;
    request.ids = {1, 5, 9, 4, 17, 3};
    for (const Model<float>* model : {&clean, &broken}) {
        const std::vector<std::uint8_t> bytes = hf_safetensors(*model, DType::f32);
        const SafetensorsView view = SafetensorsView::parse(bytes.data(), bytes.size());
        const PretrainedModel pretrained = pretrained_from_hf(model->config, {&view}, "ck", WeightPrecision::float32);
        const nlohmann::json trace = probe_result_to_json(run_probe(pretrained, tokenizer, request));
        const bool is_clean = model == &clean;
        CHECK(trace["all_checks_passed"].get<bool>() == is_clean);
        for (const nlohmann::json& check : trace["checks"]) {
            CAPTURE(check["id"]);
            CHECK(check["passed"].get<bool>() == is_clean);
        }
        CHECK(trace["non_finite"].is_null() == is_clean);
        if (!is_clean) CHECK(trace["non_finite"]["tensor"] == "layers.0.probs");  // the pretrained pass keeps probs only
    }
}

TEST_CASE("attn diff: a NaN or an infinity on either side never agrees") {
    const Model<float> model = random_model(tiny_config());
    const TokenIds tokens = {{1, 2, 3}};
    // The core's own logits, given back: they agree.
    TinyBackend backend(model);
    backend.reset(1);
    const Tensor3<float> ours = backend.forward(tokens, nullptr);
    std::vector<double> logits(ours.begin(), ours.end());
    const auto report = [&](const std::vector<double>& values) {
        return diff_report(model, tokens, {{"logits", {{1, 3, 32}, values, false}}});
    };
    CHECK(report(logits)["agrees"].get<bool>());
    for (const double bad : {not_a_number, infinity}) {
        std::vector<double> theirs = logits;
        theirs[40] = bad;
        const nlohmann::json r = report(theirs);
        CHECK_FALSE(r["agrees"].get<bool>());
        CHECK(std::isinf(r["compared"][0]["max_abs_error"].get<double>()));
        CHECK(r.dump().find("\"max_abs_error\":null") != std::string::npos);  // JSON has no infinity
        CHECK(r["first_divergence"]["index"] == nlohmann::json({0, 1, 8}));
        CHECK(r["first_divergence"]["theirs"] == non_finite_text(bad));
    }
    // Ours NaN (a NaN weight) and theirs the same NaN: still not agreement.
    const Model<float> broken = with_q_weight(nan_f);
    TinyBackend broken_backend(broken);
    broken_backend.reset(1);
    const Tensor3<float> nan_logits = broken_backend.forward(tokens, nullptr);
    const nlohmann::json r =
        diff_report(broken, tokens, {{"logits", {{1, 3, 32}, std::vector<double>(nan_logits.begin(), nan_logits.end()), false}}});
    CHECK_FALSE(r["agrees"].get<bool>());
    CHECK(r["first_divergence"]["ours"] == "nan");
}

TEST_CASE("the exercise judge: NaN or Infinity never passes, even against the same value; it may still name a mistake") {
    using judge::compare;
    const judge::Tolerance tolerance;
    const nlohmann::json expected = {0.5, 0.25}, right = {0.5, 0.25};
    CHECK(compare(expected, right, tolerance).passed);
    for (const char* bad : {"NaN", "Infinity", "-Infinity"}) {
        CAPTURE(bad);
        const nlohmann::json with_bad = {0.5, bad};
        const judge::Comparison got_bad = compare(expected, with_bad, tolerance);
        CHECK_FALSE(got_bad.passed);
        CHECK(got_bad.problem == "nonfinite");
        CHECK_FALSE(compare(with_bad, with_bad, tolerance).passed);  // expected and got the same NaN: not a pass
        CHECK_FALSE(compare(with_bad, right, tolerance).passed);     // an expected value that is not finite passes nothing
        CHECK(judge::agrees(with_bad, with_bad, tolerance));         // but a mistake that computes it is matched
    }
    CHECK_FALSE(judge::agrees(nlohmann::json{"Infinity"}, nlohmann::json{"-Infinity"}, tolerance));
}
