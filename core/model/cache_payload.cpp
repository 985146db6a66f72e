#include "cache_payload.hpp"

#include <nlohmann/json.hpp>

namespace anatomy {

CachePayload cache_payload(const ModelConfig& c) {
    CachePayload p;
    p.scalars_per_token = 2LL * c.n_layers * c.n_kv_heads * c.head_dim;
    p.bytes_per_token_fp32 = 4 * p.scalars_per_token;
    p.bytes_per_token_16bit = 2 * p.scalars_per_token;
    p.bytes_per_token_fp8 = p.scalars_per_token;
    return p;
}

std::int64_t cache_bytes(const ModelConfig& config, int bytes_per_scalar, std::int64_t context, std::int64_t batch) {
    return cache_payload(config).scalars_per_token * bytes_per_scalar * context * batch;
}

nlohmann::json payload_to_json(const CachePayload& p) {
    return {
        {"scalars_per_token", p.scalars_per_token},
        {"bytes_per_token_fp32", p.bytes_per_token_fp32},
        {"bytes_per_token_16bit", p.bytes_per_token_16bit},
        {"bytes_per_token_fp8", p.bytes_per_token_fp8},
    };
}

}  // namespace anatomy
