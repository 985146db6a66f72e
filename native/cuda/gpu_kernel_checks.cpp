// The kernel checks: random q, k, v; an fp64 reference and a same-precision CPU
// run of masked attention on the host; each GPU version compared with both.
#include "cuda/gpu_kernel_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "bench/harness.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/model_kernels.hpp"
#include "model/random.hpp"
#include "tensor.hpp"
#include "verify/compare.hpp"

namespace anatomy::gpu {
namespace {

// Round to the nearest bfloat16 (ties to even), kept in a float: what
// __float2bfloat16_rn does on the device. Inputs here are finite.
float round_to_bf16(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    bits &= 0xffff0000u;
    float rounded;
    std::memcpy(&rounded, &bits, sizeof rounded);
    return rounded;
}

// Where the CPU run rounds, to match a kernel.
//   probs_normalized:   eager bf16 stores softmax(row) in bf16 before P @ V
//   probs_unnormalized: flash_mma rounds exp(s - m) to bf16 for the mma; l stays fp32
enum class ProbRounding { none, probs_normalized, probs_unnormalized };

using Inputs = AttentionInputs;

// Masked attention on the host in precision Real, the core's definition cell by cell.
//   -> out [B, Hq, T, D]; probs [B, Hq, T, S] (normalised, as the kernel would store them)
template <typename Real>
void host_attention(const Inputs& in, const AttentionShape& sh, const MaskSpec& spec, ProbRounding rounding,
                    bool round_output, std::vector<Real>& out, std::vector<Real>& probs) {
    const int group = sh.Hq / sh.Hkv;
    const Real scale = Real(1) / std::sqrt(Real(sh.D));
    out.assign(std::size_t(sh.B) * sh.Hq * sh.T * sh.D, Real(0));
    probs.assign(std::size_t(sh.B) * sh.Hq * sh.T * sh.S, Real(0));
    std::vector<Real> score(std::size_t(sh.S));
    std::vector<char> visible(std::size_t(sh.S));
    for (int b = 0; b < sh.B; ++b)
        for (int h = 0; h < sh.Hq; ++h) {
            const std::size_t kv_row0 = (std::size_t(b) * sh.Hkv + h / group) * sh.kv_capacity;  // GQA by index
            for (int t = 0; t < sh.T; ++t) {
                const std::size_t row = (std::size_t(b) * sh.Hq + h) * sh.T + t;
                const float* q_row = &in.q[row * sh.D];
                Real row_max = -std::numeric_limits<Real>::infinity();
                for (int s = 0; s < sh.S; ++s) {
                    visible[s] = mask_allows(spec, t, s);
                    if (!visible[s]) continue;
                    const float* k_row = &in.k[(kv_row0 + s) * sh.D];
                    Real dot = 0;
                    for (int d = 0; d < sh.D; ++d) dot += Real(q_row[d]) * Real(k_row[d]);
                    score[s] = dot * scale;
                    row_max = std::max(row_max, score[s]);
                }
                if (row_max == -std::numeric_limits<Real>::infinity()) continue;  // no visible key: zeros
                Real sum = 0;
                for (int s = 0; s < sh.S; ++s) {
                    score[s] = visible[s] ? std::exp(score[s] - row_max) : Real(0);
                    sum += score[s];
                }
                Real* o = &out[row * sh.D];
                Real* p_row = &probs[row * sh.S];
                for (int s = 0; s < sh.S; ++s) {
                    if (!visible[s]) continue;
                    Real weight = score[s] / sum;
                    if (rounding == ProbRounding::probs_normalized) weight = Real(round_to_bf16(float(weight)));
                    if (rounding == ProbRounding::probs_unnormalized) weight = Real(round_to_bf16(float(score[s]))) / sum;
                    p_row[s] = weight;
                    const float* v_row = &in.v[(kv_row0 + s) * sh.D];
                    for (int d = 0; d < sh.D; ++d) o[d] += weight * Real(v_row[d]);
                }
                if (round_output)
                    for (int d = 0; d < sh.D; ++d) o[d] = Real(round_to_bf16(float(o[d])));
            }
        }
}

// As verify/compare.hpp's: a value that is not finite on either side is an infinite error.
double max_abs(const std::vector<double>& x) {
    double m = 0;
    for (double v : x) m = worse_error(m, std::abs(v));
    return m;
}

template <typename A>
double max_error(const std::vector<A>& a, const std::vector<double>& reference) {
    double worst = 0;
    for (std::size_t i = 0; i < reference.size(); ++i) {
        if (!std::isfinite(double(a[i])) || !std::isfinite(reference[i])) return INFINITY;
        worst = std::max(worst, std::abs(double(a[i]) - reference[i]));
    }
    return worst;
}

// The kernel's output (and, for eager, its probabilities) brought back as floats.
struct GpuResult {
    std::vector<float> out;    // [B, Hq, T, D]
    std::vector<float> probs;  // [B, Hq, T, S], eager only
};

// Host floats to a device buffer of E (bf16: rounded on the device, ties to even), and back.
template <typename E>
DeviceBuffer<E> upload_as(const GpuRuntime& gpu, const std::vector<float>& host);
template <>
DeviceBuffer<float> upload_as<float>(const GpuRuntime&, const std::vector<float>& host) {
    return DeviceBuffer<float>(host);
}
template <>
DeviceBuffer<bf16> upload_as<bf16>(const GpuRuntime& gpu, const std::vector<float>& host) {
    const DeviceBuffer<float> staged(host);
    DeviceBuffer<bf16> typed(host.size());
    float_to_bf16(staged.data(), typed.data(), (long long)host.size(), gpu.stream());
    gpu.synchronize();
    return typed;
}
template <typename E>
std::vector<float> download_floats(const GpuRuntime& gpu, const DeviceBuffer<E>& buffer);
template <>
std::vector<float> download_floats<float>(const GpuRuntime&, const DeviceBuffer<float>& buffer) {
    return buffer.to_host();
}
template <>
std::vector<float> download_floats<bf16>(const GpuRuntime& gpu, const DeviceBuffer<bf16>& buffer) {
    DeviceBuffer<float> widened(buffer.size());
    bf16_to_float(buffer.data(), widened.data(), (long long)buffer.size(), gpu.stream());
    gpu.synchronize();
    return widened.to_host();
}

// Upload as E, run `version`, download as float.
template <typename E>
GpuResult run_on_gpu(const GpuRuntime& gpu, KernelVersion version, const AttentionShape& sh, const GpuMask& mask,
                     const Inputs& in) {
    cudaStream_t stream = gpu.stream();
    auto to_device = [&](const std::vector<float>& host) { return upload_as<E>(gpu, host); };
    auto to_host = [&](const DeviceBuffer<E>& buffer) { return download_floats<E>(gpu, buffer); };
    DeviceBuffer<E> q = to_device(in.q), k = to_device(in.k), v = to_device(in.v);
    DeviceBuffer<E> out(in.q.size());
    GpuResult result;
    const std::size_t score_count = std::size_t(sh.B) * sh.Hq * sh.T * sh.S;
    switch (version) {
        case KernelVersion::eager_fp32:
        case KernelVersion::eager_bf16: {
            DeviceBuffer<float> scores(score_count);
            DeviceBuffer<E> probs(score_count);
            attention_eager<E>(gpu.cublas(), sh, mask, q.data(), k.data(), v.data(), scores.data(), probs.data(),
                               out.data(), stream);
            gpu.synchronize();
            result.probs = to_host(probs);
            break;
        }
        case KernelVersion::flash_plain_fp32:
        case KernelVersion::flash_plain_bf16:
            attention_flash_plain<E>(sh, mask, q.data(), k.data(), v.data(), out.data(), stream);
            break;
        case KernelVersion::flash_mma_bf16:
            if constexpr (std::is_same_v<E, bf16>)
                attention_flash_mma(sh, mask, q.data(), k.data(), v.data(), out.data(), stream);
            break;
        case KernelVersion::flash_mma2_bf16:
            if constexpr (std::is_same_v<E, bf16>)
                attention_flash_mma2(sh, mask, q.data(), k.data(), v.data(), out.data(), stream);
            break;
        case KernelVersion::decode_split_fp32:
        case KernelVersion::decode_split_bf16: {
            // An odd split count, so chunks end mid-tile and the combine step merges several.
            const int splits = std::max(decode_split_count(sh, gpu.info().multiprocessors), std::min(7, sh.S));
            DeviceBuffer<float> partial_out(decode_partial_out_floats(sh, splits));
            DeviceBuffer<float> partial_ml(decode_partial_ml_floats(sh, splits));
            attention_decode_split<E>(sh, mask, q.data(), k.data(), v.data(), out.data(), splits, partial_out.data(),
                                      partial_ml.data(), stream);
            gpu.synchronize();
            break;
        }
        case KernelVersion::decode_group_fp32:
        case KernelVersion::decode_group_bf16: {
            // The plan the model and the benchmark use; called twice, so the second call
            // shows that the first left the arrival counters at zero.
            const DecodePlan plan = decode_group_plan(sh, gpu.info().multiprocessors);
            DeviceBuffer<float> partial_out(decode_group_partial_out_floats(sh, plan));
            DeviceBuffer<float> partial_ml(decode_group_partial_ml_floats(sh, plan));
            DeviceBuffer<unsigned> arrivals(decode_group_arrival_counters(sh));
            arrivals.fill_zero();
            for (int call = 0; call < 2; ++call) {
                out.fill_zero();
                attention_decode_group<E>(sh, mask, q.data(), k.data(), v.data(), out.data(), plan,
                                          partial_out.data(), partial_ml.data(), arrivals.data(), stream);
            }
            gpu.synchronize();
            break;
        }
    }
    gpu.synchronize();
    result.out = to_host(out);
    return result;
}

ProbRounding rounding_of(KernelVersion version) {
    if (version == KernelVersion::eager_bf16) return ProbRounding::probs_normalized;
    if (version == KernelVersion::flash_mma_bf16 || version == KernelVersion::flash_mma2_bf16)
        return ProbRounding::probs_unnormalized;
    return ProbRounding::none;
}

bool is_eager(KernelVersion v) { return v == KernelVersion::eager_fp32 || v == KernelVersion::eager_bf16; }

std::string describe(const MaskSpec& spec) {
    switch (spec.kind) {
        case MaskKind::causal: return "causal";
        case MaskKind::sliding_window: return "window " + std::to_string(spec.window);
        case MaskKind::sink_window: return std::to_string(spec.sinks) + " sinks + window " + std::to_string(spec.window);
        default: return mask_kind_name(spec.kind);
    }
}

struct CaseOutcome {
    double gpu_error = 0, cpu_error = 0, tolerance = 0;
    std::string what;  // which tensor and case set the numbers
    double ratio() const { return tolerance > 0 ? gpu_error / tolerance : (gpu_error > 0 ? INFINITY : 0); }
};

CaseOutcome outcome(const std::vector<float>& gpu, const std::vector<float>& cpu, const std::vector<double>& reference,
                    double unit, std::string what) {
    CaseOutcome o;
    o.gpu_error = max_error(gpu, reference);
    o.cpu_error = max_error(cpu, reference);
    o.tolerance = attention_tolerance(o.cpu_error, output_rounding_floor(unit, max_abs(reference)));
    o.what = std::move(what);
    return o;
}

CaseOutcome run_case(const GpuRuntime& gpu, KernelVersion version, const AttentionShape& sh, const MaskSpec& spec) {
    const bool bf16_inputs = is_bf16(version);
    const Inputs in = random_attention_inputs(sh, bf16_inputs, 0x5eed0000u + std::uint64_t(sh.S) * 131u + std::uint64_t(sh.D));
    std::vector<double> ref_out, ref_probs;
    host_attention<double>(in, sh, spec, ProbRounding::none, false, ref_out, ref_probs);
    std::vector<float> cpu_out, cpu_probs;
    host_attention<float>(in, sh, spec, rounding_of(version), bf16_inputs, cpu_out, cpu_probs);

    const GpuMask mask = gpu_mask_from_spec(spec);
    const GpuResult result = bf16_inputs ? run_on_gpu<bf16>(gpu, version, sh, mask, in)
                                         : run_on_gpu<float>(gpu, version, sh, mask, in);
    const double unit = bf16_inputs ? kBf16OutputUnit : kFp32OutputUnit;
    const std::string where = "B " + std::to_string(sh.B) + ", Hq " + std::to_string(sh.Hq) + ", Hkv " +
                              std::to_string(sh.Hkv) + ", T " + std::to_string(sh.T) + ", S " + std::to_string(sh.S) +
                              ", " + describe(spec);
    CaseOutcome worst = outcome(result.out, cpu_out, ref_out, unit, "output, " + where);
    if (is_eager(version)) {
        const CaseOutcome p = outcome(result.probs, cpu_probs, ref_probs, unit, "probabilities, " + where);
        if (p.ratio() > worst.ratio()) worst = p;
    }
    return worst;
}

MaskSpec spec_of(MaskKind kind, int T, int S, int window, int sinks) {
    MaskSpec spec;
    spec.kind = kind;
    spec.T = T;
    spec.S = S;
    spec.window = window;
    spec.sinks = sinks;
    require_valid(spec);
    return spec;
}

// The masks every prefill kernel is checked with, for T queries over S keys.
std::vector<MaskSpec> prefill_masks(int T, int S) {
    return {spec_of(MaskKind::causal, T, S, 0, 0), spec_of(MaskKind::sliding_window, T, S, 33, 0),
            spec_of(MaskKind::sink_window, T, S, 20, 4), spec_of(MaskKind::full, T, S, 0, 0)};
}

CheckRecord to_record(const std::string& id, const std::string& name, const CaseOutcome& worst, int cases) {
    CheckRecord r;
    r.id = id;
    r.name = name;
    r.max_abs_error = worst.gpu_error;
    r.tolerance = worst.tolerance;
    r.relation = "<=";
    r.passed = within_tolerance(worst.gpu_error, worst.tolerance);
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "%.1e", worst.cpu_error);
    r.compares = "GPU vs fp64 core attention, worst of " + std::to_string(cases) + " cases (" + worst.what +
                 "); tolerance 2 x CPU error " + cpu + " + one rounding";
    return r;
}

}  // namespace

AttentionInputs random_attention_inputs(const AttentionShape& sh, bool bf16_inputs, std::uint64_t seed) {
    SplitMix64 random(seed);
    auto draw = [&] {
        const float x = float(random.normal());
        return bf16_inputs ? round_to_bf16(x) : x;
    };
    AttentionInputs in;
    in.q.resize(std::size_t(sh.B) * sh.Hq * sh.T * sh.D);
    for (float& x : in.q) x = draw();
    const std::size_t kv = std::size_t(sh.B) * sh.Hkv * sh.kv_capacity * sh.D;
    in.k.assign(kv, std::numeric_limits<float>::quiet_NaN());
    in.v.assign(kv, std::numeric_limits<float>::quiet_NaN());
    for (int bh = 0; bh < sh.B * sh.Hkv; ++bh)
        for (int s = 0; s < sh.S; ++s)
            for (int d = 0; d < sh.D; ++d) {
                const std::size_t i = (std::size_t(bh) * sh.kv_capacity + s) * sh.D + d;
                in.k[i] = draw();
                in.v[i] = draw();
            }
    return in;
}


const char* to_string(KernelVersion v) {
    switch (v) {
        case KernelVersion::eager_fp32: return "eager_fp32";
        case KernelVersion::eager_bf16: return "eager_bf16";
        case KernelVersion::flash_plain_fp32: return "flash_plain_fp32";
        case KernelVersion::flash_plain_bf16: return "flash_plain_bf16";
        case KernelVersion::flash_mma_bf16: return "flash_mma_bf16";
        case KernelVersion::flash_mma2_bf16: return "flash_mma2_bf16";
        case KernelVersion::decode_split_fp32: return "decode_split_fp32";
        case KernelVersion::decode_split_bf16: return "decode_split_bf16";
        case KernelVersion::decode_group_fp32: return "decode_group_fp32";
        case KernelVersion::decode_group_bf16: return "decode_group_bf16";
    }
    return "?";
}

bool is_bf16(KernelVersion v) {
    return v == KernelVersion::eager_bf16 || v == KernelVersion::flash_plain_bf16 || v == KernelVersion::flash_mma_bf16 ||
           v == KernelVersion::flash_mma2_bf16 ||
           v == KernelVersion::decode_split_bf16 || v == KernelVersion::decode_group_bf16;
}

CheckRecord check_kernel_case(const GpuRuntime& gpu, KernelVersion version, const AttentionShape& shape,
                              const MaskSpec& spec, const std::string& id) {
    const CaseOutcome o = run_case(gpu, version, shape, spec);
    return to_record(id, std::string(to_string(version)) + "_d" + std::to_string(shape.D), o, 1);
}

std::vector<CheckRecord> run_kernel_checks(const GpuRuntime& gpu, const KernelCheckOptions& options) {
    // Prefill shapes: GQA (4 query heads on 2 KV heads) with a cached history of 50 and
    // ragged tiles (T = 77, S = 127), then one head per KV head with no history.
    // KV buffers hold 5 rows more than S, filled with NaN.
    std::vector<AttentionShape> prefill = {{2, 4, 2, 77, 127, 0, 132}};
    if (!options.quick) prefill.push_back({1, 2, 2, 200, 200, 0, 205});
    // Decode: one query over S keys, S = 1 (a lone key), 1000 and 4133 (odd chunk ends).
    std::vector<int> decode_S = {1, 1000};
    if (!options.quick) decode_S.push_back(4133);

    const std::vector<KernelVersion> prefill_versions = {
        KernelVersion::eager_fp32, KernelVersion::eager_bf16, KernelVersion::flash_plain_fp32,
        KernelVersion::flash_plain_bf16, KernelVersion::flash_mma_bf16, KernelVersion::flash_mma2_bf16};
    std::vector<CheckRecord> records;
    int next = 1;
    auto id = [&] { return "k" + std::to_string(next++); };

    for (KernelVersion version : prefill_versions)
        for (int D : {8, 64, 128}) {
            if (version == KernelVersion::flash_mma_bf16 && !flash_mma_supports(D)) continue;
            if (version == KernelVersion::flash_mma2_bf16 && !flash_mma2_supports(D)) continue;
            CaseOutcome worst;
            int cases = 0;
            for (AttentionShape sh : prefill) {
                sh.D = D;
                for (const MaskSpec& spec : prefill_masks(sh.T, sh.S)) {
                    const CaseOutcome o = run_case(gpu, version, sh, spec);
                    if (cases++ == 0 || o.ratio() > worst.ratio()) worst = o;
                }
            }
            records.push_back(to_record(id(), std::string(to_string(version)) + "_d" + std::to_string(D), worst, cases));
        }
    // Decode: 2 sequences of 4 query heads on 2 KV heads (group 2); in the full run
    // also group 8 (8 on 1) and group 1 (2 on 2), the sizes decode_group compiles.
    std::vector<AttentionShape> decode_heads = {{2, 4, 2, 1, 1, 0, 0}};
    if (!options.quick) {
        decode_heads.push_back({1, 8, 1, 1, 1, 0, 0});
        decode_heads.push_back({1, 2, 2, 1, 1, 0, 0});
    }
    for (KernelVersion version : {KernelVersion::decode_split_fp32, KernelVersion::decode_split_bf16,
                                  KernelVersion::decode_group_fp32, KernelVersion::decode_group_bf16})
        for (int D : {8, 64, 128}) {
            CaseOutcome worst;
            int cases = 0;
            for (AttentionShape sh : decode_heads)
                for (int S : decode_S) {
                    sh.S = S, sh.D = D, sh.kv_capacity = S + 5;
                    std::vector<MaskSpec> masks = {spec_of(MaskKind::causal, 1, S, 0, 0)};
                    if (S > 1) {
                        masks.push_back(spec_of(MaskKind::sliding_window, 1, S, 300, 0));
                        masks.push_back(spec_of(MaskKind::sink_window, 1, S, 300, 4));
                    }
                    for (const MaskSpec& spec : masks) {
                        const CaseOutcome o = run_case(gpu, version, sh, spec);
                        if (cases++ == 0 || o.ratio() > worst.ratio()) worst = o;
                    }
                }
            records.push_back(to_record(id(), std::string(to_string(version)) + "_d" + std::to_string(D), worst, cases));
        }
    return records;
}

}  // namespace anatomy::gpu
