// `collage show PLAN.json`: a plan as text, Graphviz DOT or SVG.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_report.h"
#include "commands.h"
#include "model_loading.h"

namespace collage::cli {
namespace {

struct ShowArgs {
  std::string plan;
  std::string format = "text";
  std::string output;
};

void write_text(const std::string& text, const std::string& path) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_file_atomically(path, text);
}

// The plan's model, when it can still be loaded (for node-level drawings).
std::unique_ptr<Graph> try_load_model(const Plan& plan) {
  if (plan.model_path.empty() || !std::filesystem::exists(plan.model_path)) return nullptr;
  try {
    return std::make_unique<Graph>(load_model(plan.model_path, plan.input_shapes));
  } catch (const Error& e) {
    std::fprintf(stderr, "collage: note: drawing partitions only: %s\n", e.what());
    return nullptr;
  }
}

void run_show(const ShowArgs& args) {
  Plan plan = load_plan(args.plan);
  if (args.format == "text") return write_text(plan_to_text(plan), args.output);
  if (args.format != "dot" && args.format != "svg") {
    throw Error("expected text, dot or svg", {.field = "--format"});
  }
  std::unique_ptr<Graph> model = try_load_model(plan);
  std::string dot = plan_to_dot(plan, model.get());
  if (args.format == "dot") return write_text(dot, args.output);

  std::string output = args.output.empty()
                           ? std::filesystem::path(args.plan).replace_extension(".svg").string()
                           : args.output;
  std::string dot_file = output + ".dot";
  write_text(dot, dot_file);
  std::string command = fmt::format("dot -Tsvg '{}' -o '{}' 2>&1", dot_file, output);
  int status = std::system(command.c_str());
  std::filesystem::remove(dot_file);
  if (status != 0) {
    throw Error("Graphviz 'dot' failed or is not installed (apt-get install graphviz)",
                {.file = output});
  }
  fmt::print("wrote {}\n", output);
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd = app.add_subcommand("show", "Show a plan: partitions, costs and alternatives");
  cmd->add_option("plan", args->plan, "plan file from `collage tune`")->required();
  cmd->add_option("--format", args->format, "text, dot or svg")->capture_default_str();
  cmd->add_option("-o,--output", args->output,
                  "output file (default: stdout; for svg: PLAN.svg)");
  cmd->callback([args] { run_show(*args); });
}

}  // namespace collage::cli
