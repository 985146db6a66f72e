// Source: llama2.c checkpoints (the .bin files of karpathy/llama2.c's run.c and
// export.py: stories260K, stories15M, 42M, 110M, Llama 2 exports), read in place.
//
//   version 0: seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
//              vocab_size, seq_len; a negative vocab_size: the classifier is not
//              tied), then float32 arrays, each matrix stored [out, in]:
//                embedding [V, D]; attention RMSNorm [L, D]; wq [L, D, D];
//                wk, wv [L, kv_dim, D]; wo [L, D, D]; FFN RMSNorm [L, D];
//                w1 (gate) [L, F, D]; w2 (down) [L, D, F]; w3 (up) [L, F, D];
//                final RMSNorm [D]; two RoPE tables [seq_len, head_dim / 2] (skipped);
//                the classifier [V, D] when untied.
//   version 1: uint32 magic 0x616b3432 ("ak42"), int32 version, the seven int32,
//              a uint8 "classifier shared" flag, zeros to byte 256; then float32
//              attention RMSNorm [L, D], FFN RMSNorm [L, D], final RMSNorm [D],
//              embedding, wq, wk, wv, wo, w1, w2, w3 (as above), classifier if untied.
//   Later versions (2: int8 groups) are refused by name.
// llama2.c rotates adjacent channel pairs (2i, 2i + 1) with theta 10000 (the core's
// interleaved pairing) and normalises with eps 1e-5. Each array [L, out, in] gives
// layer i the slice at i * out * in floats, viewed under its Hugging Face name
// (llama_tensors.hpp), so every loader reads these files unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../model/weights.hpp"
#include "tensor_views.hpp"

namespace anatomy {

struct Llama2cCheckpoint {
    ModelConfig config;
    TensorViews tensors;  // over the file's bytes, which must outlive them
    int version = 0;      // 0 or 1
    int seq_len = 0;      // the context the model was trained with
};

// True when the bytes start like a llama2.c version 1+ file (the magic).
bool has_llama2c_magic(const std::uint8_t* bytes, std::size_t size);

// Throws InputError, prefixed with `source`, for a file shorter than its header,
// an unknown version, dimensions that are not positive or do not divide
// (dim by n_heads, n_heads by n_kv_heads, an odd head size), or a header whose
// sizes do not add up to the file's length.
Llama2cCheckpoint llama2c_checkpoint(const std::uint8_t* bytes, std::size_t size, const std::string& source);

// The other way: `model` as a llama2.c file of `version` (0 or 1) with context
// `seq_len`, handed to `write` piece by piece (the header, then one array of one
// layer at a time, so a 110M-parameter model needs no second copy in memory).
// Matrices are written [out, in] as they are (no RoPE permutation: the file's
// pairing is the model's, which must be interleaved, as llama2.c's is); version 0's
// RoPE tables hold cos and sin of pos * 10000^(-2i / head_dim), as llama2.c's export.
// Throws InputError for a half-split model, another version or seq_len < 1.
void write_llama2c(const Model<float>& model, int seq_len, int version,
                   const std::function<void(const std::vector<std::uint8_t>&)>& write);

}  // namespace anatomy
