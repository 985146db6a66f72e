#include "build_info.hpp"

#include <nlohmann/json.hpp>

namespace anatomy {

BuildInfo build_info() {
    BuildInfo info;
    info.project_version = ANATOMY_VERSION;
#if defined(__clang__)
    info.compiler = std::string("clang ") + __clang_version__;
    while (!info.compiler.empty() && info.compiler.back() == ' ') info.compiler.pop_back();
#if defined(__EMSCRIPTEN__)
    info.compiler += " (emscripten)";
#endif
#elif defined(__GNUC__)
    info.compiler = std::string("g++ ") + __VERSION__;
#else
    info.compiler = "unknown";
#endif
#if defined(__EMSCRIPTEN__)
    info.platform = "wasm";
#else
    info.platform = "native";
#endif
    return info;
}

nlohmann::json build_info_to_json(const BuildInfo& info) {
    return {{"project_version", info.project_version}, {"compiler", info.compiler}, {"platform", info.platform}};
}

}  // namespace anatomy
