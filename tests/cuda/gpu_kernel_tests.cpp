// Every GPU attention kernel version against the core (gpu_kernel_checks.hpp:
// fp64 reference, tolerance 2 x the same-precision CPU error plus one rounding).
// Without a device: prints "SKIPPED: no CUDA device" and exits 77 (ctest: skipped).
#include <iostream>

#include "cuda/cuda_check.hpp"
#include "cuda/gpu_kernel_checks.hpp"
#include "cuda/gpu_runtime.hpp"
#include "verify_table.hpp"

int main() {
    using namespace anatomy;
    if (gpu::cuda_device_count() == 0) {
        std::cout << "SKIPPED: no CUDA device\n";
        return 77;
    }
    try {
        const gpu::GpuRuntime g(0);
        std::cout << "cuda:0: " << gpu::gpu_info_line(g.info()) << "\n";
        const std::vector<CheckRecord> checks = gpu::run_kernel_checks(g, {/*quick=*/false});
        native::print_check_table(std::cout, checks);
        return all_passed(checks) ? 0 : 1;
    } catch (const std::exception& e) {
        std::cout << "FAILED: " << e.what() << "\n";
        return 1;
    }
}
