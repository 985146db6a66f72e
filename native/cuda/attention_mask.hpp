// The masks the GPU attention kernels apply, as small predicates usable on the
// host and the device (FlashAttention's mask.h). The same four kinds as
// core/masks.hpp, which is the reference they are checked against
// (gpu_mask_from_spec converts, mask_allows is the cell-by-cell truth).
//
// The T queries sit at absolute positions history .. history + T - 1, with
// history = S - T keys cached before them. A query at absolute position q sees:
//   full            every key
//   causal          s <= q
//   sliding_window  q - window < s <= q
//   sink_window     s <= q and (q - window < s or s < sinks)
#pragma once

#ifdef __CUDACC__
#define ANATOMY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ANATOMY_HOST_DEVICE inline
#endif

namespace anatomy::gpu {

enum class GpuMaskKind : int { full = 0, causal = 1, sliding_window = 2, sink_window = 3 };

struct GpuMask {
    GpuMaskKind kind = GpuMaskKind::causal;
    long long history = 0;  // S - T: the absolute position of query row 0
    long long window = 0;   // sliding_window, sink_window
    long long sinks = 0;    // sink_window
};

// May the query at absolute position q read key s?
ANATOMY_HOST_DEVICE bool mask_visible(const GpuMask& m, long long q, long long s) {
    switch (m.kind) {
        case GpuMaskKind::full: return true;
        case GpuMaskKind::causal: return s <= q;
        case GpuMaskKind::sliding_window: return s <= q && s > q - m.window;
        case GpuMaskKind::sink_window: return s <= q && (s > q - m.window || s < m.sinks);
    }
    return false;
}

// A tile of queries at absolute positions [q_first, q_last] against keys
// [s_first, s_last] (both inclusive, keys already clipped to S - 1).
// Skipped: no cell visible, so a kernel never loads the tile.
ANATOMY_HOST_DEVICE bool tile_skipped(const GpuMask& m, long long q_first, long long q_last, long long s_first,
                                      long long s_last) {
    switch (m.kind) {
        case GpuMaskKind::full: return false;
        case GpuMaskKind::causal: return s_first > q_last;
        // Every key lies before the window of the earliest query (the window that reaches furthest back).
        case GpuMaskKind::sliding_window: return s_first > q_last || s_last <= q_first - m.window;
        case GpuMaskKind::sink_window:
            return s_first > q_last || (s_last <= q_first - m.window && s_first >= m.sinks);
    }
    return false;
}

// Every cell visible, so the kernel may skip the per-cell predicate. Conservative
// for sink_window: a tile straddling the sinks and the window is called partial.
ANATOMY_HOST_DEVICE bool tile_all_visible(const GpuMask& m, long long q_first, long long q_last, long long s_first,
                                          long long s_last) {
    switch (m.kind) {
        case GpuMaskKind::full: return true;
        case GpuMaskKind::causal: return s_last <= q_first;
        case GpuMaskKind::sliding_window: return s_last <= q_first && s_first > q_last - m.window;
        case GpuMaskKind::sink_window: return s_last <= q_first && (s_first > q_last - m.window || s_last < m.sinks);
    }
    return false;
}

}  // namespace anatomy::gpu
