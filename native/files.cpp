#include "files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensor.hpp"

#ifndef ANATOMY_SOURCE_DIR
#define ANATOMY_SOURCE_DIR "."
#endif

namespace anatomy::native {
namespace {

InputError file_error(const std::string& what, const std::string& path) {
    return InputError("cannot " + what + " '" + path + "': " + std::strerror(errno));
}

}  // namespace

MappedFile::MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw file_error("open", path);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        ::close(fd);
        throw file_error("stat", path);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw InputError("'" + path + "' is not a regular file");
    }
    size_ = std::size_t(info.st_size);
    if (size_ > 0) {
        void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapped == MAP_FAILED) {
            ::close(fd);
            throw file_error("map", path);
        }
        data_ = static_cast<const std::uint8_t*>(mapped);
    }
    ::close(fd);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

void MappedFile::prefault() const {
    if (!data_) return;
    ::madvise(const_cast<std::uint8_t*>(data_), size_, MADV_WILLNEED);
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    volatile std::uint8_t sink = 0;
    for (std::size_t at = 0; at < size_; at += page) sink = sink ^ data_[at];
    (void)sink;
}

void MappedFile::release(const std::uint8_t* begin, std::size_t size) const {
    const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
    const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
    const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(begin) + size) / page * page;
    if (!contains(begin) || end <= first) return;
    ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw file_error("read", path);
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
}

void write_file(const std::string& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw file_error("write", path);
    out << contents;
    out.flush();
    if (!out) throw file_error("write", path);
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& contents) {
    write_file(path, std::string(contents.begin(), contents.end()));
}

void make_directory(const std::string& path) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error) throw InputError("cannot create directory '" + path + "': " + error.message());
}

std::string project_file(const std::string& relative) {
    namespace fs = std::filesystem;
    if (const char* root = std::getenv("ANATOMY_SOURCE_DIR"); root && *root) return (fs::path(root) / relative).string();
    const fs::path built_from = fs::path(ANATOMY_SOURCE_DIR) / relative;
    if (fs::exists(built_from)) return built_from.string();
    std::error_code error;
    for (fs::path folder = fs::read_symlink("/proc/self/exe", error).parent_path(); !error && !folder.empty();
         folder = folder.parent_path()) {
        if (fs::exists(folder / relative)) return (folder / relative).string();
        if (folder == folder.root_path()) break;
    }
    return built_from.string();
}

}  // namespace anatomy::native
