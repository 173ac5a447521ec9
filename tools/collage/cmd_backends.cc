#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_flags.h"
#include "collage/backends/registry.h"
#include "commands.h"

namespace collage::cli {

void add_backends_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("backends", "List the backends of this build and what they run");
  auto plugins = std::make_shared<std::vector<std::string>>();
  add_backend_plugin_flag(*cmd, *plugins);
  cmd->callback([plugins] {
    load_backend_plugins(*plugins);
    for (const Backend* backend : BackendRegistry::global().all()) {
      const std::string code = backend->code_version();
      fmt::print("{:<10} {:<9} {}{}\n", backend->name(), style_name(backend->style()),
                 backend->version(), code.empty() ? "" : " (code " + code + ")");
      std::vector<std::string> layouts;
      for (EdgeLayout layout : backend->edge_layouts()) layouts.push_back(edge_layout_name(layout));
      fmt::print("  {}\n  edge layouts (preferred first): {}\n\n", backend->describe_support(),
                 fmt::join(layouts, ", "));
    }
  });
}

}  // namespace collage::cli
