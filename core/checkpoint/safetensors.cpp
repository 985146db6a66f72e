#include "safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "../tensor.hpp"

namespace anatomy {
namespace {

// A header larger than this is not a checkpoint we should trust (real ones are a few MB at most).
constexpr std::uint64_t max_header_bytes = 100u << 20;

DType dtype_from_name(const std::string& name, const std::string& tensor, const std::string& source) {
    if (name == "F32") return DType::f32;
    if (name == "F16") return DType::f16;
    if (name == "BF16") return DType::bf16;
    if (name == "F64") return DType::f64;
    throw InputError(source + ": tensor '" + tensor + "' has unsupported dtype '" + name +
                     "' (supported: F32, F16, BF16, F64)");
}

std::uint16_t load_u16(const std::uint8_t* p) { return std::uint16_t(p[0] | (p[1] << 8)); }

std::uint32_t float_bits(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits;
}

float bits_float(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
}

}  // namespace

std::string dtype_name(DType dtype) {
    switch (dtype) {
        case DType::f32: return "F32";
        case DType::f16: return "F16";
        case DType::bf16: return "BF16";
        case DType::f64: return "F64";
    }
    return "?";
}

std::size_t dtype_size(DType dtype) {
    switch (dtype) {
        case DType::f32: return 4;
        case DType::f16:
        case DType::bf16: return 2;
        case DType::f64: return 8;
    }
    return 0;
}

std::size_t TensorEntry::elements() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

std::size_t SafetensorsView::header_length(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    if (size < 8) throw InputError(source + ": file is truncated (" + std::to_string(size) + " bytes, no header length)");
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
    if (header_size > max_header_bytes) throw InputError(source + ": header length " + std::to_string(header_size) + " is implausible");
    if (header_size > size - 8)
        throw InputError(source + ": file is truncated (header says " + std::to_string(header_size) + " bytes, file has " +
                         std::to_string(size - 8) + " after the length)");
    return std::size_t(header_size);
}

SafetensorsView SafetensorsView::parse(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    const std::size_t header_size = header_length(bytes, size, source);
    // A JSON object may repeat a key, and the parser keeps the last: a tensor named
    // twice would be read from its second entry without a word. Each key of the
    // header's top level is noted as it is read, and a repeat refused.
    std::set<std::string> names;
    std::string repeated;
    const nlohmann::json::parser_callback_t note_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (depth == 1 && event == nlohmann::json::parse_event_t::key && !names.insert(parsed.get<std::string>()).second &&
            repeated.empty())
            repeated = parsed.get<std::string>();
        return true;
    };
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(bytes + 8, bytes + 8 + header_size, note_keys);
    } catch (const nlohmann::json::exception&) {
        throw InputError(source + ": header is not valid JSON");
    }
    if (!repeated.empty()) throw InputError(source + ": the header names '" + repeated + "' twice");
    return from_header(header, bytes, size, source);
}

SafetensorsView SafetensorsView::from_header(const nlohmann::json& header, const std::uint8_t* bytes, std::size_t size,
                                             const std::string& source) {
    const std::size_t header_size = header_length(bytes, size, source);
    if (!header.is_object()) throw InputError(source + ": header is not a JSON object");

    SafetensorsView view;
    view.source_ = source;
    view.data_ = bytes + 8 + header_size;
    view.data_size_ = size - 8 - header_size;

    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    for (const auto& [name, info] : header.items()) {
        if (name == "__metadata__") {
            if (!info.is_object()) throw InputError(source + ": __metadata__ is not an object");
            for (const auto& [key, value] : info.items()) {
                if (!value.is_string()) throw InputError(source + ": metadata value '" + key + "' is not a string");
                view.metadata_[key] = value.get<std::string>();
            }
            continue;
        }
        const std::string where = source + ": tensor '" + name + "'";
        if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets"))
            throw InputError(where + " needs dtype, shape and data_offsets");
        if (!info["dtype"].is_string()) throw InputError(where + " has a non-string dtype");
        TensorEntry entry;
        entry.dtype = dtype_from_name(info["dtype"].get<std::string>(), name, source);
        const nlohmann::json& shape = info["shape"];
        if (!shape.is_array()) throw InputError(where + " has a shape that is not a list");
        std::size_t elements = 1;
        for (const nlohmann::json& dim : shape) {
            if (!dim.is_number_unsigned()) throw InputError(where + " has a shape entry that is not a non-negative integer");
            const std::uint64_t d = dim.get<std::uint64_t>();
            if (d != 0 && elements > std::numeric_limits<std::size_t>::max() / d)
                throw InputError(where + " has a shape too large to address");
            elements *= std::size_t(d);
            entry.shape.push_back(std::size_t(d));
        }
        const nlohmann::json& offsets = info["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
            throw InputError(where + " has malformed data_offsets");
        const std::uint64_t begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
        if (begin > end)
            throw InputError(where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                             "]: its end comes before its start");
        if (end > view.data_size_)
            throw InputError(where + " lies outside the file (offsets " + std::to_string(begin) + ".." + std::to_string(end) +
                             ", data section " + std::to_string(view.data_size_) + " bytes): file truncated?");
        if (elements > std::numeric_limits<std::size_t>::max() / dtype_size(entry.dtype))
            throw InputError(where + " has a shape of more values than memory can address");
        if (end - begin != elements * dtype_size(entry.dtype))
            throw InputError(where + " has " + std::to_string(end - begin) + " bytes of data, but its shape and dtype need " +
                             std::to_string(elements * dtype_size(entry.dtype)));
        entry.begin = std::size_t(begin);
        entry.end = std::size_t(end);
        ranges.emplace_back(entry.begin, entry.end);
        view.tensors_[name] = std::move(entry);
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second) throw InputError(source + ": two tensors overlap in the data section");
    return view;
}

const TensorEntry* SafetensorsView::find(const std::string& name) const {
    const auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<float> SafetensorsView::read_floats(const std::string& name) const {
    const TensorEntry* entry = find(name);
    if (!entry) throw InputError(source_ + ": missing tensor '" + name + "'");
    return decode_values(data_ + entry->begin, entry->dtype, entry->elements());
}

std::vector<double> SafetensorsView::read_doubles(const std::string& name) const {
    const TensorEntry* entry = find(name);
    if (!entry) throw InputError(source_ + ": missing tensor '" + name + "'");
    return decode_doubles(data_ + entry->begin, entry->dtype, entry->elements());
}

std::size_t TensorSpec::elements() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

std::vector<std::uint8_t> safetensors_header(const std::vector<TensorSpec>& tensors, DType dtype,
                                             const std::map<std::string, std::string>& metadata) {
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::size_t offset = 0;
    for (const TensorSpec& t : tensors) {
        const std::size_t bytes = t.elements() * dtype_size(dtype);
        header[t.name] = {{"dtype", dtype_name(dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned

    std::vector<std::uint8_t> out(8 + text.size());
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
    std::memcpy(out.data() + 8, text.data(), text.size());
    return out;
}

void encode_values(const std::vector<float>& values, DType dtype, std::vector<std::uint8_t>& out) {
    const std::size_t width = dtype_size(dtype);
    const std::size_t start = out.size();
    out.resize(start + values.size() * width);
    std::uint8_t* p = out.data() + start;  // [values.size() * width] bytes, little-endian
    for (float value : values) {
        std::uint64_t bits = 0;
        if (dtype == DType::f32) {
            bits = float_bits(value);
        } else if (dtype == DType::f64) {
            const double wide = value;
            std::memcpy(&bits, &wide, 8);
        } else {
            bits = dtype == DType::f16 ? float_to_half(value) : float_to_bfloat16(value);
        }
        for (std::size_t b = 0; b < width; ++b) *p++ = std::uint8_t(bits >> (8 * b));
    }
}

namespace {

// `n` values stored in `dtype`, as Out: exact, except F64 rounded when Out is float.
template <typename Out>
std::vector<Out> decode_as(const std::uint8_t* p, DType dtype, std::size_t n) {
    std::vector<Out> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        switch (dtype) {
            case DType::f32: {
                std::uint32_t bits = 0;
                for (int b = 3; b >= 0; --b) bits = (bits << 8) | p[4 * i + b];
                out[i] = Out(bits_float(bits));
                break;
            }
            case DType::f16: out[i] = Out(half_to_float(load_u16(p + 2 * i))); break;
            case DType::bf16: out[i] = Out(bfloat16_to_float(load_u16(p + 2 * i))); break;
            case DType::f64: {
                std::uint64_t bits = 0;
                for (int b = 7; b >= 0; --b) bits = (bits << 8) | p[8 * i + b];
                double value;
                std::memcpy(&value, &bits, 8);
                out[i] = Out(value);
                break;
            }
        }
    }
    return out;
}

}  // namespace

std::vector<double> decode_doubles(const std::uint8_t* p, DType dtype, std::size_t n) { return decode_as<double>(p, dtype, n); }

std::vector<float> decode_values(const std::uint8_t* p, DType dtype, std::size_t n) { return decode_as<float>(p, dtype, n); }

std::vector<std::uint8_t> write_safetensors(const std::vector<NamedTensor>& tensors, DType dtype,
                                            const std::map<std::string, std::string>& metadata) {
    std::vector<TensorSpec> specs;
    std::size_t data_bytes = 0;
    for (const NamedTensor& t : tensors) {
        specs.push_back({t.name, t.shape});
        data_bytes += t.values.size() * dtype_size(dtype);
    }
    std::vector<std::uint8_t> out = safetensors_header(specs, dtype, metadata);
    out.reserve(out.size() + data_bytes);
    for (const NamedTensor& t : tensors) encode_values(t.values, dtype, out);
    return out;
}

float bfloat16_to_float(std::uint16_t bits) { return bits_float(std::uint32_t(bits) << 16); }

std::uint16_t float_to_bfloat16(float value) {
    const std::uint32_t bits = float_bits(value);
    if (std::isnan(value)) return std::uint16_t((bits >> 16) | 0x40);  // keep it a quiet NaN
    const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);        // round half to even
    return std::uint16_t((bits + rounding) >> 16);
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1F;
    const std::uint32_t mantissa = h & 0x3FF;
    if (exponent == 0x1F) return bits_float(sign | 0x7F800000 | (mantissa << 13));  // inf / NaN
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = std::ldexp(float(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_half(float value) {
    const std::uint32_t bits = float_bits(value);
    const std::uint16_t sign = std::uint16_t((bits >> 16) & 0x8000);
    if (std::isnan(value)) return sign | 0x7E00;
    const float magnitude = std::fabs(value);
    if (magnitude >= 65520.0f) return sign | 0x7C00;  // rounds to infinity
    if (magnitude < 0x1.0p-14f) {                       // subnormal half: a multiple of 2^-24
        const float scaled = magnitude * 0x1.0p24f;      // exact
        return sign | std::uint16_t(std::nearbyint(scaled));  // round half to even (default mode)
    }
    const std::uint32_t abs_bits = bits & 0x7FFFFFFF;
    const std::uint32_t rounding = 0xFFF + ((abs_bits >> 13) & 1);
    const std::uint32_t rounded = abs_bits + rounding;   // may carry into the exponent: still correct
    return sign | std::uint16_t(((rounded >> 13) - (112u << 10)));
}

}  // namespace anatomy
