// attn devices: list the CUDA devices this build can use.
#include <iostream>

#include "commands.hpp"
#include "cuda/device_query.hpp"

namespace anatomy::native {

CommandRunner add_devices_command(CLI::App& app) {
    app.add_subcommand("devices", "List the CUDA devices this build can use");
    return [] {
        if (!cuda_compiled_in()) {
            std::cout << "This build has no CUDA support (configure with the cuda preset).\n";
            return 0;
        }
        const std::vector<CudaDevice> devices = cuda_devices();
        if (devices.empty()) std::cout << "No CUDA device: " << cuda_unavailable_reason() << "\n";
        for (const CudaDevice& d : devices)
            std::cout << "cuda:" << d.index << "  " << d.name << "  compute " << d.major << "." << d.minor << "  "
                      << d.total_memory_bytes / (1024 * 1024) << " MiB\n";
        return 0;
    };
}

}  // namespace anatomy::native
