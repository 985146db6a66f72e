// The GPU benchmarks: attention (eager, flash_mma, flash_mma2, flash_plain; cuBLAS ceiling;
// torch SDPA peer) and decode, both versions (bandwidth against a device-to-device copy).
#include "cuda/gpu_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include "bench/harness.hpp"
#include "cuda/attention_kernels.hpp"
#include "cuda/bench_kernels.hpp"
#include "cuda/cuda_event_timer.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "cuda/gpu_runtime.hpp"
#include "cuda/gpu_verify.hpp"
#include "masks.hpp"

namespace anatomy::native {
namespace {

using gpu::bf16;
using gpu::DeviceBuffer;

// Median milliseconds of `call` under the GPU's policy (harness.hpp: gpu_timing_policy),
// each timed call after an L2 flush (CudaEventTimer).
double median_ms(gpu::CudaEventTimer& timer, int max_runs, const std::function<void()>& call) {
    return time_calls(timer, gpu_timing_policy(max_runs), call).median_ms;
}

// The same for a kernel, through the harness's validate-then-time step: nothing
// (not timed) when the kernel failed its check (gpu_kernel_checks.hpp).
std::optional<double> checked_median_ms(gpu::CudaEventTimer& timer, bool check_passed, int max_runs,
                                        const std::function<void()>& call) {
    const std::optional<Timing> timing =
        validate_then_time([check_passed] { return check_passed; }, timer, gpu_timing_policy(max_runs), call);
    if (!timing) return std::nullopt;
    return timing->median_ms;
}

// A bf16 buffer of n values uniform in [-1, 1), different for each seed.
DeviceBuffer<bf16> random_bf16(const gpu::GpuRuntime& g, std::size_t n, std::uint64_t seed) {
    DeviceBuffer<bf16> buffer(n);
    gpu::fill_uniform_bf16(buffer.data(), n, seed, g.stream());
    return buffer;
}

// The cuBLAS ceiling: C = A B, bf16 in, fp32 accumulate, n x n x n.
double gemm_tflops(const gpu::GpuRuntime& g, gpu::CudaEventTimer& timer, int n, int runs) {
    DeviceBuffer<bf16> a = random_bf16(g, std::size_t(n) * n, 1), b = random_bf16(g, std::size_t(n) * n, 2);
    DeviceBuffer<bf16> c(std::size_t(n) * n);
    const float one = 1.0f, zero = 0.0f;
    const double ms = median_ms(timer, runs, [&] {
        CUBLAS_CHECK(cublasGemmEx(g.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.data(), CUDA_R_16BF, n,
                                  b.data(), CUDA_R_16BF, n, &zero, c.data(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    });
    return 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
}

MaskSpec mask_spec(bool causal, int T, int S) {
    MaskSpec spec;
    spec.kind = causal ? MaskKind::causal : MaskKind::full;
    spec.T = T;
    spec.S = S;
    return spec;
}

std::string shell_quote(const std::string& text) {
    std::string quoted = "'";
    for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return quoted + "'";
}

// torch.nn.functional.scaled_dot_product_attention on the same shapes, run by
// gpu_peers.py; {"skipped": reason} when python, torch or its CUDA is missing.
nlohmann::json run_torch_peer(const GpuAttentionBenchOptions& o, const nlohmann::json& cases, std::size_t l2_bytes) {
    if (!o.peers) return {{"skipped", "SKIPPED: --no-peers"}};
    char spec_path[] = "/tmp/attn-gpu-peers-XXXXXX";
    const int fd = mkstemp(spec_path);
    if (fd < 0) return {{"skipped", "SKIPPED: cannot create a temporary file"}};
    close(fd);
    {
        std::ofstream spec(spec_path);
        spec << nlohmann::json{{"cases", cases}, {"runs", o.max_runs}, {"l2_bytes", l2_bytes}, {"device", o.device}}.dump();
    }
    const std::string command = shell_quote(o.python) + " " + shell_quote(o.peers_script) + " " + shell_quote(spec_path);
    std::string output;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char buffer[4096];
        while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
        pclose(pipe);
    }
    unlink(spec_path);
    const nlohmann::json report = nlohmann::json::parse(output, nullptr, false);
    if (report.is_discarded() || !report.is_object())
        return {{"skipped", "SKIPPED: the torch peer printed no report (is python3 with torch there?)"}};
    return report;
}

}  // namespace

nlohmann::json run_gpu_attention_bench(const GpuAttentionBenchOptions& o) {
    require_gpu_device(o.device);
    const gpu::GpuRuntime g(o.device);
    gpu::CudaEventTimer timer(g);
    nlohmann::json report = {{"kind", "attn-bench-attention-gpu"}, {"device", gpu::gpu_info_to_json(g.info())},
                             {"dtype", "bf16"}, {"H", 32}, {"rows", nlohmann::json::array()},
                             {"checks", nlohmann::json::array()}};
    std::cerr << "bench: cuBLAS bf16 GEMM 8192^3 (the ceiling)\n";
    report["gemm_tflops"] = gemm_tflops(g, timer, 8192, std::min(o.max_runs, 20));

    const int H = 32;
    nlohmann::json peer_cases = nlohmann::json::array();
    for (int Hkv : o.Hkv)
        for (int D : o.D)
            for (bool causal : {false, true}) {
                // Validate each version on a small shape with these heads and head dim before timing it.
                const gpu::AttentionShape small{1, H, Hkv, 128, 128, D, 128};
                bool valid[4] = {false, false, false, false};
                const gpu::KernelVersion versions[4] = {gpu::KernelVersion::eager_bf16, gpu::KernelVersion::flash_mma_bf16,
                                                        gpu::KernelVersion::flash_plain_bf16,
                                                        gpu::KernelVersion::flash_mma2_bf16};
                for (int i = 0; i < 4; ++i) {
                    const CheckRecord r = gpu::check_kernel_case(g, versions[i], small, mask_spec(causal, 128, 128),
                                                                 "b" + std::to_string(report["checks"].size() + 1));
                    valid[i] = r.passed;
                    report["checks"].push_back(check_to_json(r));
                }
                for (int T : o.T) {
                    const int B = std::max(1, o.tokens_per_batch / T), S = T;
                    const gpu::AttentionShape sh{B, H, Hkv, T, S, D, S};
                    const gpu::GpuMask mask{causal ? gpu::GpuMaskKind::causal : gpu::GpuMaskKind::full, 0, 0, 0};
                    const double flops = 4.0 * B * H * double(T) * S * D * (causal ? 0.5 : 1.0);
                    DeviceBuffer<bf16> q = random_bf16(g, std::size_t(B) * H * T * D, 3);
                    DeviceBuffer<bf16> k = random_bf16(g, std::size_t(B) * Hkv * S * D, 4);
                    DeviceBuffer<bf16> v = random_bf16(g, std::size_t(B) * Hkv * S * D, 5);
                    DeviceBuffer<bf16> out(std::size_t(B) * H * T * D);
                    nlohmann::json row = {{"B", B}, {"H", H}, {"Hkv", Hkv}, {"T", T}, {"S", S}, {"D", D},
                                          {"causal", causal}, {"flops", flops}};
                    auto record = [&](const char* name, bool validated, const std::function<void()>& call) {
                        std::cerr << "bench: " << name << " B " << B << " Hkv " << Hkv << " T " << T << " D " << D
                                  << (causal ? " causal\n" : "\n");
                        const std::optional<double> ms = checked_median_ms(timer, validated, o.max_runs, call);
                        if (!ms) {
                            row[name] = {{"skipped", "SKIPPED: failed its check"}};
                            return;
                        }
                        row[name] = {{"ms", *ms}, {"tflops", flops / (*ms * 1e-3) / 1e12}};
                    };
                    record("flash_mma", valid[1], [&] {
                        gpu::attention_flash_mma(sh, mask, q.data(), k.data(), v.data(), out.data(), g.stream());
                    });
                    record("flash_mma2", valid[3], [&] {
                        gpu::attention_flash_mma2(sh, mask, q.data(), k.data(), v.data(), out.data(), g.stream());
                    });
                    const double eager_gib = double(B) * H * T * double(S) * (4 + 2) / (1024.0 * 1024 * 1024);
                    if (eager_gib <= o.eager_max_gib) {
                        DeviceBuffer<float> scores(std::size_t(B) * H * T * S);
                        DeviceBuffer<bf16> probs(std::size_t(B) * H * T * S);
                        record("eager", valid[0], [&] {
                            gpu::attention_eager<bf16>(g.cublas(), sh, mask, q.data(), k.data(), v.data(), scores.data(),
                                                       probs.data(), out.data(), g.stream());
                        });
                    } else {
                        row["eager"] = {{"skipped", "SKIPPED: scores + probabilities need more than --eager-max-gib"}};
                    }
                    if (T <= o.plain_max_T)
                        record("flash_plain", valid[2], [&] {
                            gpu::attention_flash_plain<bf16>(sh, mask, q.data(), k.data(), v.data(), out.data(),
                                                             g.stream());
                        });
                    else
                        row["flash_plain"] = {{"skipped", "SKIPPED: T above --plain-max-t"}};
                    report["rows"].push_back(row);
                    peer_cases.push_back({{"B", B}, {"H", H}, {"Hkv", Hkv}, {"T", T}, {"D", D}, {"causal", causal}});
                }
            }

    std::cerr << "bench: torch scaled_dot_product_attention (peer)\n";
    const nlohmann::json torch = run_torch_peer(o, peer_cases, timer.l2_flush_bytes());
    report["torch"] = torch;
    if (torch.contains("cases"))
        for (std::size_t i = 0; i < report["rows"].size() && i < torch["cases"].size(); ++i) {
            nlohmann::json& row = report["rows"][i];
            const nlohmann::json& peer = torch["cases"][i];
            if (!peer.contains("ms") || !peer["ms"].is_number()) continue;
            const double ms = peer["ms"].get<double>();
            row["torch_sdpa"] = {{"ms", ms}, {"tflops", row["flops"].get<double>() / (ms * 1e-3) / 1e12},
                                 {"backend", peer.value("backend", nlohmann::json())}, {"how", peer.value("how", nlohmann::json())}};
            for (const char* name : {"flash_mma", "flash_mma2", "eager", "flash_plain"})
                if (row[name].contains("ms")) row[name]["vs_torch"] = ms / row[name]["ms"].get<double>();
        }
    return report;
}

nlohmann::json run_gpu_decode_bench(const GpuDecodeBenchOptions& o) {
    require_gpu_device(o.device);
    const gpu::GpuRuntime g(o.device);
    gpu::CudaEventTimer timer(g);
    nlohmann::json report = {{"kind", "attn-bench-decode-gpu"}, {"device", gpu::gpu_info_to_json(g.info())},
                             {"dtype", "bf16"}, {"rows", nlohmann::json::array()}, {"checks", nlohmann::json::array()}};

    // The reference bandwidth: a 1 GiB device-to-device copy reads and writes every byte.
    {
        const std::size_t bytes = std::size_t(1) << 30;
        DeviceBuffer<char> from(bytes), to(bytes);
        CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
        const double ms = median_ms(timer, 20, [&] {
            CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, g.stream()));
        });
        report["copy_gbps"] = 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
    }
    const double copy_gbps = report["copy_gbps"].get<double>();
    const int H = 32, D = 128;
    for (int Hkv : o.Hkv) {
        // Both versions checked on a 1000-key cache with these heads before any is timed.
        const gpu::AttentionShape small{1, H, Hkv, 1, 1000, D, 1000};
        const MaskSpec spec = mask_spec(true, 1, 1000);
        const CheckRecord split_check = gpu::check_kernel_case(g, gpu::KernelVersion::decode_split_bf16, small, spec,
                                                               "d" + std::to_string(report["checks"].size() + 1));
        report["checks"].push_back(check_to_json(split_check));
        const bool group_compiled = gpu::decode_group_supports(D, H / Hkv);
        bool group_valid = false;
        if (group_compiled) {
            const CheckRecord group_check = gpu::check_kernel_case(
                g, gpu::KernelVersion::decode_group_bf16, small, spec, "d" + std::to_string(report["checks"].size() + 1));
            report["checks"].push_back(check_to_json(group_check));
            group_valid = group_check.passed;
        }
        for (int S : o.S) {
            const gpu::AttentionShape sh{1, H, Hkv, 1, S, D, S};
            const gpu::GpuMask mask{gpu::GpuMaskKind::causal, S - 1, 0, 0};
            DeviceBuffer<bf16> q = random_bf16(g, std::size_t(H) * D, 6);
            DeviceBuffer<bf16> k = random_bf16(g, std::size_t(Hkv) * S * D, 7);
            DeviceBuffer<bf16> v = random_bf16(g, std::size_t(Hkv) * S * D, 8);
            DeviceBuffer<bf16> out(std::size_t(H) * D);
            // Bytes that must cross from memory: the cache's K and V once (q and out are tiny).
            const double bytes = 2.0 * Hkv * double(S) * D * sizeof(bf16);
            nlohmann::json row = {{"B", 1}, {"H", H}, {"Hkv", Hkv}, {"S", S}, {"D", D}, {"cache_bytes", bytes}};
            // {"ms", "gbps", "of_copy"}, or nothing when the version failed its check.
            const auto timed = [&](bool check_passed, const std::function<void()>& call) -> std::optional<nlohmann::json> {
                const std::optional<double> ms = checked_median_ms(timer, check_passed, o.max_runs, call);
                if (!ms) return std::nullopt;
                const double gbps = bytes / (*ms * 1e-3) / 1e9;
                return nlohmann::json{{"ms", *ms}, {"gbps", gbps}, {"of_copy", gbps / copy_gbps}};
            };

            // Version 1 (decode_split): its fields stay at the top of the row.
            const int splits = gpu::decode_split_count(sh, g.info().multiprocessors);
            row["splits"] = splits;
            std::cerr << "bench: decode_split Hkv " << Hkv << " S " << S << "\n";
            {
                DeviceBuffer<float> partial_out(gpu::decode_partial_out_floats(sh, splits));
                DeviceBuffer<float> partial_ml(gpu::decode_partial_ml_floats(sh, splits));
                const std::optional<nlohmann::json> split = timed(split_check.passed, [&] {
                    gpu::attention_decode_split<bf16>(sh, mask, q.data(), k.data(), v.data(), out.data(), splits,
                                                      partial_out.data(), partial_ml.data(), g.stream());
                });
                if (split)
                    row.update(*split);
                else
                    row["skipped"] = "SKIPPED: failed its check";
            }

            // Version 2 (decode_group).
            std::cerr << "bench: decode_group Hkv " << Hkv << " S " << S << "\n";
            if (!group_compiled) {
                row["decode_group"] = {{"skipped", "SKIPPED: this group size is not compiled"}};
            } else {
                const gpu::DecodePlan plan = gpu::decode_group_plan(sh, g.info().multiprocessors);
                DeviceBuffer<float> partial_out(gpu::decode_group_partial_out_floats(sh, plan));
                DeviceBuffer<float> partial_ml(gpu::decode_group_partial_ml_floats(sh, plan));
                DeviceBuffer<unsigned> arrivals(gpu::decode_group_arrival_counters(sh));
                arrivals.fill_zero();
                std::optional<nlohmann::json> group = timed(group_valid, [&] {
                    gpu::attention_decode_group<bf16>(sh, mask, q.data(), k.data(), v.data(), out.data(), plan,
                                                      partial_out.data(), partial_ml.data(), arrivals.data(),
                                                      g.stream());
                });
                if (group) {
                    (*group)["splits"] = plan.splits;
                    (*group)["keys_per_split"] = plan.keys_per_split;
                    if (row.contains("ms")) (*group)["vs_split"] = row["ms"].get<double>() / (*group)["ms"].get<double>();
                    row["decode_group"] = *group;
                } else {
                    row["decode_group"] = {{"skipped", "SKIPPED: failed its check"}};
                }
            }
            report["rows"].push_back(row);
        }
    }
    return report;
}

bool gpu_bench_validated(const nlohmann::json& report) {
    for (const nlohmann::json& c : report["checks"])
        if (!c["passed"].get<bool>()) return false;
    return true;
}

namespace {
std::string cell(const nlohmann::json& row, const char* name, const char* field, const char* format) {
    if (!row.contains(name) || !row[name].contains(field)) return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, row[name][field].get<double>());
    return text;
}
}  // namespace

void print_gpu_attention_table(std::ostream& out, const nlohmann::json& r) {
    char line[256];
    out << "attn bench attention: " << r["device"]["name"].get<std::string>() << " (compute "
        << r["device"]["compute_capability"].get<std::string>() << "), bf16, H 32, TFLOP/s = 4 B H T S D / time"
        << " (halved for causal), median, L2 flushed\n";
    std::snprintf(line, sizeof line, "cuBLAS bf16 GEMM 8192^3 ceiling: %.0f TFLOP/s\n", r["gemm_tflops"].get<double>());
    out << line;
    if (r["torch"].contains("skipped")) out << "torch peer: " << r["torch"]["skipped"].get<std::string>() << "\n";
    std::snprintf(line, sizeof line, "%3s %4s %3s %6s %6s | %9s %9s %9s %9s %9s | %8s %8s %8s  %s\n", "Hkv", "D", "B",
                  "T", "mask", "flash_mma", "mma2", "eager", "plain", "torch", "mma/tch", "mma2/tch", "eag/tch",
                  "torch backend");
    out << line;
    for (const nlohmann::json& row : r["rows"]) {
        std::string backend = "-";
        if (row.contains("torch_sdpa") && row["torch_sdpa"]["backend"].is_string()) {  // "backend", "how": always set
            backend = row["torch_sdpa"]["backend"].get<std::string>();
            if (row["torch_sdpa"]["how"].is_string()) backend += " (" + row["torch_sdpa"]["how"].get<std::string>() + ")";
        }
        std::snprintf(line, sizeof line, "%3d %4d %3d %6d %6s | %9s %9s %9s %9s %9s | %8s %8s %8s  %s\n",
                      row["Hkv"].get<int>(), row["D"].get<int>(), row["B"].get<int>(), row["T"].get<int>(),
                      row["causal"].get<bool>() ? "causal" : "full", cell(row, "flash_mma", "tflops", "%.1f").c_str(),
                      cell(row, "flash_mma2", "tflops", "%.1f").c_str(), cell(row, "eager", "tflops", "%.1f").c_str(),
                      cell(row, "flash_plain", "tflops", "%.1f").c_str(), cell(row, "torch_sdpa", "tflops", "%.1f").c_str(),
                      cell(row, "flash_mma", "vs_torch", "%.2f").c_str(), cell(row, "flash_mma2", "vs_torch", "%.2f").c_str(),
                      cell(row, "eager", "vs_torch", "%.2f").c_str(), backend.c_str());
        out << line;
    }
    out << (gpu_bench_validated(r) ? "Every kernel passed its check before timing.\n"
                                   : "Some kernels FAILED their check and were not timed.\n");
}

void print_gpu_decode_table(std::ostream& out, const nlohmann::json& r) {
    char line[256];
    out << "attn bench decode: " << r["device"]["name"].get<std::string>()
        << ", bf16 cache, B 1, H 32, D 128, median, L2 flushed; v1 decode_split, v2 decode_group\n";
    std::snprintf(line, sizeof line, "device-to-device copy: %.0f GB/s (read + write)\n", r["copy_gbps"].get<double>());
    out << line;
    std::snprintf(line, sizeof line, "%3s %6s | %6s %10s %7s %8s | %6s %10s %7s %8s | %6s\n", "Hkv", "S", "splits",
                  "v1 ms", "GB/s", "of copy", "splits", "v2 ms", "GB/s", "of copy", "v2/v1");
    out << line;
    const auto number = [](const nlohmann::json& j, const char* field, const char* format, double scale = 1) {
        if (!j.contains(field) || !j[field].is_number()) return std::string("-");
        char text[32];
        std::snprintf(text, sizeof text, format, scale * j[field].get<double>());
        return std::string(text);
    };
    for (const nlohmann::json& row : r["rows"]) {
        const nlohmann::json group = row.value("decode_group", nlohmann::json::object());
        std::snprintf(line, sizeof line, "%3d %6d | %6s %10s %7s %7s%% | %6s %10s %7s %7s%% | %6s\n",
                      row["Hkv"].get<int>(), row["S"].get<int>(), number(row, "splits", "%.0f").c_str(),
                      number(row, "ms", "%.4f").c_str(), number(row, "gbps", "%.0f").c_str(),
                      number(row, "of_copy", "%.0f", 100).c_str(), number(group, "splits", "%.0f").c_str(),
                      number(group, "ms", "%.4f").c_str(), number(group, "gbps", "%.0f").c_str(),
                      number(group, "of_copy", "%.0f", 100).c_str(), number(group, "vs_split", "%.2fx").c_str());
        out << line;
        for (const nlohmann::json* skipped : {&row, &group})
            if (skipped->contains("skipped")) out << "    " << (*skipped)["skipped"].get<std::string>() << "\n";
    }
    out << (gpu_bench_validated(r) ? "Both decode kernels passed their checks before timing.\n"
                                   : "A decode kernel FAILED its check and was not timed.\n");
}

}  // namespace anatomy::native
