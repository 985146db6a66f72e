// The subcommands of `attn`. Each registers its options on the CLI11 app and
// returns the function that runs it; a run returns the process exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace anatomy::native {

using CommandRunner = std::function<int()>;

CommandRunner add_verify_command(CLI::App& app);
CommandRunner add_export_checkpoint_command(CLI::App& app);
CommandRunner add_devices_command(CLI::App& app);
CommandRunner add_tokenize_command(CLI::App& app);
CommandRunner add_probe_command(CLI::App& app);
CommandRunner add_bench_command(CLI::App& app);
CommandRunner add_train_command(CLI::App& app);
CommandRunner add_diff_command(CLI::App& app);
CommandRunner add_judge_command(CLI::App& app);
CommandRunner add_stream_command(CLI::App& app);

}  // namespace anatomy::native
