// File access for the native tool: the core never touches files itself.
//
// Reading: only regular files, and at most a stated size, so that a FIFO, /dev/zero
// or /dev/urandom given as an input is refused at once rather than read forever.
// Writing: every output goes beside its target (TARGET.partial-PID) and is renamed
// into place only when complete; a failure, an exception or an interrupt
// (interrupt.hpp) removes the partial output and leaves the target as it was.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "interrupt.hpp"

namespace anatomy::native {

// A read-only memory map of a whole file, released on destruction.
class MappedFile {
public:
    explicit MappedFile(const std::string& path);  // throws InputError if unreadable or not a regular file
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

// What the readers below take at most unless told otherwise: a training text, a
// config, a tokenizer.json (Llama's is 1.8 MB) or an exercise's outputs.
inline constexpr std::size_t default_read_limit = std::size_t(256) << 20;

// The whole of the regular file at `path`; throws InputError for a folder, a FIFO, a
// device, a file larger than `limit` bytes or one that cannot be read, naming it.
std::string read_text_file(const std::string& path, std::size_t limit = default_read_limit);
// Standard input to its end, at most `limit` bytes.
std::string read_standard_input(std::size_t limit = default_read_limit);
// read_text_file, then parse_json (core/json_input.hpp): every way to fail is an InputError.
nlohmann::json read_json_file(const std::string& path, std::size_t limit = default_read_limit);

// A file written beside `target` and renamed over it by commit(). The constructor
// checks the target (a name is given, it is not a folder, its folder exists) and
// creates the partial file, so a bad path fails before any work; until commit() the
// target is untouched. A target that exists and is not a regular file (/dev/stdout,
// a FIFO) is written directly: there is nothing to leave half-written.
class OutputFile {
public:
    explicit OutputFile(std::string target);
    ~OutputFile();  // not committed: the partial file is removed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    std::ostream& stream() { return out_; }
    // Flushes, checks that every byte was written, renames into place; throws InputError.
    void commit();

private:
    std::string target_, partial_;
    bool direct_ = false, committed_ = false;
    std::unique_ptr<PartialPath> registered_;
    std::ofstream out_;
};

// `contents` to `path` through an OutputFile.
void write_file(const std::string& path, const std::string& contents);
void write_file(const std::string& path, const std::vector<std::uint8_t>& contents);

// A folder of files written beside `target` and renamed into place by commit(), when
// the target does not exist yet (or is an empty folder); the folder is created at
// once, so a bad path fails before any work. Into a folder that already holds files
// (allowed unless `new_only`), each file is replaced whole, one at a time. A target
// written with a trailing slash ("out/") names the same folder as without it.
class OutputFolder {
public:
    OutputFolder(std::string target, bool new_only);
    ~OutputFolder();  // not committed: the partial folder and what it holds are removed
    OutputFolder(const OutputFolder&) = delete;
    OutputFolder& operator=(const OutputFolder&) = delete;

    // Where to write the file `name` (through an OutputFile, or write_file).
    std::string file(const std::string& name);
    // Renames the partial folder into place; throws InputError.
    void commit();
    // The folder's path, without a trailing slash.
    const std::string& path() const { return target_; }

private:
    std::string target_, staging_;  // staging_ == target_ when writing into an existing folder
    bool committed_ = false;
    std::unique_ptr<PartialPath> registered_;          // the partial folder
    std::vector<std::unique_ptr<PartialPath>> files_;  // its files, removed before it
};

// A file of the project's source tree that the tool runs (the benchmarks' Python
// peers), by its path from the repository root: under $ANATOMY_SOURCE_DIR when set,
// else under the tree this binary was built from, else under the nearest folder
// above the binary that holds it (a build copied to another machine with the tree).
// Returns the first candidate when none exists, so the caller's error names it.
std::string project_file(const std::string& relative);

}  // namespace anatomy::native
