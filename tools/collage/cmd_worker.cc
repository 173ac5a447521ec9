// `collage worker MODEL`: the measuring side of `collage tune`.
//
// Reads one measurement request per line on stdin, answers one line on
// stdout (see cost/measurer.h). Runs in its own process so that a backend
// that crashes or hangs on a candidate takes only this process down; the
// tuner restarts it. Not meant to be run by hand, hence hidden from --help.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli_flags.h"
#include "collage/backends/registry.h"
#include "collage/cost/measurement_server.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct WorkerArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string graph_opt = "all";
  int threads = 1;
};

void run_worker(const WorkerArgs& args) {
  // A worker outlives its tuner only by mistake: die with it, even when a
  // backend hangs and the next request is never read.
  pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return;
  std::FILE* replies = take_stdout_for_replies();
  Graph graph = load_model(args.model, parse_input_shapes(args.input_shapes),
                           graph_opt_level(args.graph_opt));
  MeasureOptions options;
  options.threads = checked_threads(args.threads);
  const BackendRegistry& registry = BackendRegistry::global();
  InProcessMeasurer measurer(registry.native(), options);
  serve_measurements(
      graph, measurer, [&](const std::string& name) { return registry.find(name); }, std::cin,
      replies);
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("worker", "Measure candidates for `collage tune` (internal)");
  cmd->group("");
  cmd->add_option("model", args->model, "ONNX model")->required();
  add_input_shape_flag(*cmd, args->input_shapes);
  cmd->add_option("--threads", args->threads, "threads per kernel");
  add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->callback([args] { run_worker(*args); });
}

}  // namespace collage::cli
