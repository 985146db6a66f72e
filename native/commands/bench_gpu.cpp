// attn bench attention | decode --device cuda[:N] (native/cuda/gpu_bench.hpp).
#include "commands/bench_gpu.hpp"

#include <iostream>
#include <memory>

#include "bench/bench_table.hpp"
#include "cuda/gpu_bench.hpp"
#include "cuda/gpu_verify.hpp"
#include "files.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "tensor.hpp"

namespace anatomy::native {
namespace {

struct GpuBenchFlags {
    std::string device = "cuda";
    bool quick = false, json = false, no_peers = false;
    std::string out_path, sizes, head_dims, kv_heads, runs, plain_max_t, eager_max_gib;
    std::string python = "python3";  // from PATH
};

std::vector<int> int_sizes(const std::vector<std::size_t>& sizes) {
    return std::vector<int>(sizes.begin(), sizes.end());  // each at most 2^20
}

// --hkv: KV head counts that the benchmarks' 32 query heads divide into groups.
std::vector<int> kv_head_list(const std::string& text) {
    const std::vector<int> heads = int_sizes(parse_size_list(text, "--hkv"));
    for (int h : heads)
        if (32 % h != 0) throw InputError("--hkv: " + std::to_string(h) + " does not divide the 32 query heads");
    return heads;
}

int gpu_device(const std::string& text) {
    const int device = parse_device_flag(text);
    if (device < 0) throw InputError("--device cpu: this benchmark runs on a GPU (the CPU kernels: attn bench cpu)");
    return device;
}

int run_attention(const GpuBenchFlags& f) {
    GpuAttentionBenchOptions o;
    o.device = gpu_device(f.device);
    if (f.quick) {  // seconds: what the tests run
        o.T = {256, 512};
        o.Hkv = {4};
        o.tokens_per_batch = 512;
        o.max_runs = 3;
    }
    if (!f.sizes.empty()) o.T = int_sizes(parse_size_list(f.sizes, "--t"));
    if (!f.head_dims.empty()) o.D = int_sizes(parse_size_list(f.head_dims, "--d"));
    if (!f.kv_heads.empty()) o.Hkv = kv_head_list(f.kv_heads);
    for (int D : o.D)
        if (D != 64 && D != 128) throw InputError("--d: the tensor-core kernels are compiled for head dims 64 and 128, not " + std::to_string(D));
    if (!f.runs.empty()) o.max_runs = int(parse_decimal(f.runs, "--runs", 1, 1000));
    if (!f.plain_max_t.empty()) o.plain_max_T = int(parse_decimal(f.plain_max_t, "--plain-max-t", 0, 1 << 20));
    if (!f.eager_max_gib.empty()) o.eager_max_gib = double(parse_decimal(f.eager_max_gib, "--eager-max-gib", 0, 1 << 20));
    o.peers = !f.no_peers;
    o.python = f.python;
    o.peers_script = project_file("native/bench/gpu_peers.py");
    require_gpu_device(o.device);  // before touching the output file
    std::unique_ptr<OutputFile> report_file = open_report_file(f.out_path);
    const nlohmann::json report = run_gpu_attention_bench(o);
    write_report(report_file, report);
    if (f.json) std::cout << json_text(report, 1) << "\n";
    else print_gpu_attention_table(std::cout, report);
    return gpu_bench_validated(report) ? 0 : 1;
}

int run_decode(const GpuBenchFlags& f) {
    GpuDecodeBenchOptions o;
    o.device = gpu_device(f.device);
    if (f.quick) {
        o.S = {4096};
        o.Hkv = {4};
        o.max_runs = 3;
    }
    if (!f.sizes.empty()) o.S = int_sizes(parse_size_list(f.sizes, "--s"));
    if (!f.kv_heads.empty()) o.Hkv = kv_head_list(f.kv_heads);
    if (!f.runs.empty()) o.max_runs = int(parse_decimal(f.runs, "--runs", 1, 1000));
    require_gpu_device(o.device);
    std::unique_ptr<OutputFile> report_file = open_report_file(f.out_path);
    const nlohmann::json report = run_gpu_decode_bench(o);
    write_report(report_file, report);
    if (f.json) std::cout << json_text(report, 1) << "\n";
    else print_gpu_decode_table(std::cout, report);
    return gpu_bench_validated(report) ? 0 : 1;
}

void add_common_flags(CLI::App* cmd, GpuBenchFlags& f) {
    cmd->add_option("--device", f.device, "cuda or cuda:N")->capture_default_str();
    cmd->add_flag("--quick", f.quick, "Small sizes, 3 runs each (seconds; what the tests run)");
    cmd->add_flag("--json", f.json, "Print the JSON report instead of the table");
    cmd->add_option("--out", f.out_path, "Also write the JSON report to this file");
    cmd->add_option("--runs", f.runs, "Most timed runs per cell (attention 20, decode 50)");
}

}  // namespace

GpuBenchCommands add_gpu_bench_subcommands(CLI::App* bench) {
    auto attention_flags = std::make_shared<GpuBenchFlags>();
    auto decode_flags = std::make_shared<GpuBenchFlags>();
    GpuBenchCommands commands;
    commands.attention = bench->add_subcommand(
        "attention", "GPU: eager vs flash (each version) vs torch SDPA, bf16, H 32, Hkv 32 and 4, D 64 and 128");
    add_common_flags(commands.attention, *attention_flags);
    commands.attention->add_option("--t", attention_flags->sizes, "Comma-separated T = S (default 1024,...,16384)");
    commands.attention->add_option("--d", attention_flags->head_dims, "Comma-separated head dims, of 64 and 128 (default both)");
    commands.attention->add_option("--hkv", attention_flags->kv_heads, "Comma-separated KV head counts dividing 32 (default 32,4)");
    commands.attention->add_option("--plain-max-t", attention_flags->plain_max_t, "Longest T flash_plain is timed at (4096)");
    commands.attention->add_option("--eager-max-gib", attention_flags->eager_max_gib,
                                   "Skip eager when its scores + probabilities exceed this many GiB (60)");
    commands.attention->add_flag("--no-peers", attention_flags->no_peers, "Do not run torch's SDPA");
    commands.attention->add_option("--python", attention_flags->python, "Python with torch for the peer")
        ->capture_default_str();
    commands.decode = bench->add_subcommand("decode", "GPU: split-K decode bandwidth for caches of 4k to 64k tokens");
    add_common_flags(commands.decode, *decode_flags);
    commands.decode->add_option("--s", decode_flags->sizes, "Comma-separated cache lengths (default 4096,...,65536)");
    commands.decode->add_option("--hkv", decode_flags->kv_heads, "Comma-separated KV head counts dividing 32 (default 32,4)");
    CLI::App* attention = commands.attention;
    commands.run = [attention, attention_flags, decode_flags] {
        return attention->parsed() ? run_attention(*attention_flags) : run_decode(*decode_flags);
    };
    return commands;
}

}  // namespace anatomy::native
