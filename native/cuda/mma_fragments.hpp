// Lane and thread bookkeeping of flash_mma2 (attention_flash.cu): where each
// 16-byte chunk of a Q, K or V tile lies in shared memory, which chunk each
// thread copies with cp.async, and which row address each lane hands to
// ldmatrix. Host and device code, so tests/cuda/test_gpu_fragments.cpp can hold
// these maps to the PTX ISA on a machine without a GPU.
//
// A tile is [rows, D] bf16, row-major, stored as D/8 chunks of 8 bf16 (16 B) per
// row. Chunk `chunk` of row `row` is stored at chunk position chunk ^ (row % 8):
// the 8 rows an 8x8 ldmatrix reads (same logical chunk, 8 consecutive rows) and
// the 8 chunks a quarter-warp of cp.async writes (one row, 8 consecutive chunks)
// then fall in 8 different 16-byte bank groups (32 banks x 4 B = 8 groups of
// 16 B), so neither is bank-conflicted. Rows stay D * 2 bytes apart, no padding.
//
// ldmatrix .x4: lane l supplies the address of row l % 8 of 8x8 matrix l / 8;
// register i of every lane receives a piece of matrix i. The maps below choose
// the matrices so that registers 0..3 are exactly the mma.m16n8k16 operands:
//   Q (A of S = Q K^T)           {a0, a1, a2, a3} of rows r0 .. r0+15, channels 16kk .. 16kk+15
//   K (B of S = Q K^T)           {b0, b1} of keys k0 .. k0+7, then {b0, b1} of keys k0+8 .. k0+15
//   V, .trans (B of O += P V)    {b0, b1} of channels n0 .. n0+7, then {b0, b1} of channels n0+8 .. n0+15,
//                                for keys k0 .. k0+15
#pragma once

#include "cuda/attention_mask.hpp"  // ANATOMY_HOST_DEVICE

namespace anatomy::gpu {

// flash_mma2's tiles: 4 warps of 32 query rows (two m16 tiles each), 64 keys per tile.
constexpr int kMma2Warps = 4;
constexpr int kMma2Threads = 32 * kMma2Warps;
constexpr int kMma2WarpRows = 32;
constexpr int kMma2Rows = kMma2WarpRows * kMma2Warps;  // Br = 128: the Q tile [Br, D]
constexpr int kMma2Keys = 64;                          // Bc = 64: a K or V tile [Bc, D]

// One 16-byte chunk of a tile: its row and its (logical, unswizzled) chunk index.
struct TileChunk {
    int row;
    int chunk;  // channels 8 * chunk .. 8 * chunk + 7
};

// Stored chunk position of logical chunk `chunk` in row `row`.
ANATOMY_HOST_DEVICE int swizzle_chunk(int row, int chunk) { return chunk ^ (row % 8); }

// Offset in bf16 elements of a chunk from the start of a [rows, D] tile.
ANATOMY_HOST_DEVICE int tile_offset(TileChunk at, int D) { return at.row * D + swizzle_chunk(at.row, at.chunk) * 8; }

// Stepping 16 channels (two chunks) along a row is one XOR on the offset:
//   tile_offset({row, chunk + 2 * step}, D) == step_channels(tile_offset({row, chunk}, D), step)
// for chunk in {0, 1} and 16 * step < D, because row * D has no bits below D and
// (2 * step + chunk) ^ r == (2 * step) ^ (chunk ^ r). Stepping 8 rows is an add
// (row % 8 is unchanged). The kernel computes one offset per lane and operand and
// reaches every ldmatrix address with an XOR and an immediate.
ANATOMY_HOST_DEVICE int step_channels(int offset, int step) { return offset ^ (16 * step); }

// cp.async: copy number `step` of thread `thread` (of `threads`) moves chunk
// step * threads + thread of the tile, counted row by row. Consecutive threads
// read consecutive 16 B of a row (coalesced global reads).
ANATOMY_HOST_DEVICE TileChunk cp_async_chunk(int thread, int step, int threads, int D) {
    const int i = step * threads + thread, chunks_per_row = D / 8;
    return {i / chunks_per_row, i % chunks_per_row};
}

// ldmatrix.x4 for Q as the A operand (16x16, row-major): rows r0 .. r0+15, channels 16kk .. 16kk+15.
// Matrices: 0 = (rows +0..7, ch +0..7) -> a0, 1 = (rows +8..15, ch +0..7) -> a1,
//           2 = (rows +0..7, ch +8..15) -> a2, 3 = (rows +8..15, ch +8..15) -> a3.
ANATOMY_HOST_DEVICE TileChunk ldmatrix_q_chunk(int lane, int r0, int kk) {
    const int matrix = lane / 8, r = lane % 8;
    return {r0 + (matrix % 2) * 8 + r, 2 * kk + matrix / 2};
}

// ldmatrix.x4 for K as the B operand of S = Q K^T (16 channels x 8 keys, "col"):
// keys k0 .. k0+15 (two n-tiles of 8), channels 16kk .. 16kk+15. Rows of an 8x8
// matrix are keys, so lane (g, c) receives K[key g][channels 2c, 2c+1] = b.
// Matrices: 0 = (keys +0..7, ch +0..7) -> b0,  1 = (keys +0..7, ch +8..15) -> b1   of n-tile k0
//           2 = (keys +8..15, ch +0..7) -> b0, 3 = (keys +8..15, ch +8..15) -> b1  of n-tile k0 + 8
ANATOMY_HOST_DEVICE TileChunk ldmatrix_k_chunk(int lane, int k0, int kk) {
    const int matrix = lane / 8, r = lane % 8;
    return {k0 + (matrix / 2) * 8 + r, 2 * kk + matrix % 2};
}

// ldmatrix.x4.trans for V as the B operand of O += P V (16 keys x 8 channels, "col"):
// keys k0 .. k0+15, channels n0 .. n0+15 with n0 = 16 * n2. Rows of an 8x8 matrix
// are keys; transposed, lane (g, c) receives V[keys 2c, 2c+1][channel g] = b.
// Matrices: 0 = (keys +0..7, ch +0..7) -> b0,  1 = (keys +8..15, ch +0..7) -> b1   of channels n0 .. n0+7
//           2 = (keys +0..7, ch +8..15) -> b0, 3 = (keys +8..15, ch +8..15) -> b1  of channels n0+8 .. n0+15
ANATOMY_HOST_DEVICE TileChunk ldmatrix_v_trans_chunk(int lane, int k0, int n2) {
    const int matrix = lane / 8, r = lane % 8;
    return {k0 + (matrix % 2) * 8 + r, 2 * n2 + matrix / 2};
}

}  // namespace anatomy::gpu
