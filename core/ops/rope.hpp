#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "../tensor.hpp"

namespace anatomy {

// How RoPE groups the channels of one head into rotated pairs.
//   half_split:  channel i pairs with i + head_dim/2 (Llama / Hugging Face layout)
//   interleaved: channel 2i pairs with 2i + 1 (the original RoFormer / Meta layout)
enum class RopePairing { half_split, interleaved };

std::string to_string(RopePairing pairing);                    // "half_split" or "interleaved"
RopePairing rope_pairing_from_string(std::string_view text);  // throws InputError

// The rotation angle of channel pair i at position p: p * theta^(-2i / dh),
// for i in [0, dh/2). Low pairs turn fast, high pairs slowly.
//   positions: [T]  ->  angles: [T, dh/2]
Matrix<double> rope_angles(const std::vector<std::int64_t>& positions, int head_dim, double theta);

// Rotary position embedding: rotate each channel pair of every head by the angle
// of its position. Applied to queries and keys, never to values.
//   half_split:  pairs (i, i + dh/2)      interleaved: pairs (2i, 2i + 1)
//   (a, b) -> (a cos - b sin, a sin + b cos)
//   x: [B, H, T, dh], positions: [T] (absolute: cached history + t)  ->  [B, H, T, dh]
template <typename Real>
Tensor4<Real> apply_rope(const Tensor4<Real>& x, const std::vector<std::int64_t>& positions, double theta,
                         RopePairing pairing);

// Backward: a rotation's transpose is the rotation by the opposite angle, so the
// gradient turns each pair back: (da, db) = (dy_a cos + dy_b sin, -dy_a sin + dy_b cos).
//   dy: [B, H, T, dh], positions: [T]  ->  dx: [B, H, T, dh]
template <typename Real>
Tensor4<Real> apply_rope_backward(const Tensor4<Real>& dy, const std::vector<std::int64_t>& positions, double theta,
                                  RopePairing pairing);

// The two channels that RoPE rotates together as pair i of a head of width dh.
std::pair<int, int> rope_pair_channels(int i, int head_dim, RopePairing pairing);

}  // namespace anatomy
