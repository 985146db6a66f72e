// flash_mma2's lane bookkeeping (native/cuda/mma_fragments.hpp) held to the PTX
// ISA, on the host: no GPU needed.
//
// The semantics below are written down from the PTX ISA documentation, not from
// the header: "Warp-level matrix load instruction: ldmatrix" and "Matrix
// Fragments for mma.m16n8k16 with floating point type". For each head dim the
// test fills a logical Q, K or V tile with distinct values, writes it into a
// shared-memory image through the kernel's cp.async thread -> chunk map and
// swizzle, emulates the kernel's ldmatrix calls lane by lane from the header's
// address functions (computed exactly as the kernel computes them), and requires
// every lane's registers to hold the elements the mma fragment tables assign to
// it. It also requires the 8 row addresses of every 8x8 matrix, and the 8 chunks
// of every quarter-warp of cp.async, to fall in 8 different 16-byte bank groups.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "cuda/mma_fragments.hpp"

using namespace anatomy::gpu;

namespace {

// ---- the PTX ISA, written down independently ---------------------------------------
// A 32-bit register holds two b16 elements; the lower-indexed one is in bits 0..15.
using Reg = std::pair<std::uint16_t, std::uint16_t>;  // (bits 0..15, bits 16..31)
using Regs = std::array<std::array<Reg, 4>, 32>;      // [lane][register]

// Shared memory: an array of b16 elements; an address is an element index.
struct Smem {
    std::vector<std::uint16_t> cells;
    std::uint16_t at(int element) const { return cells.at(std::size_t(element)); }
};

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 d, [addr]:
//   lanes 8i .. 8i+7 give the addresses of rows 0..7 of matrix i; a row is 8
//   consecutive b16 (16 bytes) starting at that address.
//   Without .trans: lane l receives in d[i] row l/4, columns 2(l%4) and 2(l%4)+1 of matrix i.
//   With .trans: the matrix is read column-major: lane l receives in d[i] column l/4,
//   rows 2(l%4) and 2(l%4)+1 of matrix i (as stored: "row" = the addressed row).
Regs ldmatrix_x4(const Smem& smem, const std::array<int, 32>& row_address, bool trans) {
    Regs d{};
    for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
            auto element = [&](int row, int col) { return smem.at(row_address[8 * i + row] + col); };
            const int a = lane / 4, b = 2 * (lane % 4);
            d[lane][i] = trans ? Reg{element(b, a), element(b + 1, a)} : Reg{element(a, b), element(a, b + 1)};
        }
    return d;
}

// mma.m16n8k16 fragments, groupID = lane >> 2, threadID_in_group = lane % 4. Element
// index e of a fragment; register e / 2 holds elements e (even: low half) and e + 1.
struct Cell {
    int row, col;
};
// A (16x16, .row), elements a0..a7: row = groupID for e in {0,1,4,5}, groupID + 8 otherwise;
// col = 2 * threadID_in_group + (e & 1), + 8 for e >= 4.
Cell a_cell(int lane, int e) {
    const int g = lane >> 2, t = lane % 4;
    return {(e < 2 || (e >= 4 && e < 6)) ? g : g + 8, 2 * t + (e & 1) + (e >= 4 ? 8 : 0)};
}
// B (16x8, .col), elements b0..b3: row = 2 * threadID_in_group + (e & 1), + 8 for e >= 2; col = groupID.
Cell b_cell(int lane, int e) {
    const int g = lane >> 2, t = lane % 4;
    return {2 * t + (e & 1) + (e >= 2 ? 8 : 0), g};
}
// C / D (16x8, f32), elements c0..c3: row = groupID, + 8 for e >= 2; col = 2 * threadID_in_group + (e & 1).
Cell c_cell(int lane, int e) {
    const int g = lane >> 2, t = lane % 4;
    return {e < 2 ? g : g + 8, 2 * t + (e & 1)};
}

// ---- tiles --------------------------------------------------------------------------
// A logical [rows, D] tile with distinct values: element (r, d) = r * D + d + 1 (0 is never a value).
std::uint16_t logical(int D, int row, int col) { return std::uint16_t(row * D + col + 1); }

// 16-byte bank group (of 8: 32 banks x 4 bytes) of an element address.
int bank_group(int element) { return (element * 2 / 16) % 8; }

// The kernel's cp_async_tile: every thread, every step, 8 elements of logical chunk `at`
// stored at tile_offset(at). Requires that every stored chunk is written exactly once,
// every logical chunk is read exactly once, and that each quarter-warp (8 threads, one
// 128-byte shared-memory wavefront) writes 8 different bank groups.
Smem copy_tile(int rows, int D) {
    const int chunks = rows * D / 8, steps = chunks / kMma2Threads;
    REQUIRE(steps * kMma2Threads == chunks);
    Smem smem{std::vector<std::uint16_t>(std::size_t(rows) * D, 0)};
    std::vector<int> written(std::size_t(chunks), 0), read(std::size_t(chunks), 0);
    for (int step = 0; step < steps; ++step)
        for (int quarter = 0; quarter < kMma2Threads / 8; ++quarter) {
            std::set<int> groups;
            for (int thread = 8 * quarter; thread < 8 * quarter + 8; ++thread) {
                const TileChunk at = cp_async_chunk(thread, step, kMma2Threads, D);
                REQUIRE(at.row >= 0);
                REQUIRE(at.row < rows);
                REQUIRE(at.chunk >= 0);
                REQUIRE(at.chunk < D / 8);
                const int dst = tile_offset(at, D);
                REQUIRE(dst % 8 == 0);  // 16-byte aligned
                REQUIRE(dst >= 0);
                REQUIRE(dst + 8 <= rows * D);
                ++written[std::size_t(dst / 8)];
                ++read[std::size_t(at.row * (D / 8) + at.chunk)];
                for (int j = 0; j < 8; ++j) smem.cells[std::size_t(dst + j)] = logical(D, at.row, 8 * at.chunk + j);
                groups.insert(bank_group(dst));
            }
            CHECK_MESSAGE(groups.size() == 8, "cp.async quarter-warp " << quarter << " step " << step << " D " << D);
        }
    for (int i = 0; i < chunks; ++i) {
        REQUIRE_MESSAGE(written[std::size_t(i)] == 1, "stored chunk " << i << " written " << written[std::size_t(i)]);
        REQUIRE_MESSAGE(read[std::size_t(i)] == 1, "logical chunk " << i << " copied " << read[std::size_t(i)]);
    }
    return smem;
}

// The 8 row addresses of each of the 4 matrices lie in 8 different bank groups.
void require_conflict_free(const std::array<int, 32>& address) {
    for (int i = 0; i < 4; ++i) {
        std::set<int> groups;
        for (int r = 0; r < 8; ++r) {
            REQUIRE(address[8 * i + r] % 8 == 0);  // ldmatrix rows are 16-byte aligned
            groups.insert(bank_group(address[8 * i + r]));
        }
        CHECK_MESSAGE(groups.size() == 8, "matrix " << i << " has bank conflicts");
    }
}

// lane's register `reg` must hold elements 2 reg and 2 reg + 1 of a fragment, whose cells
// (in operand coordinates) `value` turns into tile values.
template <typename CellOf, typename Value>
void require_register(const Regs& d, int lane, int reg, int dst, CellOf cell_of, Value value) {
    const Cell lo = cell_of(lane, 2 * dst), hi = cell_of(lane, 2 * dst + 1);
    const Reg want{value(lo), value(hi)};
    CHECK_MESSAGE(d[lane][reg] == want, "lane " << lane << " register " << reg << ": got (" << d[lane][reg].first
                                                << ", " << d[lane][reg].second << "), want (" << want.first << ", "
                                                << want.second << ")");
}

}  // namespace

TEST_CASE("Q tile: ldmatrix.x4 gives every lane its A fragments of S = Q K^T") {
    for (int D : {64, 128}) {
        CAPTURE(D);
        const Smem smem = copy_tile(kMma2Rows, D);
        for (int warp = 0; warp < kMma2Warps; ++warp) {
            const int warp_row0 = warp * kMma2WarpRows;
            std::array<int, 32> q_lane{};
            for (int lane = 0; lane < 32; ++lane)
                q_lane[std::size_t(lane)] = tile_offset(ldmatrix_q_chunk(lane, warp_row0, 0), D);
            for (int mt = 0; mt < 2; ++mt)
                for (int kk = 0; kk < D / 16; ++kk) {
                    CAPTURE(warp);
                    CAPTURE(mt);
                    CAPTURE(kk);
                    std::array<int, 32> address{};  // as the kernel computes it
                    for (int lane = 0; lane < 32; ++lane) {
                        address[std::size_t(lane)] = step_channels(q_lane[std::size_t(lane)], kk) + 16 * mt * D;
                        CHECK(address[std::size_t(lane)] ==
                              tile_offset(ldmatrix_q_chunk(lane, warp_row0 + 16 * mt, kk), D));  // XOR step == map
                    }
                    require_conflict_free(address);
                    const Regs d = ldmatrix_x4(smem, address, false);
                    // A[r][k] = Q[warp_row0 + 16 mt + r][16 kk + k]; q_frag[mt][j] = register j.
                    for (int lane = 0; lane < 32; ++lane)
                        for (int j = 0; j < 4; ++j)
                            require_register(d, lane, j, j, a_cell, [&](Cell a) {
                                return logical(D, warp_row0 + 16 * mt + a.row, 16 * kk + a.col);
                            });
                }
        }
    }
}

TEST_CASE("K tile: ldmatrix.x4 gives every lane its B fragments of S = Q K^T (two key n-tiles per load)") {
    for (int D : {64, 128}) {
        CAPTURE(D);
        const Smem smem = copy_tile(kMma2Keys, D);
        std::array<int, 32> k_lane{};
        for (int lane = 0; lane < 32; ++lane) k_lane[std::size_t(lane)] = tile_offset(ldmatrix_k_chunk(lane, 0, 0), D);
        for (int j2 = 0; j2 < kMma2Keys / 16; ++j2)
            for (int kk = 0; kk < D / 16; ++kk) {
                CAPTURE(j2);
                CAPTURE(kk);
                std::array<int, 32> address{};
                for (int lane = 0; lane < 32; ++lane) {
                    address[std::size_t(lane)] = step_channels(k_lane[std::size_t(lane)], kk) + 16 * j2 * D;
                    CHECK(address[std::size_t(lane)] == tile_offset(ldmatrix_k_chunk(lane, 16 * j2, kk), D));
                }
                require_conflict_free(address);
                const Regs d = ldmatrix_x4(smem, address, false);
                // The kernel: k_frag {0, 1} = (b0, b1) of key n-tile 2 j2, {2, 3} = (b0, b1) of n-tile 2 j2 + 1.
                // B of n-tile jn at k-step kk: B[k][n] = K^T[16 kk + k][8 jn + n] = K[8 jn + n][16 kk + k].
                for (int lane = 0; lane < 32; ++lane)
                    for (int reg = 0; reg < 4; ++reg) {
                        const int jn = 2 * j2 + reg / 2;
                        require_register(d, lane, reg, reg % 2, b_cell,
                                         [&](Cell b) { return logical(D, 8 * jn + b.col, 16 * kk + b.row); });
                    }
            }
    }
}

TEST_CASE("V tile: ldmatrix.x4.trans gives every lane its B fragments of O += P V (two channel n-tiles per load)") {
    for (int D : {64, 128}) {
        CAPTURE(D);
        const Smem smem = copy_tile(kMma2Keys, D);
        std::array<int, 32> v_lane{};
        for (int lane = 0; lane < 32; ++lane)
            v_lane[std::size_t(lane)] = tile_offset(ldmatrix_v_trans_chunk(lane, 0, 0), D);
        for (int kk = 0; kk < kMma2Keys / 16; ++kk)
            for (int n2 = 0; n2 < D / 16; ++n2) {
                CAPTURE(kk);
                CAPTURE(n2);
                std::array<int, 32> address{};
                for (int lane = 0; lane < 32; ++lane) {
                    address[std::size_t(lane)] = step_channels(v_lane[std::size_t(lane)], n2) + 16 * kk * D;
                    CHECK(address[std::size_t(lane)] == tile_offset(ldmatrix_v_trans_chunk(lane, 16 * kk, n2), D));
                }
                require_conflict_free(address);
                const Regs d = ldmatrix_x4(smem, address, true);
                // The kernel: v_frag {0, 1} = (b0, b1) of channel n-tile 2 n2, {2, 3} of n-tile 2 n2 + 1.
                // B of n-tile nn at k-step kk: B[k][n] = V[16 kk + k][8 nn + n].
                for (int lane = 0; lane < 32; ++lane)
                    for (int reg = 0; reg < 4; ++reg) {
                        const int nn = 2 * n2 + reg / 2;
                        require_register(d, lane, reg, reg % 2, b_cell,
                                         [&](Cell b) { return logical(D, 16 * kk + b.row, 8 * nn + b.col); });
                    }
            }
    }
}

TEST_CASE("S accumulators are the P A-fragment in the same lane; the output store covers C exactly") {
    // The kernel packs p_frag[j] for key step kk from C tiles 2kk + j / 2, elements 2 (j % 2), +1
    // (C tile jn covers keys 8 jn .. 8 jn + 7). That must be the A fragment of P[:, 16 kk .. 16 kk + 15].
    for (int lane = 0; lane < 32; ++lane)
        for (int kk = 0; kk < kMma2Keys / 16; ++kk)
            for (int j = 0; j < 4; ++j)
                for (int half = 0; half < 2; ++half) {
                    const int jn = 2 * kk + j / 2;
                    const Cell c = c_cell(lane, 2 * (j % 2) + half);  // in C tile jn
                    const Cell a = a_cell(lane, 2 * j + half);        // in the A tile of k-step kk
                    CHECK(c.row == a.row);
                    CHECK(8 * jn + c.col == 16 * kk + a.col);
                }
    // The kernel stores o[mt][n][2i], o[mt][n][2i + 1] as one 32-bit word: row +8i + g, word 4n + c
    // of the row, i.e. channels 8n + 2c, +1. Every channel of every row of the 16x D block exactly once.
    for (int D : {64, 128}) {
        std::vector<int> stored(std::size_t(16) * D, 0);
        for (int lane = 0; lane < 32; ++lane)
            for (int n = 0; n < D / 8; ++n)
                for (int e = 0; e < 4; ++e) {
                    const int i = e / 2, half = e & 1, g = lane / 4, c = lane % 4;
                    const int row = 8 * i + g, channel = 2 * (4 * n + c) + half;  // the kernel's store
                    const Cell cell = c_cell(lane, e);                              // the ISA's C element
                    CHECK(row == cell.row);
                    CHECK(channel == 8 * n + cell.col);
                    ++stored[std::size_t(row * D + channel)];
                }
        for (int x : stored) REQUIRE(x == 1);
    }
}

TEST_CASE("the swizzle is a permutation of each row's chunks and survives 8-row steps") {
    for (int D : {64, 128})
        for (int row = 0; row < kMma2Rows; ++row) {
            std::set<int> stored;
            for (int chunk = 0; chunk < D / 8; ++chunk) {
                stored.insert(swizzle_chunk(row, chunk));
                CHECK(swizzle_chunk(row + 8, chunk) == swizzle_chunk(row, chunk));
            }
            CHECK(stored.size() == std::size_t(D / 8));
            CHECK(*stored.rbegin() == D / 8 - 1);
        }
}
