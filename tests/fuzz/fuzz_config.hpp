// The micro model the fuzz target's mode 3 loads, shared with make_seeds.cpp.
#pragma once

#include "model/model_config.hpp"

namespace anatomy {

// 1 layer, width 8, 2 query heads on 1 KV head of 4 channels, SwiGLU 8, vocabulary 16, tied.
inline ModelConfig fuzz_micro_config() {
    ModelConfig c;
    c.name = "fuzz-micro";
    c.vocab_size = 16;
    c.hidden_size = 8;
    c.n_layers = 1;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.head_dim = 4;
    c.ffn_size = 8;
    c.tie_embeddings = true;
    return c;
}

}  // namespace anatomy
