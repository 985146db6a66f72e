#include "memory_probe.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/random_tensor.hpp"
#include "ops/attention_kernels.hpp"

namespace anatomy::native {
namespace {

using json = nlohmann::json;

long peak_rss_kb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;  // kilobytes on Linux
}

// In the child: inputs, reading, one call, reading. Writes "added_kb ms" to fd.
void measure(const MemoryOptions& o, const std::string& kernel, std::size_t T, int fd) {
    const Tensor4<float> q = random_tensor<float, 4>({o.batch, o.heads, T, o.head_dim}, 1);
    const Tensor4<float> k = random_tensor<float, 4>({o.batch, o.kv_heads, T, o.head_dim}, 2);
    const Tensor4<float> v = random_tensor<float, 4>({o.batch, o.kv_heads, T, o.head_dim}, 3);
    const long before = peak_rss_kb();
    const auto start = std::chrono::steady_clock::now();
    Tensor4<float> out;
    if (kernel == "streaming") out = attention_streaming(q, k, v);
    else if (kernel == "grouped") out = attention_grouped(q, k, v);
    else out = attention_reference(q, k, v, /*repeated_kv=*/false);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const long after = peak_rss_kb();
    char line[64];
    const int n = std::snprintf(line, sizeof line, "%ld %.1f\n", after - before, ms);
    if (write(fd, line, std::size_t(n)) != n) _exit(1);
}

[[noreturn]] void measure_in_child(const MemoryOptions& o, const std::string& kernel, std::size_t T, int fd) {
    // The child never returns into attn's main: an interrupt ends it without a message
    // of its own (the parent says it), and a failure is its exit status.
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_DFL);
    try {
        measure(o, kernel, T, fd);
    } catch (...) {
        _exit(3);
    }
    _exit(0);
}

}  // namespace

json run_memory_bench(const MemoryOptions& o) {
    json rows = json::array();
    for (const auto& [kernel, T] : o.runs) {
        const double cells = double(o.batch) * double(o.heads) * double(T);
        json row{{"kernel", kernel}, {"T", T}, {"output_mb", cells * double(o.head_dim) * 4 / 1e6},
                 {"scores_mb", cells * double(T) * 4 / 1e6}};
        int pipe_fd[2];
        if (pipe(pipe_fd) != 0) throw std::runtime_error("pipe() failed");
        std::fflush(nullptr);
        const pid_t child = fork();
        if (child < 0) throw std::runtime_error("fork() failed");
        if (child == 0) {
            close(pipe_fd[0]);
            measure_in_child(o, kernel, T, pipe_fd[1]);
        }
        close(pipe_fd[1]);
        char buffer[128] = {};
        const ssize_t got = read(pipe_fd[0], buffer, sizeof buffer - 1);
        close(pipe_fd[0]);
        int status = 0;
        waitpid(child, &status, 0);
        long added_kb = 0;
        double ms = 0;
        if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
            std::sscanf(buffer, "%ld %lf", &added_kb, &ms) == 2) {
            row["peak_mb"] = double(added_kb) * 1024 / 1e6;
            row["ms"] = ms;
        } else {
            row["peak_mb"] = 0.0;
            row["failed"] = WIFSIGNALED(status) ? "child killed by signal " + std::to_string(WTERMSIG(status))
                                                : std::string("child failed");
        }
        rows.push_back(row);
    }
    return {{"bench", "attention-memory"},
            {"shape", {{"B", o.batch}, {"Hq", o.heads}, {"Hkv", o.kv_heads}, {"dh", o.head_dim}}},
            {"method", "getrusage ru_maxrss after one call minus before it, in a fresh child per row"},
            {"rows", rows}};
}

}  // namespace anatomy::native
