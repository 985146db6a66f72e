// A strict reader and a writer for the safetensors format:
//   [8 bytes: little-endian u64 N][N bytes: JSON header][tensor data]
// The header maps each tensor name to {dtype, shape, data_offsets: [begin, end)},
// offsets relative to the start of the data. The reader works on bytes in
// memory (a mapped file natively, an ArrayBuffer in wasm) and checks every
// offset and size before anything is read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace anatomy {

// F64 is read (a learner's tensors for attn diff, core/diff) and written; a
// checkpoint's weights refuse it (safetensors_views.cpp).
enum class DType { f32, f16, bf16, f64 };

std::string dtype_name(DType dtype);  // "F32", "F16", "BF16", "F64"
std::size_t dtype_size(DType dtype);

struct TensorEntry {
    DType dtype = DType::f32;
    std::vector<std::size_t> shape;
    std::size_t begin = 0, end = 0;  // byte range within the data section
    std::size_t elements() const;
};

class SafetensorsView {
public:
    // Parses and validates the header; throws InputError naming what is wrong
    // (a truncated file, a bad header, an unknown dtype, offsets out of bounds or overlapping).
    // The bytes must outlive the view.
    static SafetensorsView parse(const std::uint8_t* bytes, std::size_t size, const std::string& source = "checkpoint");
    // The same from a header already parsed elsewhere (in the page, by the browser's
    // JSON.parse, so that chapter 1's wasm module carries no JSON parser): checks the
    // length prefix of `bytes` as parse does, then the header against the data after it.
    static SafetensorsView from_header(const nlohmann::json& header, const std::uint8_t* bytes, std::size_t size,
                                       const std::string& source = "checkpoint");
    // N, the header's length in bytes, from the 8-byte prefix; throws if the file cannot hold it.
    static std::size_t header_length(const std::uint8_t* bytes, std::size_t size, const std::string& source);

    const std::map<std::string, TensorEntry>& tensors() const { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    const TensorEntry* find(const std::string& name) const;
    // The start of the data section: a tensor's bytes are data() + [begin, end).
    const std::uint8_t* data() const { return data_; }

    // The tensor's values converted to float, row-major.
    std::vector<float> read_floats(const std::string& name) const;
    // The same as doubles (exact for every dtype).
    std::vector<double> read_doubles(const std::string& name) const;

private:
    const std::uint8_t* data_ = nullptr;  // start of the data section
    std::size_t data_size_ = 0;
    std::string source_;
    std::map<std::string, TensorEntry> tensors_;
    std::map<std::string, std::string> metadata_;
};

struct NamedTensor {
    std::string name;
    std::vector<std::size_t> shape;
    std::vector<float> values;  // row-major
};

// Serialises tensors in the given dtype (rounding to nearest even for 16-bit types).
std::vector<std::uint8_t> write_safetensors(const std::vector<NamedTensor>& tensors, DType dtype,
                                            const std::map<std::string, std::string>& metadata = {});

// The same file in pieces, for a writer that streams one tensor at a time:
// safetensors_header(...) followed by encode_values(...) of each tensor, in the
// order given, is exactly write_safetensors' output.
struct TensorSpec {
    std::string name;
    std::vector<std::size_t> shape;
    std::size_t elements() const;
};
// The 8-byte length, the JSON header and its padding (the data starts 8-byte aligned).
std::vector<std::uint8_t> safetensors_header(const std::vector<TensorSpec>& tensors, DType dtype,
                                             const std::map<std::string, std::string>& metadata = {});
// `values` in `dtype`, little-endian, appended to `out`.
void encode_values(const std::vector<float>& values, DType dtype, std::vector<std::uint8_t>& out);
// The reverse: `n` values stored in `dtype`, little-endian, widened to double
// (exactly); decode_values rounds F64 to float, the others exactly.
std::vector<double> decode_doubles(const std::uint8_t* bytes, DType dtype, std::size_t n);
std::vector<float> decode_values(const std::uint8_t* bytes, DType dtype, std::size_t n);

// IEEE binary16 and bfloat16 conversions, exact in the widening direction.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
std::uint16_t float_to_bfloat16(float value);

}  // namespace anatomy
