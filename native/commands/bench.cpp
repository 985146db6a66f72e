// attn bench cpu | memory: the attention kernels against the core's reference,
// NumPy and PyTorch (speed), and the streaming kernel's memory against T.
// The method and this machine's numbers are in docs/perf.md.
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>

#include "bench/attention_bench.hpp"
#include "bench/bench_table.hpp"
#include "bench/memory_probe.hpp"
#include "bench/peers.hpp"
#include "commands.hpp"
#include "commands/bench_gpu.hpp"
#include "json_input.hpp"
#include "number_args.hpp"
#include "process_stats.hpp"
#include "tensor.hpp"

namespace anatomy::native {
namespace {

struct BenchCommandOptions {
    CLI::App* cpu = nullptr;
    CLI::App* memory = nullptr;
    bool quick = false;
    bool json = false;
    std::string out_path;
    std::string prefill;
    std::string decode;
    std::string kernels;
    std::string runs;
    std::string reference_max_t;
    bool no_peers = false;
    PeerSetup peers = default_peer_setup();
    std::string streaming_t = "1024,4096,16384";
    std::string reference_t = "256,512,1024";
};

// The reference (v0) materialises three [B, Hq, T, T] maps: at the largest T it runs,
// they must fit in memory, which is checked before any kernel runs.
void require_reference_memory(std::size_t batch, std::size_t heads, std::size_t T, const std::string& flag) {
    const double maps = 3 * double(batch) * double(heads) * double(T) * double(T) * sizeof(float);
    require_memory(maps, "the reference at T = " + std::to_string(T),
                   "three [" + std::to_string(batch) + ", " + std::to_string(heads) + ", T, T] float32 maps",
                   "give a smaller " + flag);
}

int run_cpu(const BenchCommandOptions& c) {
    BenchOptions o = c.quick ? quick_bench_options() : BenchOptions{};
    if (!c.prefill.empty()) o.prefill_T = parse_size_list(c.prefill, "--prefill");
    if (!c.decode.empty()) o.decode_S = parse_size_list(c.decode, "--decode");
    if (!c.kernels.empty()) o.kernels = bench_options_from_json({{"kernels", split_commas(c.kernels)}}).kernels;
    if (!c.runs.empty()) o.max_runs = int(parse_decimal(c.runs, "--runs", 1, 1000));
    if (!c.reference_max_t.empty())
        o.reference_max_T = parse_decimal(c.reference_max_t, "--reference-max-t", 1, 1 << 20);
    std::size_t largest_reference = 0;
    for (std::size_t T : o.prefill_T)
        if (T <= o.reference_max_T) largest_reference = std::max(largest_reference, T);
    require_reference_memory(o.batch, o.heads, largest_reference, "--reference-max-t or --prefill");
    std::unique_ptr<OutputFile> report_file = open_report_file(c.out_path);  // a bad path fails before the work

    const std::array<double, 3> load_at_start = load_average();
    nlohmann::json report = run_attention_bench(o, [](const std::string& line) { std::cerr << "bench: " << line << "\n"; });
    if (!c.no_peers) {
        nlohmann::json peers = run_peers(c.peers, o);
        for (const nlohmann::json& row : peers["rows"]) report["rows"].push_back(row);
        peers.erase("rows");
        report["peers"] = peers;
    } else {
        report["peers"] = {{"numpy", {{"skipped", "SKIPPED: --no-peers"}}}, {"torch", {{"skipped", "SKIPPED: --no-peers"}}}};
    }
    // A shared machine's load moves every figure: the report says what it was.
    report["machine"] = {{"cpu", cpu_name()},
                         {"hardware_threads", cpu_threads()},
                         {"load_average", {{"start", load_at_start}, {"end", load_average()}}}};
    write_report(report_file, report);
    if (c.json)
        std::cout << json_text(report, 1) << "\n";
    else
        print_bench_table(std::cout, report);
    return bench_all_validated(report) ? 0 : 1;  // ours and the peers: a ratio to a wrong result is no result
}

int run_memory(const BenchCommandOptions& c) {
    MemoryOptions o;
    for (std::size_t T : parse_size_list(c.reference_t, "--reference-t")) o.runs.push_back({"reference", T});
    for (std::size_t T : parse_size_list(c.streaming_t, "--streaming-t")) o.runs.push_back({"streaming", T});
    for (const auto& [kernel, T] : o.runs)
        if (kernel == "reference") require_reference_memory(o.batch, o.heads, T, "--reference-t");
    std::unique_ptr<OutputFile> report_file = open_report_file(c.out_path);
    const nlohmann::json report = run_memory_bench(o);
    write_report(report_file, report);
    if (c.json)
        std::cout << json_text(report, 1) << "\n";
    else
        print_memory_table(std::cout, report);
    return 0;
}

}  // namespace

CommandRunner add_bench_command(CLI::App& app) {
    auto c = std::make_shared<BenchCommandOptions>();
    CLI::App* bench = app.add_subcommand("bench", "Benchmark the attention kernels (speed against NumPy and PyTorch, memory)");
    bench->require_subcommand(1);

    c->cpu = bench->add_subcommand("cpu", "Time every kernel after validating it, with NumPy and PyTorch peers, 1 thread");
    c->cpu->add_flag("--quick", c->quick, "Tiny sizes, one run each (seconds; what the tests run)");
    c->cpu->add_flag("--json", c->json, "Print the JSON report instead of the table");
    c->cpu->add_option("--out", c->out_path, "Also write the JSON report to this file");
    c->cpu->add_option("--prefill", c->prefill, "Comma-separated prefill lengths T (default 128,512,2048,4096)");
    c->cpu->add_option("--decode", c->decode, "Comma-separated cache lengths S for decode (default 512,4096)");
    c->cpu->add_option("--kernels", c->kernels, "Comma-separated kernels: grouped, streaming, rows, steps, reference");
    c->cpu->add_option("--runs", c->runs, "Most timed runs per cell (default 9)");
    c->cpu->add_option("--reference-max-t", c->reference_max_t,
                       "Longest T the materialising reference runs at (default 1024)");
    c->cpu->add_flag("--no-peers", c->no_peers, "Do not run the NumPy and PyTorch peers");
    c->cpu->add_option("--python", c->peers.python, "Python for the peers (Debian's, with python3-numpy and python3-torch)")
        ->capture_default_str();
    c->cpu->add_option("--peers-script", c->peers.script, "The peers script")->capture_default_str();

    c->memory = bench->add_subcommand("memory", "Peak memory of the streaming kernel and the materialising reference against T");
    c->memory->add_flag("--json", c->json, "Print the JSON report instead of the table");
    c->memory->add_option("--out", c->out_path, "Also write the JSON report to this file");
    c->memory->add_option("--streaming-t", c->streaming_t, "Prefill lengths for the streaming kernel")->capture_default_str();
    c->memory->add_option("--reference-t", c->reference_t, "Prefill lengths for the reference")->capture_default_str();

    const GpuBenchCommands gpu = add_gpu_bench_subcommands(bench);  // attention, decode (bench_gpu.cpp)
    return [c, gpu] {
        if (gpu.parsed()) return gpu.run();
        return c->cpu->parsed() ? run_cpu(*c) : run_memory(*c);
    };
}

}  // namespace anatomy::native
