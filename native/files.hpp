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

    // Reads every page once (after asking the kernel to read ahead), so a later
    // pass over the weights runs at memory speed rather than waiting on the disk.
    void prefault() const;
    // Drops the pages wholly inside [begin, begin + size) from this process's memory
    // (they are re-read from the file if touched again). For bytes already copied.
    void release(const std::uint8_t* begin, std::size_t size) const;
    bool contains(const std::uint8_t* p) const { return p >= data_ && p < data_ + size_; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

std::string read_text_file(const std::string& path);  // throws InputError
void write_file(const std::string& path, const std::string& contents);  // throws InputError
void write_file(const std::string& path, const std::vector<std::uint8_t>& contents);
void make_directory(const std::string& path);  // creates parents; throws InputError

// A file of the project's source tree that the tool runs (the benchmarks' Python
// peers), by its path from the repository root: under $ANATOMY_SOURCE_DIR when set,
// else under the tree this binary was built from, else under the nearest folder
// above the binary that holds it (a build copied to another machine with the tree).
// Returns the first candidate when none exists, so the caller's error names it.
std::string project_file(const std::string& relative);

}  // namespace anatomy::native
