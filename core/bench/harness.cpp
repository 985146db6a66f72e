#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace anatomy {

double attention_tolerance(double same_precision_error, double floor) { return 2 * same_precision_error + floor; }

double output_rounding_floor(double unit, double max_abs_reference) { return unit * max_abs_reference; }

bool within_tolerance(double error, double tolerance) { return error <= tolerance; }

TimingPolicy gpu_timing_policy(int max_runs) { return {3, 5, max_runs, 2000.0}; }

double SteadyClockTimer::time_ms(const std::function<void()>& call) {
    using Clock = std::chrono::steady_clock;
    const std::clock_t c0 = std::clock();
    const Clock::time_point t0 = Clock::now();
    call();
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    cpu_ms_.push_back(1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC);
    return wall;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Timing time_calls(Timer& timer, const TimingPolicy& policy, const std::function<void()>& call) {
    for (int i = 0; i < policy.warmup; ++i) call();
    timer.start();
    Timing timing;
    double spent_ms = 0;  // the timed calls' own time, not the timer's overhead between them
    while (int(timing.runs_ms.size()) < std::max(policy.max_runs, 1)) {
        timing.runs_ms.push_back(timer.time_ms(call));
        spent_ms += timing.runs_ms.back();
        if (int(timing.runs_ms.size()) >= policy.min_runs && spent_ms >= policy.budget_ms) break;
    }
    timing.median_ms = median(timing.runs_ms);
    return timing;
}

std::optional<Timing> validate_then_time(const std::function<bool()>& validate, Timer& timer,
                                         const TimingPolicy& policy, const std::function<void()>& call) {
    if (!validate()) return std::nullopt;
    return time_calls(timer, policy, call);
}

}  // namespace anatomy
