// The --device flag shared by the commands that can run on a GPU.
#include <string>

#include "cuda/gpu_verify.hpp"
#include "number_args.hpp"

namespace anatomy::native {

int parse_device_flag(const std::string& text) {
    if (text == "cpu") return -1;
    if (text == "cuda") return 0;
    if (text.rfind("cuda:", 0) == 0) return int(parse_decimal(text.substr(5), "--device cuda:N", 0, 1023));
    throw InputError("unknown --device '" + text + "' (expected cpu, cuda or cuda:N)");
}

}  // namespace anatomy::native
