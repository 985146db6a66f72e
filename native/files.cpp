#include "files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_input.hpp"
#include "number_text.hpp"
#include "tensor.hpp"

#ifndef ANATOMY_SOURCE_DIR
#define ANATOMY_SOURCE_DIR "."
#endif

namespace anatomy::native {
namespace {

InputError file_error(const std::string& what, const std::string& path) {
    return InputError("cannot " + what + " '" + path + "': " + std::strerror(errno));
}

// Only regular files are read: a FIFO, /dev/zero or /dev/urandom would be read forever.
InputError not_a_file(const std::string& path, const struct stat& info) {
    return InputError("'" + path + "' is " + (S_ISDIR(info.st_mode) ? "a folder" : "not a regular file (a device, a FIFO or a socket)") +
                      ": give a file");
}

}  // namespace

MappedFile::MappedFile(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw file_error("open", path);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        ::close(fd);
        throw file_error("stat", path);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw not_a_file(path, info);
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

namespace {

// Reads `in` to its end, at most `limit` bytes.
std::string read_bounded(std::istream& in, std::size_t limit, const std::string& what) {
    std::string contents;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        contents.append(buffer, std::size_t(in.gcount()));
        if (contents.size() > limit)
            throw InputError(what + " is larger than the " + byte_size_text(limit) + " this command reads");
    }
    return contents;
}

}  // namespace

std::string read_text_file(const std::string& path, std::size_t limit) {
    // stat, not open: opening a FIFO for reading waits for a writer.
    struct stat info {};
    if (path.empty()) throw InputError("a file name is empty");
    if (::stat(path.c_str(), &info) != 0) throw file_error("read", path);
    if (!S_ISREG(info.st_mode)) throw not_a_file(path, info);
    if (std::uint64_t(info.st_size) > limit)
        throw InputError("'" + path + "' (" + byte_size_text(std::uint64_t(info.st_size)) + ") is larger than the " + byte_size_text(limit) +
                         " this command reads");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw file_error("read", path);
    std::string contents = read_bounded(in, limit, "'" + path + "'");
    if (in.bad()) throw file_error("read", path);
    return contents;
}

std::string read_standard_input(std::size_t limit) { return read_bounded(std::cin, limit, "standard input"); }

nlohmann::json read_json_file(const std::string& path, std::size_t limit) {
    return parse_json(read_text_file(path, limit), path);
}

// ---------------------------------------------------------------- writing

namespace {

// The partial name beside `target`: TARGET.partial-PID.
std::string partial_beside(const std::string& target) { return target + ".partial-" + std::to_string(::getpid()); }

// The folder that will hold `target` must exist and be a folder.
void require_parent_folder(const std::string& target) {
    const std::filesystem::path parent = std::filesystem::path(target).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    struct stat info {};
    if (::stat(folder.c_str(), &info) != 0) {
        if (errno == ENOTDIR) throw InputError("cannot write '" + target + "': a part of '" + folder + "' is a file, not a folder");
        throw InputError("cannot write '" + target + "': its folder '" + folder + "' does not exist");
    }
    if (!S_ISDIR(info.st_mode)) throw InputError("cannot write '" + target + "': '" + folder + "' is a file, not a folder");
}

}  // namespace

OutputFile::OutputFile(std::string target) : target_(std::move(target)) {
    if (target_.empty()) throw InputError("an output file name is empty");
    struct stat info {};
    const bool exists = ::stat(target_.c_str(), &info) == 0;
    if (exists && S_ISDIR(info.st_mode)) throw InputError("cannot write '" + target_ + "': it is a folder; give a file name");
    direct_ = exists && !S_ISREG(info.st_mode);
    if (!exists && errno == ENOTDIR) throw InputError("cannot write '" + target_ + "': a part of its path is a file, not a folder");
    if (!direct_) require_parent_folder(target_);
    partial_ = direct_ ? target_ : partial_beside(target_);
    if (!direct_) registered_ = std::make_unique<PartialPath>(partial_, PartialPath::Kind::file);  // before the file exists
    out_.open(partial_, std::ios::binary | std::ios::trunc);
    if (!out_) throw file_error("write", target_);
}

OutputFile::~OutputFile() {
    if (committed_ || direct_) return;
    out_.close();
    ::unlink(partial_.c_str());
}

void OutputFile::commit() {
    out_.flush();
    if (!out_) throw InputError("cannot write '" + target_ + "': not every byte was written (is the disk full?)");
    out_.close();
    if (!out_) throw file_error("write", target_);
    if (!direct_ && std::rename(partial_.c_str(), target_.c_str()) != 0) throw file_error("rename into place", target_);
    committed_ = true;
    registered_.reset();
}

void write_file(const std::string& path, const std::string& contents) {
    OutputFile out(path);
    out.stream() << contents;
    out.commit();
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& contents) {
    write_file(path, std::string(contents.begin(), contents.end()));
}

namespace {

// "out/" and "out//" name the folder "out": its partial folder then goes beside it,
// not inside it. The root, "/", stays as it is.
std::string without_trailing_slashes(std::string folder) {
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    return folder;
}

}  // namespace

OutputFolder::OutputFolder(std::string target, bool new_only) : target_(without_trailing_slashes(std::move(target))) {
    namespace fs = std::filesystem;
    if (target_.empty()) throw InputError("an output folder name is empty");
    std::error_code error;
    const fs::file_status status = fs::status(target_, error);
    if (error && error != std::errc::no_such_file_or_directory) {
        if (error == std::errc::not_a_directory) throw InputError("cannot write '" + target_ + "': a part of its path is a file, not a folder");
        throw InputError("cannot write '" + target_ + "': " + error.message());
    }
    const bool exists = fs::exists(status);
    if (exists && !fs::is_directory(status)) throw InputError("'" + target_ + "' is a file, not a folder; give a folder");
    const bool empty = exists && fs::is_empty(target_, error);
    if (exists && !empty) {
        if (new_only) throw InputError("'" + target_ + "' already exists and is not empty; give a new folder (or remove it)");
        staging_ = target_;  // files replaced one at a time, each whole
        if (::access(target_.c_str(), W_OK) != 0) throw file_error("write into", target_);
        return;
    }
    // A new folder: its parents are created, the folder itself is written beside its name.
    const fs::path parent = fs::path(target_).parent_path();
    if (!parent.empty()) {
        fs::create_directories(parent, error);
        if (error) throw InputError("cannot create the folder '" + parent.string() + "' for '" + target_ + "': " + error.message());
    }
    staging_ = partial_beside(target_);
    registered_ = std::make_unique<PartialPath>(staging_, PartialPath::Kind::folder);
    fs::remove_all(staging_, error);  // a partial folder left by an earlier process with this id
    if (::mkdir(staging_.c_str(), 0777) != 0) throw file_error("create the folder", target_);
}

OutputFolder::~OutputFolder() {
    if (committed_ || staging_ == target_) return;
    std::error_code ignored;
    std::filesystem::remove_all(staging_, ignored);
}

std::string OutputFolder::file(const std::string& name) {
    const std::string path = (std::filesystem::path(staging_) / name).string();
    if (staging_ != target_) files_.push_back(std::make_unique<PartialPath>(path, PartialPath::Kind::file));
    return path;
}

void OutputFolder::commit() {
    if (staging_ != target_) {
        std::error_code ignored;
        std::filesystem::remove(target_, ignored);  // an empty folder there, checked by the constructor
        if (std::rename(staging_.c_str(), target_.c_str()) != 0) throw file_error("rename into place", target_);
    }
    committed_ = true;
    files_.clear();
    registered_.reset();
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
