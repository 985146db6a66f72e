#include "peers.hpp"

#include "files.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace anatomy::native {
namespace {

using json = nlohmann::json;

json skipped_everything(const std::string& why) {
    return {{"numpy", {{"skipped", "SKIPPED: " + why}}}, {"torch", {{"skipped", "SKIPPED: " + why}}},
            {"rows", json::array()}};
}

// 'text' for a POSIX shell.
std::string shell_quote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

}  // namespace

PeerSetup default_peer_setup() {
    return {"/usr/bin/python3", project_file("native/bench/peers.py")};
}

json run_peers(const PeerSetup& setup, const BenchOptions& o) {
    if (access(setup.python.c_str(), X_OK) != 0) return skipped_everything(setup.python + " not found");
    if (access(setup.script.c_str(), R_OK) != 0) return skipped_everything(setup.script + " not found");

    json cases = json::array();
    for (std::size_t T : o.prefill_T) cases.push_back({{"case", "prefill"}, {"T", T}, {"S", T}});
    for (std::size_t S : o.decode_S) cases.push_back({{"case", "decode"}, {"T", 1}, {"S", S}});
    const json spec{{"B", o.batch},        {"Hq", o.heads},       {"Hkv", o.kv_heads},
                    {"dh", o.head_dim},    {"cases", cases},      {"warmup", o.warmup},
                    {"min_runs", o.min_runs}, {"max_runs", o.max_runs}, {"budget_ms", o.budget_ms},
                    {"seed", o.seed}};

    char spec_path[] = "/tmp/attn-bench-peers-XXXXXX";
    const int fd = mkstemp(spec_path);
    if (fd < 0) return skipped_everything("cannot create a temporary file for the peers' spec");
    close(fd);
    std::ofstream(spec_path) << spec.dump();

    // One thread for the peers' BLAS and OpenMP (peers.py sets them again before importing).
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("MKL_NUM_THREADS", "1", 1);
    const std::string command = shell_quote(setup.python) + " " + shell_quote(setup.script) + " " + shell_quote(spec_path);
    std::string output;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char buffer[4096];
        std::size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
        const int status = pclose(pipe);
        std::remove(spec_path);
        if (status != 0) return skipped_everything("peers.py exited with status " + std::to_string(status));
    } else {
        std::remove(spec_path);
        return skipped_everything("cannot start " + setup.python);
    }
    try {
        json report = json::parse(output);
        report["python"] = setup.python;
        return report;
    } catch (const json::parse_error&) {
        return skipped_everything("peers.py printed no JSON report");
    }
}

}  // namespace anatomy::native
