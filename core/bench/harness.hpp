// The one check-and-time harness for attention kernels, CPU and GPU alike
// (ggml's test-backend-ops: the harness that checks a backend also times it).
//   1. the tolerance rule        attention_tolerance, within_tolerance
//   2. the timing loop           time_calls over a Timer: SteadyClockTimer here for
//                                the CPU; CudaEventTimer (native/cuda/cuda_event_timer.hpp)
//                                for the GPU, with the L2 cache flushed before each call
//   3. validate, then time       validate_then_time: a kernel that fails is not timed
// Used by `attn bench cpu` and benchCpu() (core/bench/attention_bench.hpp, with
// its row validation in attention_check.hpp) and by `attn bench attention|decode`
// (native/cuda/gpu_bench.cpp, with its checks in gpu_kernel_checks.hpp).
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace anatomy {

// ---- 1. Tolerance --------------------------------------------------------------
// FlashAttention's rule: against an fp64 reference on the same inputs, a kernel's
// max |error| may be at most twice the max |error| of a plain implementation in
// the kernel's own precision, plus a floor:
//   tolerance = 2 * same_precision_error + floor
// Twice, because a kernel that sums in another order, fuses multiply-adds or uses
// its own exp is no less accurate than the plain one, but not bit-identical to
// it. The floor keeps a lucky same-precision run (an error near 0, e.g. a row
// that sees a single key) from demanding bit equality. Each side names its floor:
//   CPU (fp32 kernels against the fp32 core reference, attention_check.hpp):
//       kCpuToleranceFloor, 1e-6 absolute (about 8 ulp at 1.0)
//   GPU (gpu_kernel_checks.hpp): one rounding of the output, u * max|fp64 reference|,
//       u = kFp32OutputUnit (4 x 2^-23) for fp32 outputs, kBf16OutputUnit (2^-8) for bf16
inline constexpr double kCpuToleranceFloor = 1e-6;
inline constexpr double kFp32OutputUnit = 4.0 / 8388608.0;  // 4 x 2^-23
inline constexpr double kBf16OutputUnit = 1.0 / 256.0;      // 2^-8

double attention_tolerance(double same_precision_error, double floor);
// The GPU's floor: u * max|reference|.
double output_rounding_floor(double unit, double max_abs_reference);
// error <= tolerance; a NaN error fails.
bool within_tolerance(double error, double tolerance);

// ---- 2. Timing -------------------------------------------------------------------
// `warmup` untimed calls, then timed calls until `max_runs` (at least 1) are done
// or, once `min_runs` are done, the timed calls have taken `budget_ms` in all;
// the statistic is the median.
struct TimingPolicy {
    int warmup = 1;
    int min_runs = 3;
    int max_runs = 9;
    double budget_ms = 3000;
};

// The GPU benchmarks' policy: 3 warm-up calls, at least 5 timed ones, and no more
// once 2 s of timed work is spent (max_runs: --runs, attention 20, decode 50).
TimingPolicy gpu_timing_policy(int max_runs);

// Times one call. start() is called once after the warm-up calls and before the
// first timed one (a GPU timer waits there for the warm-up work to finish).
class Timer {
public:
    virtual ~Timer() = default;
    virtual void start() {}
    virtual double time_ms(const std::function<void()>& call) = 0;
};

// Wall clock (std::chrono::steady_clock), the CPU's timer. Beside it, each call's
// process CPU time (std::clock): on a machine shared with other work, wall time
// above CPU time is time spent waiting for a core.
class SteadyClockTimer final : public Timer {
public:
    void start() override { cpu_ms_.clear(); }
    double time_ms(const std::function<void()>& call) override;
    // The CPU times of the calls timed since the last start(), in order.
    const std::vector<double>& cpu_ms() const { return cpu_ms_; }

private:
    std::vector<double> cpu_ms_;
};

struct Timing {
    std::vector<double> runs_ms;  // each timed call, in order
    double median_ms = 0;
};

double median(std::vector<double> values);  // of a non-empty list

Timing time_calls(Timer& timer, const TimingPolicy& policy, const std::function<void()>& call);

// ---- 3. Validate, then time --------------------------------------------------------
// Runs `validate` (the kernel's check against the reference: true when it
// passed) and times `call` only when it passed; std::nullopt means failed and not
// timed (the caller's report row says so).
std::optional<Timing> validate_then_time(const std::function<bool()>& validate, Timer& timer,
                                         const TimingPolicy& policy, const std::function<void()>& call);

}  // namespace anatomy
