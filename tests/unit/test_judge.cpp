// The exercise judge: references pass, every known mistake fails with its own name.
#include <doctest/doctest.h>

#include "judge/judge.hpp"
#include "judge/mistakes.hpp"
#include "judge/reference.hpp"
#include "tensor.hpp"

using namespace anatomy;
using namespace anatomy::judge;

namespace {

json outputs_of(const Exercise& e, const std::function<json(const json&)>& solution) {
    json outputs = json::array();
    for (const JudgeCase& c : e.cases) outputs.push_back({{"value", solution(c.args)}});
    return outputs;
}

}  // namespace

TEST_CASE("every exercise has cases of the kinds the judge promises") {
    CHECK(exercises().size() == 12);
    for (const Exercise& e : exercises()) {
        INFO(e.id);
        CHECK(e.cases.size() >= 2);
        CHECK(!e.mistakes.empty());
    }
    CHECK_THROWS_AS(find_exercise("nope"), InputError);
}

TEST_CASE("the reference solution passes every exercise") {
    for (const Exercise& e : exercises()) {
        const json report = judge_outputs(e.id, outputs_of(e, e.reference));
        INFO(e.id << ": " << report.dump());
        CHECK(report["passed"] == true);
        CHECK(report["diagnosis"].is_null());
    }
}

TEST_CASE("each known mistake fails and is diagnosed by name") {
    for (const Exercise& e : exercises())
        for (const Mistake& m : e.mistakes) {
            const json report = judge_outputs(e.id, outputs_of(e, m.compute));
            INFO(e.id << " / " << m.id << ": " << report["diagnosis"].dump());
            CHECK(report["passed"] == false);
            REQUIRE(report["diagnosis"].is_object());
            CHECK(report["diagnosis"]["id"] == m.id);
        }
}

TEST_CASE("diagnoses use each exercise's own symbols: dh for the head size where d is the model width") {
    const Exercise& mha = find_exercise("causalMultiHeadAttention");
    bool names_model_width = false;
    for (const Mistake& m : mha.mistakes) {
        INFO(m.id << ": " << m.title << " / " << m.explanation);
        CHECK(m.title.find("sqrt(D)") == std::string::npos);
        CHECK(m.explanation.find("sqrt(D)") == std::string::npos);
        names_model_width = names_model_width || m.id == "scaled_by_sqrt_d";
    }
    CHECK(names_model_width);
    // Where D is the head size (the attention exercise's q [B, H, T, D]), the text says D.
    for (const Mistake& m : find_exercise("attention").mistakes)
        if (m.id == "missing_scale") CHECK(m.title == "Missing 1/sqrt(D)");
}

TEST_CASE("the flexible attention recipe, left at its defaults, equals the core's attention") {
    for (const Exercise& e : {find_exercise("attention"), find_exercise("groupedQueryAttention")})
        for (const JudgeCase& c : e.cases) {
            const bool causal = c.args.size() < 4 || c.args[3].get<bool>();
            AttentionRecipe recipe;
            if (!causal) recipe.mask = MaskRule::none;
            const Nd ours = attention_recipe(nd_from_json(c.args[0], "q"), nd_from_json(c.args[1], "k"), nd_from_json(c.args[2], "v"), recipe);
            CHECK(agrees(nd_to_json(ours), e.reference(c.args), Tolerance{1e-12, 1e-12}));
        }
}

TEST_CASE("failures report shapes, non-finite values and the first mismatch") {
    const Exercise& e = find_exercise("softmax");
    json outputs = outputs_of(e, e.reference);
    outputs[0]["value"] = json::array({json::array({1, 2})});  // wrong shape
    outputs[1]["value"][0][0] = "NaN";
    outputs[2] = {{"error", "ReferenceError: foo is not defined (line 3)"}};
    outputs[3]["value"] = "a string";
    const json report = judge_outputs("softmax", outputs);
    CHECK(report["passed"] == false);
    CHECK(report["passed_count"] == 0);
    CHECK(report["cases"][0]["problem"] == "shape");
    CHECK(report["cases"][0]["details"]["got_shape"] == json::array({1, 2}));
    CHECK(report["cases"][1]["problem"] == "nonfinite");
    CHECK(report["cases"][1]["details"]["nonfinite"][0]["index"] == "[0, 0]");
    CHECK(report["cases"][1]["details"]["first_mismatch"]["got"] == "NaN");
    CHECK(report["cases"][2]["problem"] == "error");
    CHECK(report["cases"][3]["problem"] == "type");
    CHECK(report["diagnosis"].is_null());
}

TEST_CASE("outputs of another structure are refused before any case is judged, naming the first wrong entry") {
    const Exercise& e = find_exercise("softmax");
    const json good = outputs_of(e, e.reference);
    REQUIRE(judge_outputs("softmax", good)["passed"] == true);
    const auto refused = [](const json& outputs, const std::string& message) {
        CAPTURE(outputs.dump());
        CHECK_THROWS_WITH_AS(judge_outputs("softmax", outputs), doctest::Contains(message.c_str()), InputError);
    };
    refused(json::array({1, 2, 3, 4}), "output 1 of 4 for softmax (case \"" + e.cases[0].name + "\") is a number (1); expected {\"value\": an array of shape [3, 5]}");
    json second_empty = good;
    second_empty[1] = json::object();
    refused(second_empty, "output 2 of 4 for softmax (case \"" + e.cases[1].name + "\") is an object with neither \"value\" nor \"error\"");
    json error_number = good;
    error_number[3] = {{"error", 5}};
    refused(error_number, "output 4 of 4 for softmax (case \"" + e.cases[3].name + "\") is an object whose \"error\" is a number (5), not a string");
    refused(json::object({{"value", 1}}), "expected 4 outputs for softmax");
    refused(json::array({good[0]}), "not a list of 1");
    // An exercise whose result is an object of named values says so.
    CHECK_THROWS_WITH_AS(judge_outputs("attentionFlops", json::array({1, 2, 3})),
                         doctest::Contains("expected {\"value\": an object with fields projections, scores, weighted}"), InputError);
}

TEST_CASE("tolerance: rounding-level differences pass, small real errors fail") {
    const Exercise& e = find_exercise("rmsnorm");
    json outputs = outputs_of(e, e.reference);
    json nudged = outputs;
    double& x = nudged[0]["value"][0][0][0].get_ref<json::number_float_t&>();
    x *= 1 + 1e-12;
    CHECK(judge_outputs("rmsnorm", nudged)["passed"] == true);
    x *= 1 + 1e-4;
    const json report = judge_outputs("rmsnorm", nudged);
    CHECK(report["passed"] == false);
    CHECK(report["cases"][0]["details"]["first_mismatch"]["index"] == "[0, 0, 0]");
}

TEST_CASE("JSON values round-trip NaN and infinities as strings, and ragged lists are rejected") {
    const Nd x = nd_from_json(json::parse(R"([["NaN", "-Infinity"], [1, 2.5]])"), "x");
    CHECK(std::isnan(x(0, 0)));
    CHECK(x(0, 1) == -INFINITY);
    CHECK(nd_to_json(x) == json::parse(R"([["NaN", "-Infinity"], [1.0, 2.5]])"));
    CHECK_THROWS_AS(nd_from_json(json::parse("[[1, 2], [3]]"), "x"), InputError);
    CHECK_THROWS_AS(nd_from_json(json::parse("[[1, 2], 3]"), "x"), InputError);
    CHECK_THROWS_AS(nd_from_json(json::parse(R"([[1, "two"]])"), "x"), InputError);
}
