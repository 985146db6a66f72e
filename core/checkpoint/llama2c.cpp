// The llama2.c source: a header, then float32 arrays viewed where they lie (llama2c.hpp).
#include "llama2c.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "../tensor.hpp"
#include "llama_tensors.hpp"

namespace anatomy {
namespace {

constexpr std::uint32_t kMagic = 0x616b3432;  // "ak42"
constexpr std::size_t kVersion1Header = 256;

std::int32_t int_at(const std::uint8_t* bytes, std::size_t offset) {
    std::int32_t value;
    std::memcpy(&value, bytes + offset, sizeof value);
    return value;
}

// One array of the file, in file order: a weight of every layer ([L, ...]) or of the model.
struct Array {
    LlamaWeight weight;
    bool per_layer;
};

// The arrays before the RoPE tables (version 0) or before the classifier (version 1).
std::vector<Array> arrays_of(int version) {
    using W = LlamaWeight;
    if (version == 0)
        return {{W::embedding, false}, {W::attn_norm, true}, {W::wq, true},     {W::wk, true},
                {W::wv, true},         {W::wo, true},        {W::ffn_norm, true}, {W::w_gate, true},
                {W::w_down, true},     {W::w_up, true},      {W::final_norm, false}};
    return {{W::attn_norm, true}, {W::ffn_norm, true}, {W::final_norm, false}, {W::embedding, false},
            {W::wq, true},        {W::wk, true},       {W::wv, true},         {W::wo, true},
            {W::w_gate, true},    {W::w_down, true},   {W::w_up, true}};
}

}  // namespace

bool has_llama2c_magic(const std::uint8_t* bytes, std::size_t size) {
    if (size < 4) return false;
    std::uint32_t magic;
    std::memcpy(&magic, bytes, sizeof magic);
    return magic == kMagic;
}

Llama2cCheckpoint llama2c_checkpoint(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    auto fail = [&](const std::string& what) { return InputError(source + ": " + what); };
    Llama2cCheckpoint ck;
    std::size_t offset = 0;  // where the seven int32 start
    bool shared = true;
    if (has_llama2c_magic(bytes, size)) {
        if (size < kVersion1Header) throw fail("shorter than the 256-byte header of a llama2.c version 1+ file");
        ck.version = int_at(bytes, 4);
        if (ck.version == 2) throw fail("llama2.c version 2 (int8-quantised weights) is not supported; export version 1 (float32)");
        if (ck.version != 1) throw fail("unknown llama2.c version " + std::to_string(ck.version) + " (version 0 and 1 are read)");
        offset = 8;
        shared = bytes[36] != 0;
    } else if (size < 28) {
        throw fail("shorter than the 28-byte header of a llama2.c checkpoint");
    }
    const std::int32_t dim = int_at(bytes, offset), hidden = int_at(bytes, offset + 4), layers = int_at(bytes, offset + 8);
    const std::int32_t heads = int_at(bytes, offset + 12), kv_heads = int_at(bytes, offset + 16);
    std::int32_t vocab = int_at(bytes, offset + 20);
    ck.seq_len = int_at(bytes, offset + 24);
    if (ck.version == 0) {
        shared = vocab > 0;
        if (vocab < 0) vocab = -vocab;
    }
    for (auto [name, value] : {std::pair{"dim", dim}, {"hidden_dim", hidden}, {"n_layers", layers}, {"n_heads", heads},
                               {"n_kv_heads", kv_heads}, {"vocab_size", vocab}, {"seq_len", ck.seq_len}})
        if (value <= 0 || value > (1 << 20))
            throw fail(std::string("header ") + name + " is " + std::to_string(value) + ", not a size between 1 and 2^20");
    if (dim % heads != 0)
        throw fail("dim " + std::to_string(dim) + " is not a multiple of n_heads " + std::to_string(heads));
    if (heads % kv_heads != 0)
        throw fail("n_heads " + std::to_string(heads) + " is not a multiple of n_kv_heads " + std::to_string(kv_heads));
    if ((dim / heads) % 2 != 0) throw fail("head size " + std::to_string(dim / heads) + " is odd: RoPE rotates pairs");

    ModelConfig& c = ck.config;
    c.name = "llama2.c";
    c.vocab_size = vocab;
    c.hidden_size = dim;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = kv_heads;
    c.head_dim = dim / heads;
    c.ffn_size = hidden;
    c.rope_theta = 10000.0;
    c.rms_norm_eps = 1e-5;  // run.c's rmsnorm
    c.rope_pairing = RopePairing::interleaved;
    c.tie_embeddings = shared;
    require_valid(c);

    // The bytes the header implies, before any view is made. In double: sizes up to
    // 2^20 each can imply more bytes than 64 bits count (a file that large does not
    // exist, but the message must say so rather than a wrapped number), and any size
    // a real file has is an integer below 2^53, held exactly.
    const double floats_per_rope_table = double(ck.seq_len) * double(c.head_dim / 2);
    double expected = ck.version == 0 ? 28 : kVersion1Header;
    for (const Array& a : arrays_of(ck.version)) {
        double elements = 1;
        for (const std::size_t d : stored_shape(c, a.weight)) elements *= double(d);
        expected += 4 * elements * (a.per_layer ? double(layers) : 1);
    }
    if (ck.version == 0) expected += 4 * 2 * floats_per_rope_table;
    if (!shared) expected += 4 * double(vocab) * double(dim);
    if (double(size) != expected) {
        char implied[32];
        std::snprintf(implied, sizeof implied, expected < 1e15 ? "%.0f" : "%.3g", expected);
        throw fail("the header (dim " + std::to_string(dim) + ", hidden_dim " + std::to_string(hidden) + ", " +
                   std::to_string(layers) + " layers, vocab " + std::to_string(vocab) + ", seq_len " +
                   std::to_string(ck.seq_len) + (shared ? ", tied" : ", untied") + ") implies " + implied +
                   " bytes; the file has " + std::to_string(size));
    }

    std::size_t at = ck.version == 0 ? 28 : kVersion1Header;
    auto view = [&](LlamaWeight weight, int layer) {
        const std::vector<std::size_t> shape = stored_shape(c, weight);
        TensorView t{hf_tensor_name(weight, layer), bytes + at, DType::f32, shape};
        at += t.size_bytes();
        return t;
    };
    for (const Array& a : arrays_of(ck.version)) {
        if (!a.per_layer) {
            ck.tensors.push_back(view(a.weight, -1));
            continue;
        }
        for (int l = 0; l < layers; ++l) ck.tensors.push_back(view(a.weight, l));
    }
    if (ck.version == 0) at += 4 * 2 * floats_per_rope_table;  // freq_cis_real, freq_cis_imag: the core computes RoPE
    if (!shared) ck.tensors.push_back(view(LlamaWeight::lm_head, -1));
    return ck;
}

namespace {

void append_ints(std::vector<std::uint8_t>& out, std::initializer_list<std::int32_t> values) {
    for (std::int32_t v : values) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        out.insert(out.end(), p, p + 4);
    }
}

void append_floats(std::vector<std::uint8_t>& out, const float* values, std::size_t n) {
    if (n == 0) return;
    const auto* p = reinterpret_cast<const std::uint8_t*>(values);
    out.insert(out.end(), p, p + 4 * n);
}

// One weight of one layer (layer ignored outside the layers) as stored: [out, in], row-major.
std::vector<float> stored_values(const Model<float>& model, LlamaWeight weight, int layer) {
    const ModelWeights<float>& w = model.weights;
    auto rows = [](const Matrix<float>& m) { return std::vector<float>(m.begin(), m.end()); };  // kept as stored
    auto out_in = [](const Matrix<float>& m) {  // [in, out] -> [out, in]
        const Matrix<float> t = xt::transpose(m);
        return std::vector<float>(t.begin(), t.end());
    };
    auto vec = [](const Vector<float>& v) { return std::vector<float>(v.begin(), v.end()); };
    switch (weight) {
        case LlamaWeight::embedding: return rows(w.embedding);
        case LlamaWeight::final_norm: return vec(w.final_norm);
        case LlamaWeight::lm_head: return out_in(w.lm_head);
        default: break;
    }
    const LayerWeights<float>& l = w.layers[std::size_t(layer)];
    switch (weight) {
        case LlamaWeight::attn_norm: return vec(l.attn_norm);
        case LlamaWeight::wq: return out_in(l.wq);
        case LlamaWeight::wk: return out_in(l.wk);
        case LlamaWeight::wv: return out_in(l.wv);
        case LlamaWeight::wo: return out_in(l.wo);
        case LlamaWeight::ffn_norm: return vec(l.ffn_norm);
        case LlamaWeight::w_gate: return out_in(l.w_gate);
        case LlamaWeight::w_up: return out_in(l.w_up);
        case LlamaWeight::w_down: return out_in(l.w_down);
        default: return {};
    }
}

}  // namespace

void write_llama2c(const Model<float>& model, int seq_len, int version,
                   const std::function<void(const std::vector<std::uint8_t>&)>& write) {
    const ModelConfig& c = model.config;
    if (c.rope_pairing != RopePairing::interleaved)
        throw InputError("a llama2.c file rotates adjacent channel pairs: the model must use interleaved RoPE pairing");
    if (c.attention_sinks) throw InputError("a llama2.c file has no place for attention sinks: write a Hugging Face folder instead");
    if (version != 0 && version != 1) throw InputError("llama2.c files are written as version 0 or 1");
    if (seq_len < 1) throw InputError("seq_len must be at least 1");
    require_shapes(c, model.weights);
    const bool tied = c.tie_embeddings;
    std::vector<std::uint8_t> header;
    if (version == 0) {
        append_ints(header, {c.hidden_size, c.ffn_size, c.n_layers, c.n_heads, c.n_kv_heads,
                             tied ? c.vocab_size : -c.vocab_size, seq_len});
    } else {
        append_ints(header, {std::int32_t(kMagic), 1, c.hidden_size, c.ffn_size, c.n_layers, c.n_heads, c.n_kv_heads,
                             c.vocab_size, seq_len});
        header.push_back(tied ? 1 : 0);
        header.resize(kVersion1Header, 0);
    }
    write(header);
    for (const Array& a : arrays_of(version))
        for (int l = 0; l < (a.per_layer ? c.n_layers : 1); ++l) {
            const std::vector<float> values = stored_values(model, a.weight, l);
            std::vector<std::uint8_t> bytes;
            append_floats(bytes, values.data(), values.size());
            write(bytes);
        }
    if (version == 0) {  // freq_cis_real, then freq_cis_imag: [seq_len, head_dim / 2]
        const int half = c.head_dim / 2;
        for (int part = 0; part < 2; ++part) {
            std::vector<float> table(std::size_t(seq_len) * std::size_t(half));
            for (int pos = 0; pos < seq_len; ++pos)
                for (int i = 0; i < half; ++i) {
                    const double angle = pos * std::pow(c.rope_theta, -2.0 * i / c.head_dim);
                    table[std::size_t(pos) * half + i] = float(part == 0 ? std::cos(angle) : std::sin(angle));
                }
            std::vector<std::uint8_t> bytes;
            append_floats(bytes, table.data(), table.size());
            write(bytes);
        }
    }
    if (!tied) {
        const std::vector<float> values = stored_values(model, LlamaWeight::lm_head, -1);
        std::vector<std::uint8_t> bytes;
        append_floats(bytes, values.data(), values.size());
        write(bytes);
    }
}

}  // namespace anatomy
