// `collage show PLAN.json`: a plan as text, Graphviz DOT or SVG, or one
// self-contained HTML page (plan/plan_html.h).
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

#include "cli_flags.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_html.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_profile.h"
#include "collage/plan/plan_report.h"
#include "collage/session/model_loading.h"
#include "collage/session/shape_plans.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct ShowArgs {
  std::string plan;
  std::string format = "text";
  std::string output;
  std::string profile;
  std::string compare;
  std::vector<std::string> backend_plugins;
  std::vector<std::string> input_shapes;
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

// Graphviz's SVG of `dot`, made beside `output`; Error when dot fails.
std::string svg_of(const std::string& dot, const std::string& output) {
  std::string dot_file = output + ".dot";
  write_text(dot, dot_file);
  std::optional<std::string> svg = run_dot(dot_file);
  std::filesystem::remove(dot_file);
  if (!svg) {
    throw Error("Graphviz 'dot' failed or is not installed (apt-get install graphviz)",
                {.file = output});
  }
  return *svg;
}

// The plan to show: the file's only plan, or of a plan set the one for the
// --input-shape values (the first when none are given, with a note).
Plan chosen_plan(const ShowArgs& args) {
  std::vector<Plan> plans = load_plans(args.plan);
  const std::map<std::string, Shape> shapes = parse_input_shapes(args.input_shapes);
  if (plans.size() == 1 && shapes.empty()) return std::move(plans.front());
  std::optional<std::size_t> index = plan_for_shapes(plans, shapes);
  if (!index) {
    throw Error(escape_control(fmt::format("the file has no plan for {} (its plans: {})",
                                           shapes_text(shapes), plan_shapes_text(plans))),
                {.field = "--input-shape"});
  }
  if (shapes.empty()) {
    std::fprintf(stderr,
                 "collage: note: %s holds %zu plans, one per input shape; showing the one for "
                 "%s (--input-shape chooses another)\n",
                 args.plan.c_str(), plans.size(),
                 escape_control(shapes_text(plans[*index].input_shapes)).c_str());
  }
  return std::move(plans[*index]);
}

void run_show(const ShowArgs& args) {
  load_backend_plugins(args.backend_plugins);
  if (args.format != "text" && args.format != "dot" && args.format != "svg" &&
      args.format != "html") {
    throw Error("expected text, dot, svg or html", {.field = "--format"});
  }
  if (!args.compare.empty() && args.format != "html") {
    throw Error("only the html report draws compare's strategies (--format html)",
                {.field = "--compare"});
  }
  Plan plan = chosen_plan(args);
  std::vector<TraceSpan> spans;
  std::optional<PlanProfile> profile;
  if (!args.profile.empty()) {
    spans = read_chrome_trace(args.profile);
    profile = profile_plan(plan, spans);
    annotate_plan(plan, *profile);
  }
  if (args.format == "text") {
    // The model is loaded only to list what bodies hold.
    std::unique_ptr<Graph> model = plan_has_bodies(plan) ? try_load_model(plan) : nullptr;
    return write_text(plan_to_text(plan, model.get()), args.output);
  }
  std::unique_ptr<Graph> model = try_load_model(plan);
  std::string dot = plan_to_dot(plan, model.get());
  if (args.format == "dot") return write_text(dot, args.output);

  const std::string extension = args.format == "svg" ? ".svg" : ".html";
  std::string output = args.output.empty()
                           ? std::filesystem::path(args.plan).replace_extension(extension).string()
                           : args.output;
  if (args.format == "svg") {
    write_text(svg_of(dot, output), output);
  } else {
    HtmlReport report{plan, "", profile, spans,
                      args.compare.empty() ? plan.verification : read_compare_json(args.compare)};
    check_writable(output);
    report.graph_svg = svg_of(dot, output);
    write_text(plan_to_html(report), output);
  }
  fmt::print("wrote {}\n", output);
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd = app.add_subcommand("show", "Show a plan: partitions, costs and alternatives");
  cmd->add_option("plan", args->plan, "plan file from `collage tune`")->required();
  cmd->add_option("--format", args->format,
                  "text, dot, svg, or html (one self-contained page: the graph coloured by "
                  "backend, each partition's details on selecting it, the strategies measured, "
                  "the profile's timeline)")
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output,
                  "output file (default: stdout; for svg: PLAN.svg; for html: PLAN.html)");
  cmd->add_option("--compare", args->compare,
                  "compare's results (`collage compare --json FILE`) for the html report's chart "
                  "(default: the strategies tune measured beside the plan)");
  cmd->add_option("--profile", args->profile,
                  "trace from `collage run --plan PLAN --profile FILE`: show each partition's "
                  "in-context time next to its estimate");
  cmd->add_option("--input-shape", args->input_shapes,
                  "of a plan file with plans for several shapes, show the one for NAME=D0,D1,... "
                  "(repeatable; default: the first)")
      ->allow_extra_args(false);
  add_backend_plugin_flag(*cmd, args->backend_plugins);
  cmd->callback([args] { run_show(*args); });
}

}  // namespace collage::cli
