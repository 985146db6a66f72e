// attn verify --device cuda[:N]: the model and every GPU kernel checked against
// the CPU core. Plain C++ interface: implemented by gpu_verify.cpp in the cuda
// build and by gpu_verify_none.cpp otherwise (which refuses with one line).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "model/weights.hpp"

namespace anatomy::native {

// --device: "cpu" -> -1, "cuda" -> 0, "cuda:N" -> N. Throws InputError otherwise.
int parse_device_flag(const std::string& text);

// Throws InputError (one line) unless this build has CUDA and device `index` exists.
void require_gpu_device(int index);

struct GpuVerifyRequest {
    int device = 0;
    std::string header;           // "tiny model (seed 1), batch 2 x 6 tokens"
    nlohmann::json weights;       // where the weights came from, for the trace
    std::ostream* trace = nullptr;  // write the trace here when given
};

// Prints the table of GPU checks; returns 0 when all pass, 1 otherwise.
// Throws InputError when this build has no CUDA or there is no such device.
int run_verify_on_gpu(const Model<float>& model, const TokenIds& tokens, const GpuVerifyRequest& request);

}  // namespace anatomy::native
