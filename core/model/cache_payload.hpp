// How much a KV cache stores per token, from the config alone.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "model_config.hpp"

namespace anatomy {

struct CachePayload {
    // Keys and values (2) for every layer, KV head and channel: 2 * L * Hkv * dh.
    std::int64_t scalars_per_token = 0;
    std::int64_t bytes_per_token_fp32 = 0;    // 4 bytes a scalar
    std::int64_t bytes_per_token_16bit = 0;   // 2 bytes a scalar (bf16 / fp16)
    std::int64_t bytes_per_token_fp8 = 0;     // 1 byte a scalar
};

// Per token and per sequence (batch one).
CachePayload cache_payload(const ModelConfig& config);

// Bytes for a whole cache: per-token bytes * context length * batch.
std::int64_t cache_bytes(const ModelConfig& config, int bytes_per_scalar, std::int64_t context, std::int64_t batch);

nlohmann::json payload_to_json(const CachePayload& payload);

}  // namespace anatomy
