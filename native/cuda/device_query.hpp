// What CUDA devices exist. Implemented by device_query.cu in the cuda build and
// by device_query_none.cpp otherwise, so the rest of the tool never needs #ifdefs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace anatomy::native {

struct CudaDevice {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;  // compute capability
    std::size_t total_memory_bytes = 0;
    int driver_version = 0, runtime_version = 0;
};

bool cuda_compiled_in();
std::vector<CudaDevice> cuda_devices();       // empty when there is none
std::string cuda_unavailable_reason();        // why cuda_devices() is empty

}  // namespace anatomy::native
