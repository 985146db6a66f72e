// attn: the command-line face of the Attention Anatomy core.
// Exit codes: 0 success, 1 a check failed, 2 bad input (one line on stderr).
#include <filesystem>
#include <iostream>
#include <new>
#include <map>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>

#include "commands/commands.hpp"
#include "interrupt.hpp"
#include "warning.hpp"
#include "tensor.hpp"

namespace {

// glibc gives every allocation over 128 KiB its own mapping and unmaps it when it is
// freed, so each pass's large tensors (the [B, Hq, T, S] scores of a 256-token pass
// are 2 MiB a layer) page-fault in anew on every pass. Keeping such blocks in the
// heap spares those faults, which take the larger part of a short pass's time.
// Blocks of 256 MiB and more (a 32,000 x 2,048 bfloat16 copy is 131 MiB) still map.
void keep_freed_blocks() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
    using namespace anatomy::native;
    keep_freed_blocks();
    install_interrupt_handlers();
    CLI::App app{"attn: verify, trace, train and export the Attention Anatomy decoder", "attn"};
    app.set_version_flag("--version", std::string("attn ") + ANATOMY_VERSION);
    app.require_subcommand(1);

    const std::map<std::string, CommandRunner> commands{
        {"verify", add_verify_command(app)},
        {"export-checkpoint", add_export_checkpoint_command(app)},
        {"devices", add_devices_command(app)},
        {"tokenize", add_tokenize_command(app)},
        {"probe", add_probe_command(app)},
        {"bench", add_bench_command(app)},
        {"diff", add_diff_command(app)},
        {"judge", add_judge_command(app)},
        {"stream", add_stream_command(app)},
#if defined(ANATOMY_ATTN_TRAIN)
        {"train", add_train_command(app)},  // needs OpenSSL (native/CMakeLists.txt)
#endif
    };

    // A first word that is no command fails here, before CLI11 would answer --help for it.
    if (argc > 1 && argv[1][0] != '-' && !commands.count(argv[1])) {
        std::cerr << "attn: unknown command '" << one_line(argv[1]) << "' (the commands: ";
        for (auto it = commands.begin(); it != commands.end(); ++it) std::cerr << (it == commands.begin() ? "" : ", ") << it->first;
        std::cerr << "; see attn --help)\n";
        return 2;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        const std::vector<std::string> rest = app.remaining();
        if (app.get_subcommands().empty() && !rest.empty() && rest.front().rfind("-", 0) != 0)
            std::cerr << "attn: unknown command '" << one_line(rest.front()) << "' (see attn --help)\n";
        else
            std::cerr << "attn: " << one_line(e.what()) << " (see attn --help)\n";
        return 2;
    }
    try {
        return commands.at(app.get_subcommands().front()->get_name())();
    } catch (const anatomy::InputError& e) {
        std::cerr << "attn: " << one_line(e.what()) << "\n";
        return 2;
    } catch (const std::filesystem::filesystem_error& e) {  // a path the user gave that cannot be reached
        std::cerr << "attn: cannot use '" << one_line(e.path1().string()) << "': " << e.code().message() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "attn: out of memory: the machine cannot hold what this command needs (try smaller sizes)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "attn: internal error: " << one_line(e.what()) << "\n";
        return 3;
    }
}
