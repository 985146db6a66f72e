// The check suite run on a device by replay (core/verify/device_attention_backend.hpp),
// with a "device" played here by host code: a faithful one completes in L + 1 rounds
// and passes every check, having answered every attention the suite used; one whose
// decode answers are 1e-2 off in one element fails checks a and b; one whose mask lets a row see the next key
// fails d and e3; a wrong answer is refused in words.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "host_attention.hpp"
#include "model/token_batch.hpp"
#include "model/weights.hpp"
#include "ops/attention.hpp"
#include "verify/check_suite.hpp"
#include "verify/device_attention_backend.hpp"

using namespace anatomy;

namespace {

enum class DeviceFault { none, decode_off, sees_next_key };

// The device: the host's attention (host_attention.hpp) on the request, with the fault.
void answer_on_host(DeviceAttentionBackend& backend, const AttentionRequest& r, DeviceFault fault) {
    KernelInputs inputs = r.inputs;
    if (fault == DeviceFault::sees_next_key)
        for (std::size_t t = 0; t < std::size_t(r.shape.T); ++t)
            if (inputs.ranges[t * 4 + 1] < r.shape.S) inputs.ranges[t * 4 + 1] += 1;
    test::HostRun run = test::host_attention(r.shape, inputs);
    if (fault == DeviceFault::decode_off && r.shape.T == 1) run.out[0] += 1e-2f;
    // A decode kernel writes no probabilities.
    backend.answer(r.key, run.out, r.shape.T == 1 ? std::vector<float>{} : run.probs);
}

struct SuiteRun {
    std::vector<CheckRecord> checks;
    int rounds = 0;
};

SuiteRun run_by_replay(const Model<float>& model, DeviceFault fault) {
    DeviceAttentionBackend backend(model);
    const TokenIds tokens = make_batch({1, 2, 3, 4, 5, 6}, 2, model.config.vocab_size);
    SuiteRun run;
    for (run.rounds = 1; run.rounds <= 10; ++run.rounds) {
        backend.begin_round();
        run.checks = run_check_suite(backend, tokens, device_suite_options());
        if (backend.complete()) break;
        for (const AttentionRequest& r : backend.requests()) answer_on_host(backend, r, fault);
    }
    return run;
}

std::vector<std::string> failed(const std::vector<CheckRecord>& checks) {
    std::vector<std::string> names;
    for (const CheckRecord& c : checks)
        if (!c.passed) names.push_back(c.id);
    return names;
}

}  // namespace

TEST_CASE("by replay, a faithful device completes in L + 1 rounds and passes every check") {
    const Model<float> model = random_model(tiny_config());
    const SuiteRun run = run_by_replay(model, DeviceFault::none);
    CHECK(run.rounds == model.config.n_layers + 1);
    std::vector<std::string> ids;
    for (const CheckRecord& c : run.checks) ids.push_back(c.id);
    CHECK(ids == std::vector<std::string>{"a", "b", "d", "e1", "e2", "e3", "f2", "g", "h2"});
    CHECK(failed(run.checks).empty());
}

TEST_CASE("with learned sinks, too") {
    ModelConfig config = tiny_config();
    config.attention_sinks = true;
    const Model<float> model = random_model(config, 2);
    const SuiteRun run = run_by_replay(model, DeviceFault::none);
    CHECK(run.rounds == config.n_layers + 1);
    CHECK(failed(run.checks).empty());
}

TEST_CASE("a device whose decode answers are off fails a and b; one whose mask admits the next key fails d and e3") {
    const Model<float> model = random_model(tiny_config());
    const std::vector<std::string> decode = failed(run_by_replay(model, DeviceFault::decode_off).checks);
    CHECK(decode == std::vector<std::string>{"a", "b"});  // b's chunks end with one token: a decode step
    const std::vector<std::string> leak = failed(run_by_replay(model, DeviceFault::sees_next_key).checks);
    CHECK(std::find(leak.begin(), leak.end(), "d") != leak.end());
    CHECK(std::find(leak.begin(), leak.end(), "e3") != leak.end());
}

TEST_CASE("an answer to no request, or of the wrong size, is refused") {
    const Model<float> model = random_model(tiny_config());
    DeviceAttentionBackend backend(model);
    backend.reset(1);
    CHECK_THROWS_AS(backend.answer("0123456789abcdef", {}, {}), InputError);
    backend.begin_round();
    run_check_suite(backend, make_batch({1, 2, 3}, 1, model.config.vocab_size));
    REQUIRE_FALSE(backend.requests().empty());
    const AttentionRequest& r = backend.requests().front();
    CHECK_THROWS_AS(backend.answer(r.key, std::vector<float>(3), {}), InputError);
}
