#include "learner_file.hpp"

#include <cstring>
#include <limits>
#include <optional>

#include "../checkpoint/safetensors.hpp"
#include "../tensor.hpp"

namespace anatomy {
namespace {

using Tensors = std::map<std::string, LearnerTensor>;

// Little-endian integers at an offset, checked against the end of the bytes.
struct Reader {
    const std::uint8_t* bytes;
    std::size_t size;
    const std::string& source;

    std::uint64_t uint(std::size_t at, int width) const {
        if (at > size || size - at < std::size_t(width)) throw InputError(source + ": truncated (a zip record runs past the end)");
        std::uint64_t value = 0;
        for (int i = width - 1; i >= 0; --i) value = (value << 8) | bytes[at + std::size_t(i)];
        return value;
    }
};

// The number of values a shape holds; nothing when it is more than memory can address.
std::optional<std::size_t> elements(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (const std::size_t d : shape) {
        if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) return std::nullopt;
        n *= d;
    }
    return n;
}

// The text after 'key': in a .npy header dict, up to the next ", '" or the closing
// brace: "'<f8'", "False", "(2, 3)".
std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
    const std::size_t at = header.find("'" + key + "':");
    if (at == std::string::npos) throw InputError(what + ": the .npy header has no '" + key + "'");
    std::size_t begin = at + key.size() + 3;
    while (begin < header.size() && header[begin] == ' ') ++begin;
    std::size_t end = header.find(", '", begin);
    if (end == std::string::npos) end = header.find('}', begin);
    if (end == std::string::npos) throw InputError(what + ": the .npy header is not a dict");
    return header.substr(begin, end - begin);
}

// One .npy member: its header, then shape-many float32 or float64 values.
LearnerTensor parse_npy(const std::uint8_t* p, std::size_t size, const std::string& what) {
    static const char magic[] = "\x93NUMPY";
    if (size < 10 || std::memcmp(p, magic, 6) != 0) throw InputError(what + " is not a .npy array");
    const int major = p[6];
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (major < 1 || major > 3) throw InputError(what + ": .npy version " + std::to_string(major) + " is not known");
    std::size_t header_length = 0;
    for (std::size_t i = length_bytes; i-- > 0;) header_length = (header_length << 8) | p[8 + i];
    const std::size_t data_at = 8 + length_bytes + header_length;
    if (data_at > size) throw InputError(what + ": the .npy header runs past the end");
    const std::string header(reinterpret_cast<const char*>(p + 8 + length_bytes), header_length);

    // The header is a Python dict literal: read the three keys NumPy always writes.
    const std::string descr = dict_value(header, "descr", what), fortran = dict_value(header, "fortran_order", what);
    const std::string shape = dict_value(header, "shape", what);
    if (descr.size() < 5 || descr.front() != '\'' || descr.back() != '\'') throw InputError(what + ": the .npy header's dtype is unreadable");
    const std::string dtype = descr.substr(1, descr.size() - 2);  // e.g. "<f4"
    if (dtype != "<f4" && dtype != "<f8" && dtype != "=f4" && dtype != "=f8")
        throw InputError(what + ": dtype '" + dtype + "' (float32 or float64 expected, little-endian)");
    if (fortran.rfind("True", 0) == 0) throw InputError(what + " is stored in Fortran order: save np.ascontiguousarray(x)");
    if (shape.empty() || shape.front() != '(' || shape.find(')') == std::string::npos)
        throw InputError(what + ": the .npy header's shape is unreadable");
    LearnerTensor tensor;
    tensor.float64 = dtype.back() == '8';
    std::size_t dim = 0;
    bool digits = false;
    for (const char ch : shape.substr(1, shape.find(')') - 1)) {
        if (ch >= '0' && ch <= '9') {
            if (dim > (std::numeric_limits<std::size_t>::max() - 9) / 10) throw InputError(what + ": the .npy header's shape is too large");
            dim = dim * 10 + std::size_t(ch - '0'), digits = true;
        } else if (ch == ',' && digits) {
            tensor.shape.push_back(dim), dim = 0, digits = false;
        } else if (ch != ' ' && ch != ',') {
            throw InputError(what + ": the .npy header's shape is unreadable");
        }
    }
    if (digits) tensor.shape.push_back(dim);

    const std::optional<std::size_t> count = elements(tensor.shape);
    const std::size_t scalar = tensor.float64 ? 8 : 4;
    if (!count || (size - data_at) / scalar < *count)
        throw InputError(what + ": shape " + shape_text(tensor.shape) + " needs " +
                         (count && *count <= std::numeric_limits<std::size_t>::max() / scalar ? std::to_string(*count * scalar) : "more") +
                         " bytes of data, the member has " + std::to_string(size - data_at));
    const std::size_t n = *count;
    tensor.values = decode_doubles(p + data_at, tensor.float64 ? DType::f64 : DType::f32, n);
    return tensor;
}

// np.savez's archive: the central directory at the end lists every member.
Tensors read_npz(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    const Reader r{bytes, size, source};
    // The end-of-central-directory record: 22 bytes and a comment of at most 64 KiB at the end.
    if (size < 22) throw InputError(source + ": truncated zip archive (" + std::to_string(size) + " bytes)");
    const std::size_t lowest = size - 22 > 65535 ? size - 22 - 65535 : 0;
    std::size_t end_record = size;
    for (std::size_t at = size - 22 + 1; at-- > lowest;)
        if (r.uint(at, 4) == 0x06054b50) {
            end_record = at;
            break;
        }
    if (end_record == size) throw InputError(source + ": not a complete zip archive (no end-of-directory record)");
    if (r.uint(end_record + 10, 2) == 0) throw InputError(source + " holds no arrays: an empty .npz (np.savez with nothing to save)");
    std::uint64_t count = r.uint(end_record + 10, 2), directory = r.uint(end_record + 16, 4);
    if (directory == 0xFFFFFFFF || count == 0xFFFF) {  // zip64: the counts are in the zip64 end record
        if (end_record < 20 || r.uint(end_record - 20, 4) != 0x07064b50) throw InputError(source + ": a zip64 archive without its locator");
        const std::uint64_t record = r.uint(end_record - 20 + 8, 8);
        count = r.uint(std::size_t(record) + 32, 8);
        directory = r.uint(std::size_t(record) + 48, 8);
    }

    Tensors tensors;
    std::size_t at = std::size_t(directory);
    for (std::uint64_t i = 0; i < count; ++i) {
        if (r.uint(at, 4) != 0x02014b50) throw InputError(source + ": a damaged zip directory");
        const std::uint64_t method = r.uint(at + 10, 2);
        std::uint64_t compressed = r.uint(at + 20, 4), stored = r.uint(at + 24, 4), local = r.uint(at + 42, 4);
        const std::size_t name_length = r.uint(at + 28, 2), extra_length = r.uint(at + 30, 2), comment_length = r.uint(at + 32, 2);
        if (at + 46 + name_length > size) throw InputError(source + ": truncated zip directory");
        const std::string name(reinterpret_cast<const char*>(bytes + at + 46), name_length);
        // zip64 sizes: an extra field 0x0001 holds, in order, those that read 0xFFFFFFFF.
        for (std::size_t e = at + 46 + name_length; e + 4 <= at + 46 + name_length + extra_length;) {
            const std::uint64_t id = r.uint(e, 2), length = r.uint(e + 2, 2);
            std::size_t field = e + 4;
            if (id == 0x0001) {
                if (stored == 0xFFFFFFFF) stored = r.uint(field, 8), field += 8;
                if (compressed == 0xFFFFFFFF) compressed = r.uint(field, 8), field += 8;
                if (local == 0xFFFFFFFF) local = r.uint(field, 8);
            }
            e += 4 + std::size_t(length);
        }
        at += 46 + name_length + extra_length + comment_length;

        const std::string what = source + ": " + name;
        if (method != 0) throw InputError(what + " is compressed (np.savez_compressed): save with np.savez or as safetensors");
        if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) throw InputError(what + " is not a .npy member");
        if (r.uint(std::size_t(local), 4) != 0x04034b50) throw InputError(what + ": its local zip header is missing");
        const std::size_t data = std::size_t(local) + 30 + r.uint(std::size_t(local) + 26, 2) + r.uint(std::size_t(local) + 28, 2);
        if (data > size || size - data < stored) throw InputError(what + " runs past the end of the file");
        const std::string tensor_name = name.substr(0, name.size() - 4);
        if (!tensors.emplace(tensor_name, parse_npy(bytes + data, std::size_t(stored), what)).second)
            throw InputError(source + ": '" + tensor_name + "' is given twice");
    }
    return tensors;
}

Tensors read_safetensors(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    const SafetensorsView file = SafetensorsView::parse(bytes, size, source);
    Tensors tensors;
    for (const auto& [name, entry] : file.tensors()) {
        if (entry.dtype != DType::f32 && entry.dtype != DType::f64)
            throw InputError(source + ": '" + name + "' is " + dtype_name(entry.dtype) + " (F32 or F64 expected)");
        tensors[name] = LearnerTensor{entry.shape, file.read_doubles(name), entry.dtype == DType::f64};
    }
    return tensors;
}

}  // namespace

std::map<std::string, LearnerTensor> read_learner_tensors(const std::uint8_t* bytes, std::size_t size,
                                                          const std::string& source) {
    if (size == 0) throw InputError(source + " is empty (0 bytes)");
    // A zip archive starts with a member's local header (PK 3 4), or, empty, with its end record (PK 5 6).
    if (size >= 4 && bytes[0] == 'P' && bytes[1] == 'K' && ((bytes[2] == 3 && bytes[3] == 4) || (bytes[2] == 5 && bytes[3] == 6)))
        return read_npz(bytes, size, source);
    if (size >= 9 && bytes[8] == '{') return read_safetensors(bytes, size, source);
    throw InputError(source + ": neither a NumPy .npz archive nor a safetensors file");
}

}  // namespace anatomy
