// The native build without CUDA: the GPU benchmarks are refused with one clear line.
#include "cuda/gpu_bench.hpp"

#include "tensor.hpp"

namespace anatomy::native {
namespace {
[[noreturn]] void refuse(int device) {
    throw InputError("--device cuda:" + std::to_string(device) +
                     ": this build has no CUDA support (configure and build with the cuda preset)");
}
}  // namespace

nlohmann::json run_gpu_attention_bench(const GpuAttentionBenchOptions& o) { refuse(o.device); }
nlohmann::json run_gpu_decode_bench(const GpuDecodeBenchOptions& o) { refuse(o.device); }
void print_gpu_attention_table(std::ostream&, const nlohmann::json&) {}
void print_gpu_decode_table(std::ostream&, const nlohmann::json&) {}
bool gpu_bench_validated(const nlohmann::json&) { return false; }

}  // namespace anatomy::native
