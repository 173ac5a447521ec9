// `collage show PLAN.json`: a plan as text, Graphviz DOT or SVG.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_profile.h"
#include "collage/plan/plan_report.h"
#include "collage/session/model_loading.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct ShowArgs {
  std::string plan;
  std::string format = "text";
  std::string output;
  std::string profile;
};

void write_text(const std::string& text, const std::string& path) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_file_atomically(path, text);
}

// Runs `dot -Tsvg DOT_FILE` directly, without a shell: the path is an
// argument, never parsed as a command (a plan named "p';touch x;'.json" is
// just a file name). The SVG comes back on a pipe, so that it is written
// like every other output file (write_file_atomically). Returns nullopt when
// dot cannot start or fails.
std::optional<std::string> run_dot(const std::string& dot_file) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  std::vector<std::string> args = {"dot", "-Tsvg", dot_file};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  int spawned = ::posix_spawnp(&child, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string svg;
  char buffer[65536];
  ssize_t n = 0;
  while (spawned == 0 && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    svg.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return svg;
}

// The plan's model, when it can still be loaded (for node-level drawings).
std::unique_ptr<Graph> try_load_model(const Plan& plan) {
  if (plan.model_path.empty() || !std::filesystem::exists(plan.model_path)) return nullptr;
  try {
    return std::make_unique<Graph>(
        load_model(plan.model_path, plan.input_shapes, graph_opt_level(plan.graph_opt)));
  } catch (const Error& e) {
    std::fprintf(stderr, "collage: note: drawing partitions only: %s\n", e.what());
    return nullptr;
  }
}

void run_show(const ShowArgs& args) {
  Plan plan = load_plan(args.plan);
  if (!args.profile.empty()) {
    annotate_plan(plan, profile_plan(plan, read_chrome_trace(args.profile)));
  }
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
  std::optional<std::string> svg = run_dot(dot_file);
  std::filesystem::remove(dot_file);
  if (!svg) {
    throw Error("Graphviz 'dot' failed or is not installed (apt-get install graphviz)",
                {.file = output});
  }
  write_text(*svg, output);
  fmt::print("wrote {}\n", output);
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd = app.add_subcommand("show", "Show a plan: partitions, costs and alternatives");
  cmd->add_option("plan", args->plan, "plan file from `collage tune`")->required();
  cmd->add_option("--format", args->format, "text, dot or svg")->capture_default_str();
  cmd->add_option("-o,--output", args->output, "output file (default: stdout; for svg: PLAN.svg)");
  cmd->add_option("--profile", args->profile,
                  "trace from `collage run --plan PLAN --profile FILE`: show each partition's "
                  "in-context time next to its estimate");
  cmd->callback([args] { run_show(*args); });
}

}  // namespace collage::cli
