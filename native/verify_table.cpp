#include "verify_table.hpp"

#include <cstdio>
#include <string>

namespace anatomy::native {

void print_check_table(std::ostream& out, const std::vector<CheckRecord>& checks) {
    char line[512];
    std::snprintf(line, sizeof line, "%-3s %-30s %12s %13s  %-6s %s\n", "id", "check", "max |error|", "tolerance", "result",
                  "compares");
    out << line;
    for (const CheckRecord& c : checks) {
        char error[32], bound[32];
        std::snprintf(error, sizeof error, "%.3e", c.max_abs_error);
        std::snprintf(bound, sizeof bound, "%s %.0e", c.relation == "<=" ? "<=" : ">", c.tolerance);
        std::snprintf(line, sizeof line, "%-3s %-30s %12s %13s  %-6s %s\n", c.id.c_str(), c.name.c_str(), error, bound,
                      c.passed ? "PASS" : "FAIL", c.compares.c_str());
        out << line;
    }
    std::size_t failed = 0;
    for (const CheckRecord& c : checks) failed += c.passed ? 0 : 1;
    if (failed == 0) out << "All " << checks.size() << " checks passed.\n";
    else out << failed << " of " << checks.size() << " checks FAILED.\n";
}

}  // namespace anatomy::native
