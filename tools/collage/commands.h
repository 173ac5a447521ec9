// The subcommands of the `collage` tool. Each lives in its own cmd_*.cc and
// registers itself on the app; main() wires them together.
#pragma once

#include <CLI/CLI.hpp>

namespace collage::cli {

// Each adds one subcommand (with its own --help) to `app`.
void add_info_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_backends_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_worker_command(CLI::App& app);
void add_cache_command(CLI::App& app);

}  // namespace collage::cli
