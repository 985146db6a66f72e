// The check-and-time harness itself (core/bench/harness.hpp): the tolerance
// rule's numbers, the timing loop's run counts under min_runs, max_runs and the
// budget (with a fake timer whose calls take a scripted time), and that a kernel
// which fails its validation is reported failed and never timed.
#include <cmath>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

#include "bench/attention_check.hpp"
#include "bench/harness.hpp"
#include "model/random_tensor.hpp"
#include "ops/attention_kernels.hpp"

using namespace anatomy;

namespace {

// Each timed call "takes" call_ms; counts what the loop asked of it.
class FakeTimer final : public Timer {
public:
    explicit FakeTimer(double call_ms) : call_ms_(call_ms) {}
    void start() override { ++starts; }
    double time_ms(const std::function<void()>& call) override {
        ++timed;
        call();
        return call_ms_;
    }
    int starts = 0, timed = 0;

private:
    double call_ms_;
};

struct Counted {
    int calls = 0;
    int timed_runs = 0;   // runs_ms.size()
    int warmup_seen = 0;  // calls made before the timer was started
};

Counted run_loop(const TimingPolicy& policy, double call_ms) {
    FakeTimer timer(call_ms);
    Counted c;
    const Timing timing = time_calls(timer, policy, [&] {
        ++c.calls;
        if (timer.starts == 0) ++c.warmup_seen;
    });
    c.timed_runs = int(timing.runs_ms.size());
    CHECK(timer.starts == 1);
    CHECK(timer.timed == c.timed_runs);
    CHECK(timing.median_ms == call_ms);
    return c;
}

}  // namespace

TEST_CASE("the one tolerance rule: 2 x the same-precision error + each side's floor") {
    CHECK(attention_tolerance(0.0, 0.0) == 0.0);
    CHECK(attention_tolerance(1e-7, kCpuToleranceFloor) == doctest::Approx(1.2e-6).epsilon(1e-12));
    CHECK(attention_tolerance(0.25, 0.5) == 1.0);  // exact in binary: twice, then plus
    // The floors, exactly as the two benchmarks had them.
    CHECK(kCpuToleranceFloor == 1e-6);
    CHECK(kFp32OutputUnit == 4 * std::ldexp(1.0, -23));
    CHECK(kBf16OutputUnit == std::ldexp(1.0, -8));
    CHECK(output_rounding_floor(kBf16OutputUnit, 3.0) == 3.0 / 256);
    CHECK(attention_tolerance(0.01, output_rounding_floor(kBf16OutputUnit, 2.0)) == doctest::Approx(0.02 + 2.0 / 256));
    // At the tolerance passes, above it or NaN fails.
    CHECK(within_tolerance(1.0, 1.0));
    CHECK_FALSE(within_tolerance(std::nextafter(1.0, 2.0), 1.0));
    CHECK_FALSE(within_tolerance(std::numeric_limits<double>::quiet_NaN(), 1.0));
    CHECK_FALSE(within_tolerance(std::numeric_limits<double>::infinity(), 1.0));
}

TEST_CASE("the timing loop: warm-up, then max_runs, or min_runs and the budget") {
    SUBCASE("max_runs stops a loop the budget never would") {
        const Counted c = run_loop({2, 3, 5, 1e9}, 10.0);
        CHECK(c.warmup_seen == 2);
        CHECK(c.timed_runs == 5);
        CHECK(c.calls == 7);
    }
    SUBCASE("the budget stops the loop once min_runs are done") {
        // 10 ms a call, 35 ms budget: 30 ms spent after 3, 40 ms after 4: stop at 4.
        CHECK(run_loop({0, 3, 100, 35}, 10.0).timed_runs == 4);
        // The budget reached exactly counts as spent.
        CHECK(run_loop({0, 1, 100, 30}, 10.0).timed_runs == 3);
    }
    SUBCASE("min_runs are made however long they take") {
        CHECK(run_loop({1, 5, 100, 1}, 10.0).timed_runs == 5);
        CHECK(run_loop({0, 0, 100, 0}, 10.0).timed_runs == 1);
    }
    SUBCASE("max_runs bounds min_runs, and at least one call is timed") {
        CHECK(run_loop({0, 5, 3, 1e9}, 10.0).timed_runs == 3);
        CHECK(run_loop({0, 5, 0, 1e9}, 10.0).timed_runs == 1);
    }
    SUBCASE("the GPU's policy: 3 warm-up, at least 5, at most max_runs, 2 s") {
        const TimingPolicy gpu = gpu_timing_policy(20);
        CHECK(gpu.warmup == 3);
        CHECK(gpu.min_runs == 5);
        CHECK(gpu.max_runs == 20);
        CHECK(gpu.budget_ms == 2000);
        CHECK(run_loop(gpu, 1.0).timed_runs == 20);    // fast kernel: max_runs
        CHECK(run_loop(gpu, 500.0).timed_runs == 5);   // slow kernel: min_runs (2.5 s)
        CHECK(run_loop(gpu, 300.0).timed_runs == 7);   // 1.8 s after 6, 2.1 s after 7
        CHECK(run_loop(gpu_timing_policy(3), 1.0).timed_runs == 3);
        CHECK(run_loop(gpu, 1.0).warmup_seen == 3);
    }
}

TEST_CASE("median of the runs") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == 2.5);
    CHECK(median({7}) == 7);
}

TEST_CASE("the steady-clock timer keeps each call's CPU time beside its wall time") {
    SteadyClockTimer timer;
    const Timing timing = time_calls(timer, {0, 4, 4, 0}, [] {
        volatile double x = 0;
        for (int i = 0; i < 1000; ++i) x = x + i;
    });
    CHECK(timing.runs_ms.size() == 4);
    CHECK(timer.cpu_ms().size() == 4);
    for (double ms : timing.runs_ms) CHECK(ms >= 0);
    time_calls(timer, {0, 1, 1, 0}, [] {});
    CHECK(timer.cpu_ms().size() == 1);  // start() begins a new series
}

TEST_CASE("validate, then time: a kernel that fails its check is reported failed and never timed") {
    const Tensor4<float> q = random_tensor<float, 4>({1, 4, 9, 8}, 21), k = random_tensor<float, 4>({1, 2, 9, 8}, 22),
                         v = random_tensor<float, 4>({1, 2, 9, 8}, 23);
    const ReferenceRows reference = reference_rows(q, k, v);
    // A deliberately wrong kernel: attention with the keys' sign flipped.
    const auto wrong_kernel = [&] { return attention_grouped(q, Tensor4<float>(-k), v); };
    const auto right_kernel = [&] { return attention_grouped(q, k, v); };

    for (const bool wrong : {true, false}) {
        CAPTURE(wrong);
        FakeTimer timer(1.0);
        int kernel_calls = 0;
        Validation check;
        const auto run = [&] {
            ++kernel_calls;
            return wrong ? wrong_kernel() : right_kernel();
        };
        const std::optional<Timing> timing = validate_then_time(
            [&] {
                check = validate_rows(run(), reference);
                return check.passed;
            },
            timer, {2, 3, 3, 0}, [&] { run(); });
        CHECK(check.rows_checked == 9);
        if (wrong) {
            CHECK_FALSE(check.passed);
            CHECK(check.max_error > check.tolerance);
            CHECK_FALSE(timing.has_value());
            CHECK(timer.starts == 0);
            CHECK(timer.timed == 0);
            CHECK(kernel_calls == 1);  // the validation's call only: no warm-up, no timed call
        } else {
            CHECK(check.passed);
            REQUIRE(timing.has_value());
            CHECK(timing->runs_ms.size() == 3);
            CHECK(timer.timed == 3);
            CHECK(kernel_calls == 1 + 2 + 3);  // validation, warm-up, timed
        }
    }
}
