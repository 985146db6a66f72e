// attn bench attention | decode: the GPU benchmarks, registered beside
// `bench cpu` and `bench memory` (bench.cpp) on the same `bench` command.
#pragma once

#include "commands.hpp"

namespace anatomy::native {

struct GpuBenchCommands {
    CLI::App* attention = nullptr;
    CLI::App* decode = nullptr;
    CommandRunner run;  // runs whichever of the two was parsed
    bool parsed() const { return attention->parsed() || decode->parsed(); }
};

GpuBenchCommands add_gpu_bench_subcommands(CLI::App* bench);

}  // namespace anatomy::native
