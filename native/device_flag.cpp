// The --device flag shared by the commands that can run on a GPU.
#include <string>

#include "cuda/gpu_verify.hpp"

namespace anatomy::native {

int parse_device_flag(const std::string& text) {
    if (text == "cpu") return -1;
    if (text == "cuda") return 0;
    const std::string index = text.rfind("cuda:", 0) == 0 ? text.substr(5) : "";
    if (!index.empty() && index.size() <= 4 && index.find_first_not_of("0123456789") == std::string::npos &&
        std::stoi(index) <= 1023)
        return std::stoi(index);
    throw InputError("unknown --device '" + text + "' (expected cpu, cuda or cuda:N with N from 0 to 1023)");
}

}  // namespace anatomy::native
