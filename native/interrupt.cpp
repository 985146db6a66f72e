#include "interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstring>

#include <unistd.h>

#include "tensor.hpp"

namespace anatomy::native {
namespace {

// The registry the handler reads. A slot is claimed (0 -> 1), filled, then published
// (1 -> 2); the handler reads only published slots, and only async-signal-safe calls
// (unlink, rmdir, write, _exit) run in it.
struct Slot {
    std::atomic<int> state{0};  // 0 free, 1 being filled, 2 registered
    bool folder = false;
    char path[4096] = {};
};
Slot slots[64];
bool stderr_is_terminal = false;

void write_text(const char* text) {
    for (std::size_t left = std::strlen(text); left > 0;) {
        const ssize_t n = ::write(STDERR_FILENO, text, left);
        if (n <= 0) return;
        text += n, left -= std::size_t(n);
    }
}

void on_signal(int signal) {
    for (bool folders : {false, true})
        for (Slot& slot : slots)
            if (slot.state.load() == 2 && slot.folder == folders) folders ? ::rmdir(slot.path) : ::unlink(slot.path);
    // A progress line may be open on a terminal: end it before the message.
    if (stderr_is_terminal) write_text("\n");
    write_text(signal == SIGINT ? "attn: interrupted (SIGINT); no file was left half-written\n"
               : signal == SIGTERM ? "attn: terminated (SIGTERM); no file was left half-written\n"
                                   : "attn: hung up (SIGHUP); no file was left half-written\n");
    ::_exit(128 + signal);
}

}  // namespace

void install_interrupt_handlers() {
    stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, signal);  // one handler at a time
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
}

PartialPath::PartialPath(const std::string& path, Kind kind) {
    if (path.size() >= sizeof(Slot::path)) throw InputError("the path '" + path.substr(0, 80) + "...' is too long");
    for (int i = 0; i < int(std::size(slots)); ++i) {
        int free = 0;
        if (!slots[i].state.compare_exchange_strong(free, 1)) continue;
        std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
        slots[i].folder = kind == Kind::folder;
        slots[i].state.store(2);
        slot_ = i;
        return;
    }
    throw std::logic_error("PartialPath: more than 64 partial paths at once");
}

PartialPath::~PartialPath() { release(); }

void PartialPath::release() {
    if (slot_ >= 0) slots[slot_].state.store(0);
    slot_ = -1;
}

}  // namespace anatomy::native
