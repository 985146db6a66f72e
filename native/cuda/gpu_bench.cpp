// The GPU benchmarks: attention (eager, flash_mma, flash_plain; cuBLAS ceiling;
// torch SDPA peer) and split-K decode (bandwidth against a device-to-device copy).
#include "cuda/gpu_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>

#include "cuda/attention_kernels.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "cuda/gpu_runtime.hpp"
#include "cuda/gpu_verify.hpp"
#include "masks.hpp"

namespace anatomy::native {
namespace {

using gpu::bf16;
using gpu::DeviceBuffer;

// CUDA events around one call, RAII.
class EventPair {
public:
    EventPair() {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
    }
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    cudaEvent_t start() const { return start_; }
    cudaEvent_t stop() const { return stop_; }

private:
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Median milliseconds of `call` on the runtime's stream: 3 warm-up calls, then up
// to max_runs timed calls (at least 5, and no more once 2 s of timed work is spent),
// each after the L2 cache is flushed by writing a buffer twice its size.
double median_ms(const gpu::GpuRuntime& g, DeviceBuffer<char>& l2_flush, int max_runs,
                 const std::function<void()>& call) {
    for (int i = 0; i < 3; ++i) call();
    g.synchronize();
    EventPair events;
    std::vector<double> times;
    double spent = 0;
    for (int run = 0; run < max_runs && (run < 5 || spent < 2000.0); ++run) {
        CUDA_CHECK(cudaMemsetAsync(l2_flush.data(), run & 0xff, l2_flush.bytes(), g.stream()));
        CUDA_CHECK(cudaEventRecord(events.start(), g.stream()));
        call();
        CUDA_CHECK(cudaEventRecord(events.stop(), g.stream()));
        CUDA_CHECK(cudaEventSynchronize(events.stop()));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events.start(), events.stop()));
        times.push_back(ms);
        spent += ms;
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

DeviceBuffer<char> make_l2_flush(const gpu::GpuRuntime& g) {
    return DeviceBuffer<char>(std::max<std::size_t>(2 * g.info().l2_cache_bytes, 1 << 20));
}

// A bf16 buffer of n values, filled with N(0, 1)-like values on the device (from a
// fixed-pattern fp32 buffer: the numbers do not matter for timing, NaN would).
DeviceBuffer<bf16> bf16_buffer(const gpu::GpuRuntime& g, std::size_t n) {
    DeviceBuffer<bf16> buffer(n);
    CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0x3c, buffer.bytes(), g.stream()));  // every bf16 = 0x3c3c ~ 0.0115
    return buffer;
}

// The cuBLAS ceiling: C = A B, bf16 in, fp32 accumulate, n x n x n.
double gemm_tflops(const gpu::GpuRuntime& g, DeviceBuffer<char>& l2_flush, int n, int runs) {
    DeviceBuffer<bf16> a = bf16_buffer(g, std::size_t(n) * n), b = bf16_buffer(g, std::size_t(n) * n);
    DeviceBuffer<bf16> c(std::size_t(n) * n);
    const float one = 1.0f, zero = 0.0f;
    const double ms = median_ms(g, l2_flush, runs, [&] {
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
    DeviceBuffer<char> l2_flush = make_l2_flush(g);
    nlohmann::json report = {{"kind", "attn-bench-attention-gpu"}, {"device", gpu::gpu_info_to_json(g.info())},
                             {"dtype", "bf16"}, {"H", 32}, {"rows", nlohmann::json::array()},
                             {"checks", nlohmann::json::array()}};
    std::cerr << "bench: cuBLAS bf16 GEMM 8192^3 (the ceiling)\n";
    report["gemm_tflops"] = gemm_tflops(g, l2_flush, 8192, std::min(o.max_runs, 20));

    const int H = 32;
    nlohmann::json peer_cases = nlohmann::json::array();
    for (int Hkv : o.Hkv)
        for (int D : o.D)
            for (bool causal : {false, true}) {
                // Validate each version on a small shape with these heads and head dim before timing it.
                const gpu::AttentionShape small{1, H, Hkv, 128, 128, D, 128};
                bool valid[3] = {false, false, false};
                const gpu::KernelVersion versions[3] = {gpu::KernelVersion::eager_bf16, gpu::KernelVersion::flash_mma_bf16,
                                                        gpu::KernelVersion::flash_plain_bf16};
                for (int i = 0; i < 3; ++i) {
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
                    DeviceBuffer<bf16> q = bf16_buffer(g, std::size_t(B) * H * T * D);
                    DeviceBuffer<bf16> k = bf16_buffer(g, std::size_t(B) * Hkv * S * D);
                    DeviceBuffer<bf16> v = bf16_buffer(g, std::size_t(B) * Hkv * S * D);
                    DeviceBuffer<bf16> out(std::size_t(B) * H * T * D);
                    nlohmann::json row = {{"B", B}, {"H", H}, {"Hkv", Hkv}, {"T", T}, {"S", S}, {"D", D},
                                          {"causal", causal}, {"flops", flops}};
                    auto record = [&](const char* name, bool validated, const std::function<void()>& call) {
                        std::cerr << "bench: " << name << " B " << B << " Hkv " << Hkv << " T " << T << " D " << D
                                  << (causal ? " causal\n" : "\n");
                        if (!validated) {
                            row[name] = {{"skipped", "SKIPPED: failed its check"}};
                            return;
                        }
                        const double ms = median_ms(g, l2_flush, o.max_runs, call);
                        row[name] = {{"ms", ms}, {"tflops", flops / (ms * 1e-3) / 1e12}};
                    };
                    record("flash_mma", valid[1], [&] {
                        gpu::attention_flash_mma(sh, mask, q.data(), k.data(), v.data(), out.data(), g.stream());
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
    const nlohmann::json torch = run_torch_peer(o, peer_cases, l2_flush.bytes());
    report["torch"] = torch;
    if (torch.contains("cases"))
        for (std::size_t i = 0; i < report["rows"].size() && i < torch["cases"].size(); ++i) {
            nlohmann::json& row = report["rows"][i];
            const nlohmann::json& peer = torch["cases"][i];
            if (!peer.contains("ms") || !peer["ms"].is_number()) continue;
            const double ms = peer["ms"].get<double>();
            row["torch_sdpa"] = {{"ms", ms}, {"tflops", row["flops"].get<double>() / (ms * 1e-3) / 1e12}};
            for (const char* name : {"flash_mma", "eager", "flash_plain"})
                if (row[name].contains("ms")) row[name]["vs_torch"] = ms / row[name]["ms"].get<double>();
        }
    return report;
}

nlohmann::json run_gpu_decode_bench(const GpuDecodeBenchOptions& o) {
    require_gpu_device(o.device);
    const gpu::GpuRuntime g(o.device);
    DeviceBuffer<char> l2_flush = make_l2_flush(g);
    nlohmann::json report = {{"kind", "attn-bench-decode-gpu"}, {"device", gpu::gpu_info_to_json(g.info())},
                             {"dtype", "bf16"}, {"rows", nlohmann::json::array()}, {"checks", nlohmann::json::array()}};

    // The reference bandwidth: a 1 GiB device-to-device copy reads and writes every byte.
    {
        const std::size_t bytes = std::size_t(1) << 30;
        DeviceBuffer<char> from(bytes), to(bytes);
        CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
        const double ms = median_ms(g, l2_flush, 20, [&] {
            CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, g.stream()));
        });
        report["copy_gbps"] = 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
    }
    const double copy_gbps = report["copy_gbps"].get<double>();
    const int H = 32, D = 128;
    for (int Hkv : o.Hkv) {
        MaskSpec spec = mask_spec(true, 1, 1000);
        const CheckRecord check = gpu::check_kernel_case(g, gpu::KernelVersion::decode_bf16, {1, H, Hkv, 1, 1000, D, 1000},
                                                         spec, "d" + std::to_string(report["checks"].size() + 1));
        report["checks"].push_back(check_to_json(check));
        for (int S : o.S) {
            const gpu::AttentionShape sh{1, H, Hkv, 1, S, D, S};
            const gpu::GpuMask mask{gpu::GpuMaskKind::causal, S - 1, 0, 0};
            const int splits = gpu::decode_split_count(sh, g.info().multiprocessors);
            DeviceBuffer<bf16> q = bf16_buffer(g, std::size_t(H) * D);
            DeviceBuffer<bf16> k = bf16_buffer(g, std::size_t(Hkv) * S * D), v = bf16_buffer(g, std::size_t(Hkv) * S * D);
            DeviceBuffer<bf16> out(std::size_t(H) * D);
            DeviceBuffer<float> partial_out(gpu::decode_partial_out_floats(sh, splits));
            DeviceBuffer<float> partial_ml(gpu::decode_partial_ml_floats(sh, splits));
            nlohmann::json row = {{"B", 1}, {"H", H}, {"Hkv", Hkv}, {"S", S}, {"D", D}, {"splits", splits}};
            std::cerr << "bench: decode_split Hkv " << Hkv << " S " << S << "\n";
            if (!check.passed) {
                row["skipped"] = "SKIPPED: failed its check";
            } else {
                const double ms = median_ms(g, l2_flush, o.max_runs, [&] {
                    gpu::attention_decode_split<bf16>(sh, mask, q.data(), k.data(), v.data(), out.data(), splits,
                                                      partial_out.data(), partial_ml.data(), g.stream());
                });
                // Bytes that must cross from memory: the cache's K and V once (q and out are tiny).
                const double bytes = 2.0 * Hkv * double(S) * D * sizeof(bf16);
                const double gbps = bytes / (ms * 1e-3) / 1e9;
                row["ms"] = ms;
                row["cache_bytes"] = bytes;
                row["gbps"] = gbps;
                row["of_copy"] = gbps / copy_gbps;
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
    std::snprintf(line, sizeof line, "%3s %4s %3s %6s %6s | %9s %9s %9s %9s | %8s %8s\n", "Hkv", "D", "B", "T", "mask",
                  "flash_mma", "eager", "plain", "torch", "mma/tch", "eag/tch");
    out << line;
    for (const nlohmann::json& row : r["rows"]) {
        std::snprintf(line, sizeof line, "%3d %4d %3d %6d %6s | %9s %9s %9s %9s | %8s %8s\n", row["Hkv"].get<int>(),
                      row["D"].get<int>(), row["B"].get<int>(), row["T"].get<int>(),
                      row["causal"].get<bool>() ? "causal" : "full", cell(row, "flash_mma", "tflops", "%.1f").c_str(),
                      cell(row, "eager", "tflops", "%.1f").c_str(), cell(row, "flash_plain", "tflops", "%.1f").c_str(),
                      cell(row, "torch_sdpa", "tflops", "%.1f").c_str(),
                      cell(row, "flash_mma", "vs_torch", "%.2f").c_str(), cell(row, "eager", "vs_torch", "%.2f").c_str());
        out << line;
    }
    out << (gpu_bench_validated(r) ? "Every kernel passed its check before timing.\n"
                                   : "Some kernels FAILED their check and were not timed.\n");
}

void print_gpu_decode_table(std::ostream& out, const nlohmann::json& r) {
    char line[256];
    out << "attn bench decode: " << r["device"]["name"].get<std::string>()
        << ", split-K decode, bf16 cache, B 1, H 32, D 128, median, L2 flushed\n";
    std::snprintf(line, sizeof line, "device-to-device copy: %.0f GB/s (read + write)\n", r["copy_gbps"].get<double>());
    out << line;
    std::snprintf(line, sizeof line, "%3s %6s %6s %10s %9s %8s\n", "Hkv", "S", "splits", "ms", "GB/s", "of copy");
    out << line;
    for (const nlohmann::json& row : r["rows"]) {
        if (!row.contains("ms")) {
            std::snprintf(line, sizeof line, "%3d %6d  %s\n", row["Hkv"].get<int>(), row["S"].get<int>(),
                          row["skipped"].get<std::string>().c_str());
        } else {
            std::snprintf(line, sizeof line, "%3d %6d %6d %10.4f %9.0f %7.0f%%\n", row["Hkv"].get<int>(),
                          row["S"].get<int>(), row["splits"].get<int>(), row["ms"].get<double>(),
                          row["gbps"].get<double>(), 100 * row["of_copy"].get<double>());
        }
        out << line;
    }
    out << (gpu_bench_validated(r) ? "The decode kernel passed its check before timing.\n"
                                   : "The decode kernel FAILED its check and was not timed.\n");
}

}  // namespace anatomy::native
