// Which compiler and platform built this core, for the trace's provenance.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#ifndef ANATOMY_VERSION
#define ANATOMY_VERSION "0.0.0-dev"
#endif

namespace anatomy {

struct BuildInfo {
    std::string project_version;
    std::string compiler;  // e.g. "g++ 12.2.0" or "clang 14.0.6 (emscripten)"
    std::string platform;  // "native" or "wasm"
};

BuildInfo build_info();
nlohmann::json build_info_to_json(const BuildInfo& info);

}  // namespace anatomy
