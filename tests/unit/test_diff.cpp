// attn diff on a model with learned attention sinks (core/diff/diff.hpp): a learner's
// tensors from the same model agree; tensors from the same weights with the sinks left
// out first diverge at layer 0's probabilities, and that mistake is named.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "diff/diff.hpp"
#include "model/forward.hpp"

using namespace anatomy;

namespace {

// One layer-0 tensor of a forward pass, as a learner's file would hold it (float64).
LearnerTensor learner(const Tensor4<double>& t) {
    return {{t.shape().begin(), t.shape().end()}, std::vector<double>(t.begin(), t.end()), true};
}

std::map<std::string, LearnerTensor> layer0_attention(const Model<double>& model, const TokenIds& tokens) {
    ForwardCapture<double> capture;
    full_forward(model, tokens, AttentionPath::grouped, &capture);
    return {{"layers.0.scores", learner(capture.layers[0].scores)},
            {"layers.0.probs", learner(capture.layers[0].probs)},
            {"layers.0.heads", learner(capture.layers[0].head_outputs)}};
}

}  // namespace

TEST_CASE("attn diff on a model with attention sinks: agreement, and the sinks left out named") {
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    const Model<float> model = random_model(config, 6);
    const TokenIds tokens = {{1, 7, 3, 3, 9, 12}};

    const nlohmann::json same = diff_report(model, tokens, layer0_attention(cast_model<double>(model), tokens));
    CHECK(same["agrees"].get<bool>());

    Model<double> without = cast_model<double>(model);
    without.config.attention_sinks = false;
    for (LayerWeights<double>& l : without.weights.layers) l.sinks = Vector<double>();
    const nlohmann::json report = diff_report(model, tokens, layer0_attention(without, tokens));
    INFO(report.dump());
    CHECK_FALSE(report["agrees"].get<bool>());
    CHECK(report["first_divergence"]["tensor"] == "layers.0.probs");  // the scores agree: the sink joins only the softmax
    REQUIRE(report["diagnosis"].is_object());
    CHECK(report["diagnosis"]["mistake"] == "sinks_ignored");
}
