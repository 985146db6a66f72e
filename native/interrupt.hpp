// Ctrl+C (SIGINT), SIGTERM and SIGHUP end attn at once, however long the work in
// hand (a training step, a pass over a 1.1B model), with the status a shell gives a
// process killed by that signal: 128 + its number (130, 143, 129). Before it exits,
// the handler removes every partial file and folder registered here: what attn
// writes goes beside its target and is renamed into place only when complete
// (files.hpp's OutputFile and OutputFolder), so an interrupted command leaves each
// target as it was.
#pragma once

#include <string>

namespace anatomy::native {

// Called once, first thing in main.
void install_interrupt_handlers();

// A path the handler removes if attn is interrupted while it is registered: a file
// (unlinked), or a folder (removed after every registered file, so it must hold only
// registered files by then). Registered on construction, forgotten on destruction
// or release(). At most 64 at a time; paths up to 4,095 bytes.
class PartialPath {
public:
    enum class Kind { file, folder };
    PartialPath(const std::string& path, Kind kind);
    ~PartialPath();
    PartialPath(const PartialPath&) = delete;
    PartialPath& operator=(const PartialPath&) = delete;
    void release();  // the path is complete (renamed into place): no longer removed

private:
    int slot_ = -1;
};

}  // namespace anatomy::native
