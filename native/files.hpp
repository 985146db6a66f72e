// File access for the native tool: the core never touches files itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anatomy::native {

// A read-only memory map of a whole file, released on destruction.
class MappedFile {
public:
    explicit MappedFile(const std::string& path);  // throws InputError if unreadable
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&& other) noexcept;

    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

std::string read_text_file(const std::string& path);  // throws InputError
void write_file(const std::string& path, const std::string& contents);  // throws InputError
void write_file(const std::string& path, const std::vector<std::uint8_t>& contents);
void make_directory(const std::string& path);  // creates parents; throws InputError

}  // namespace anatomy::native
