// collage: partition an ONNX model across inference backends by measuring.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "collage/ir/error.h"
#include "collage/session/worker_location.h"
#include "commands.h"

int main(int argc, char** argv) {
  // Candidates are measured by this executable, whatever its file's name.
  collage::serve_measurements_here();
  CLI::App app{"collage: find the fastest partitioning of an ONNX model across backends"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "collage 0.1.0");
  // A usage error is one line, like every other bad input.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("collage: error: ") + e.what() + " (see --help)\n";
  });
  collage::cli::add_info_command(app);
  collage::cli::add_run_command(app);
  collage::cli::add_backends_command(app);
  collage::cli::add_tune_command(app);
  collage::cli::add_compare_command(app);
  collage::cli::add_show_command(app);
  collage::cli::add_worker_command(app);
  collage::cli::add_cache_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // Usage errors are bad input: exit code 2, as for a bad model.
    return code == 0 ? 0 : 2;
  } catch (const collage::Error& e) {
    std::fprintf(stderr, "collage: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "collage: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collage: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
