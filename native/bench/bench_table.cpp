#include "bench_table.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "json_input.hpp"
#include "number_text.hpp"
#include "tensor.hpp"  // InputError

namespace anatomy::native {
namespace {

using json = nlohmann::json;

std::string ms_text(double ms) {
    return number_text(ms < 1 ? "%.4f" : ms < 100 ? "%.2f" : "%.0f", ms);
}

std::string pad(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

const json* find_row(const json& rows, const std::string& kase, std::size_t T, std::size_t S, const std::string& kernel) {
    for (const json& row : rows)
        if (row["case"] == kase && row["T"] == T && row["S"] == S && row["kernel"] == kernel) return &row;
    return nullptr;
}

double ms_of(const json* row) { return row && row->contains("ms") ? (*row)["ms"].get<double>() : -1; }

// The peers (native/bench/peers.py), in the order of their columns.
constexpr const char* kPeers[] = {"numpy_matmul", "numpy_einsum", "torch_eager", "torch_sdpa"};

std::string case_columns(const std::string& kase, const std::string& T, const std::string& S) {
    std::string line = kase;
    line.resize(9, ' ');
    return line + pad(T, 5) + pad(S, 7);
}

// "OpenBLAS 0.3.21, kernels for SkylakeX, pthreads, 1 thread (PATH)" (peers.py's describe_blas).
std::string blas_text(const json& blas) {
    std::string text = blas.value("library", std::string("?"));
    if (blas.contains("version")) text += " " + blas["version"].get<std::string>();
    if (blas.contains("core")) text += ", kernels for " + blas["core"].get<std::string>();
    if (blas.contains("threading")) text += ", " + blas["threading"].get<std::string>();
    if (blas.contains("threads"))
        text += ", " + std::to_string(blas["threads"].get<int>()) + (blas["threads"] == 1 ? " thread" : " threads");
    if (blas.contains("path")) text += " (" + blas["path"].get<std::string>() + ")";
    if (blas.contains("advice")) text += ": " + blas["advice"].get<std::string>();
    return text;
}

// "  BLAS: " and NumPy's BLAS, then one line per library: its version (and PyTorch's
// BLAS where it is not NumPy's) and each peer with what it is, or why it was skipped.
void print_peers(std::ostream& out, const json& peers) {
    out << "peers:";
    if (peers.contains("python"))
        out << " " << peers["python"].get<std::string>() << ", 1 thread (OMP/OPENBLAS/MKL_NUM_THREADS=1, torch.set_num_threads(1))";
    out << "\n";
    const json blas = peers.value("blas", json::object());
    if (!blas.empty()) out << "  BLAS: " << blas_text(blas) << "\n";
    for (const char* name : {"numpy", "torch"}) {
        const json& p = peers.value(name, json::object());
        if (!p.contains("version")) {
            out << "  " << name << " " << p.value("skipped", std::string("?")) << "\n";
            continue;
        }
        out << "  " << name << " " << p["version"].get<std::string>();
        if (p.contains("blas"))
            out << " (BLAS_INFO=" << p.value("blas_info", std::string("?")) << ": "
                << (p["blas"] == blas ? std::string("the same BLAS") : blas_text(p["blas"])) << ")";
        const char* separator = ": ";
        for (const json& kernel : p.value("kernels", json::array())) {
            out << separator << kernel["name"].get<std::string>() << " "
                << (kernel.contains("about") ? "(" + kernel["about"].get<std::string>() + ")" : kernel["skipped"].get<std::string>());
            separator = ", ";
        }
        out << "\n";
    }
}

}  // namespace

void print_bench_table(std::ostream& out, const json& report) {
    const json& rows = report["rows"];
    const json& shape = report["shape"];
    const json& build = report["build"];
    out << "attn bench cpu: " << build["platform"].get<std::string>() << " build, " << build["compiler"].get<std::string>()
        << ", kernels compiled for " << report["kernel_isa"].get<std::string>() << ", 1 thread\n";
    out << "attention shape: B=" << shape["B"] << " Hq=" << shape["Hq"] << " Hkv=" << shape["Hkv"] << " dh=" << shape["dh"]
        << ", causal, fp32\n";
    const json& policy = report["policy"];
    out << "timing: median of " << policy["min_runs"] << " to " << policy["max_runs"] << " runs after " << policy["warmup"]
        << " warm-up (more runs while under " << policy["budget_ms"].get<double>() / 1000 << " s per cell)\n";
    out << "validated before timing: " << report["tolerance"].get<std::string>() << "\n";
    if (report.contains("machine")) {
        const json& m = report["machine"];
        const json& load = m["load_average"];
        out << "machine: " << m["cpu"].get<std::string>() << ", " << m["hardware_threads"] << " hardware threads; load average "
            << number_text("%.2f", load["start"][0].get<double>()) << " at the start, "
            << number_text("%.2f", load["end"][0].get<double>()) << " at the end (1 minute)\n";
    }
    if (report.contains("peers")) print_peers(out, report["peers"]);

    // Columns: our kernels in the report's order, then the peers that have rows.
    std::vector<std::string> kernels, peers;
    for (const json& k : report["kernels"]) kernels.push_back(k["name"]);
    for (const char* peer : kPeers)
        for (const json& row : rows)
            if (row["kernel"] == peer) {
                peers.push_back(peer);
                break;
            }
    kernels.insert(kernels.end(), peers.begin(), peers.end());
    std::vector<std::tuple<std::string, std::size_t, std::size_t>> cases;
    for (const json& row : rows) {
        if (row["case"] == "model" || row["case"] == "ceiling") continue;
        const auto key = std::make_tuple(row["case"].get<std::string>(), row["T"].get<std::size_t>(), row["S"].get<std::size_t>());
        if (std::find(cases.begin(), cases.end(), key) == cases.end()) cases.push_back(key);
    }

    out << "\nmilliseconds per call (median wall time)\n"
        << "* wall time > 1.1 x CPU time (the machine was busy), + CPU time > 1.1 x wall time (more than one thread)\n";
    std::string header = case_columns("case", "T", "S");
    for (const std::string& k : kernels) header += pad(k, 13);
    header += pad("GFLOP/s", 9);
    out << header << "\n";
    for (const auto& [kase, T, S] : cases) {
        std::string line = case_columns(kase, std::to_string(T), std::to_string(S));
        for (const std::string& k : kernels) {
            const json* row = find_row(rows, kase, T, S, k);
            std::string cell = !row ? "" : row->contains("ms") ? ms_text((*row)["ms"]) : row->contains("skipped") ? "skip" : "";
            if (row && row->contains("cpu_ms") && (*row)["ms"].get<double>() > 1) {  // clocks too coarse below
                const double wall = (*row)["ms"], cpu = (*row)["cpu_ms"];
                if (wall > 1.1 * cpu) cell += "*";       // waited for a core: the machine was busy
                else if (cpu > 1.1 * wall) cell += "+";  // more than one thread was computing
            }
            if (row && row->contains("validation") && !(*row)["validation"].value("passed", false)) cell = "FAILED";
            line += pad(cell, 13);
        }
        const json* grouped = find_row(rows, kase, T, S, "grouped");
        line += pad(grouped && grouped->contains("gflops") ? number_text("%.1f", (*grouped)["gflops"].get<double>()) : "", 9);
        out << line << "\n";
    }
    for (const json& row : rows) {
        if (row["case"] != "ceiling" || !row.contains("gflops")) continue;
        const double ceiling = row["gflops"];
        double best = 0;
        for (const json& r : rows)
            if (r["kernel"] == "grouped" && r.contains("gflops")) best = std::max(best, r["gflops"].get<double>());
        out << "GFLOP/s: grouped, counting only the cells a query may see; this build's ceiling (multiply-adds on "
            << "registers, " << report["kernel_isa"].get<std::string>() << ") " << number_text("%.1f", ceiling)
            << ", grouped reaches " << number_text("%.0f%%", 100 * best / ceiling) << " of it\n";
    }

    if (!peers.empty()) {
        out << "\npeer ms / grouped ms (> 1: grouped is faster)\n";
        header = case_columns("case", "T", "S");
        for (const std::string& peer : peers) header += pad(peer, 13);
        out << header << "\n";
        for (const auto& [kase, T, S] : cases) {
            const double ours = ms_of(find_row(rows, kase, T, S, "grouped"));
            std::string line = case_columns(kase, std::to_string(T), std::to_string(S)), ratios;
            for (const std::string& peer : peers) {
                const double theirs = ms_of(find_row(rows, kase, T, S, peer));
                ratios += pad(ours > 0 && theirs > 0 ? number_text(theirs / ours < 10 ? "%.1fx" : "%.0fx", theirs / ours) : "", 13);
            }
            if (ratios.find('x') != std::string::npos) out << line << ratios << "\n";
        }
    }
    // Cached decode against recomputing the prefix.
    bool any_decode = false;
    for (const auto& [kase, T, S] : cases) {
        if (kase != "decode") continue;
        const double decode = ms_of(find_row(rows, "decode", 1, S, "grouped"));
        const double recompute = ms_of(find_row(rows, "recompute", S, S, "grouped"));
        if (decode <= 0 || recompute <= 0) continue;
        if (!any_decode) out << "\ncached decode vs recomputing the prefix (grouped kernel):\n";
        any_decode = true;
        out << "  S = " << pad(std::to_string(S), 5) << ": decode " << ms_text(decode) << " ms, recompute " << ms_text(recompute)
            << " ms, " << number_text("%.0fx", recompute / decode) << " faster with the cache\n";
    }
    for (const json& row : rows) {
        if (row["case"] != "model") continue;
        out << (row["kernel"] == "tiny_prefill" ? "\ntiny model (2 layers, width 32): " : ", ")
            << row["kernel"].get<std::string>() << " " << (row["kernel"] == "tiny_prefill" ? "of 16 tokens " : "over 16 cached ")
            << number_text("%.0f", row["per_second"].get<double>()) << "/s (" << ms_text(row["ms"]) << " ms)";
        if (row["kernel"] == "tiny_decode_step") out << "\n";
    }

    std::size_t validated = 0, failed = 0;
    double worst = 0;
    for (const json& row : rows) {
        if (!row.contains("validation")) continue;
        const json& v = row["validation"];
        if (v.value("passed", false)) {
            ++validated;
            if (v.value("tolerance", 0.0) > 0) worst = std::max(worst, v["max_error"].get<double>() / v["tolerance"].get<double>());
        } else {
            ++failed;
        }
    }
    out << "\nvalidation: " << validated << " rows passed, " << failed << " failed; largest error "
        << number_text("%.2f", worst) << " of its tolerance\n";
}

void print_memory_table(std::ostream& out, const json& report) {
    const json& shape = report["shape"];
    out << "attn bench memory: peak resident memory added by one call (getrusage ru_maxrss in a fresh child process,\n"
        << "inputs allocated before the first reading), B=" << shape["B"] << " Hq=" << shape["Hq"] << " Hkv=" << shape["Hkv"]
        << " dh=" << shape["dh"] << ", causal prefill (S = T)\n\n";
    out << "kernel            T     peak MB   x per 4x T   output MB  peak - output MB   one [B,Hq,T,S] MB\n";
    std::map<std::string, double> previous;  // kernel -> MB at the previous T
    std::map<std::string, std::size_t> previous_T;
    for (const json& row : report["rows"]) {
        const std::string kernel = row["kernel"];
        const std::size_t T = row["T"];
        const double mb = row["peak_mb"];
        std::string growth;
        if (previous.count(kernel) && previous[kernel] > 0) {
            // Normalise to a 4x step in T so linear reads 4 and quadratic 16.
            const double steps = std::log(double(T) / double(previous_T[kernel])) / std::log(4.0);
            growth = number_text("%.1f", std::pow(mb / previous[kernel], 1.0 / steps));
        }
        out << kernel << std::string(kernel.size() < 12 ? 12 - kernel.size() : 1, ' ') << pad(std::to_string(T), 7)
            << pad(number_text("%.1f", mb), 12) << pad(growth, 13) << pad(number_text("%.1f", row["output_mb"].get<double>()), 12)
            << pad(number_text("%.1f", mb - row["output_mb"].get<double>()), 18)
            << pad(number_text("%.1f", row["scores_mb"].get<double>()), 20) << (row.contains("failed") ? "  FAILED" : "") << "\n";
        previous[kernel] = mb;
        previous_T[kernel] = T;
    }
    out << "\nA 4x longer sequence multiplies linear memory by 4 and quadratic memory by 16.\n";
}

std::unique_ptr<OutputFile> open_report_file(const std::string& path) {
    return path.empty() ? nullptr : std::make_unique<OutputFile>(path);
}

void write_report(std::unique_ptr<OutputFile>& file, const nlohmann::json& report) {
    if (!file) return;
    file->stream() << json_text(report, 1) << "\n";
    file->commit();
}

}  // namespace anatomy::native
