// `collage worker`: measures candidates, in three roles.
//
//   collage worker MODEL [...]          the measuring side of `collage tune`
//                                       (internal): one request per line on
//                                       stdin, one reply on stdout
//                                       (cost/measurer.h)
//   collage worker --partitions         the same for partitions handed over
//                                       as ONNX files (internal; measurement
//                                       jobs)
//   collage worker --cache postgresql://...
//                                       a fleet worker: measures the jobs
//                                       tuners post to the database, until
//                                       stopped (session/fleet.h,
//                                       docs/fleet.md)
//
// The first two run in their own process so that a backend that crashes or
// hangs on a candidate takes only that process down; their parent restarts
// them.
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>

#include "cli_flags.h"
#include "collage/backends/registry.h"
#include "collage/cost/measurement_server.h"
#include "collage/ir/error.h"
#include "collage/onnx/graph_bytes.h"
#include "collage/session/body_planning.h"
#include "collage/session/fleet.h"
#include "collage/session/measuring.h"
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
  bool partitions = false;
  std::string cache;
  std::string name;
  double lease = kDefaultLeaseSeconds;
  double idle_exit = 0;
  std::vector<std::string> backend_plugins;
  // INDEX:NODE steps to the control-flow body being planned (body_path).
  std::vector<std::string> body;
};

std::atomic<bool> stop_requested{false};

// A child measuring for its parent outlives it only by mistake: die with
// it, even when a backend hangs and the next request is never read.
bool die_with_parent() {
  pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return ::getppid() == parent;
}

void serve_model(const WorkerArgs& args) {
  if (!die_with_parent()) return;
  std::FILE* replies = take_stdout_for_replies();
  Graph model = load_model(args.model, parse_input_shapes(args.input_shapes),
                           graph_opt_level(args.graph_opt));
  std::vector<std::pair<std::string, std::size_t>> path;
  for (const std::string& step : args.body) {
    // INDEX (at most four digits), a colon, the node's name.
    const std::size_t colon = step.find(':');
    if (colon == std::string::npos || colon == 0 || colon > 4 ||
        step.find_first_not_of("0123456789") != colon) {
      throw Error("expected INDEX:NODE", {.field = "--body"});
    }
    path.emplace_back(step.substr(colon + 1), std::stoul(step.substr(0, colon)));
  }
  const Graph& graph = follow_body_path(model, path);
  MeasureOptions options;
  options.threads = checked_threads(args.threads);
  const BackendRegistry& registry = BackendRegistry::global();
  InProcessMeasurer measurer(registry.native(), options);
  serve_measurements(
      graph, measurer, [&](const std::string& name) { return registry.find_measured(name); },
      std::cin, replies);
}

void serve_partitions(const WorkerArgs& args) {
  if (!die_with_parent()) return;
  std::FILE* replies = take_stdout_for_replies();
  MeasureOptions options;
  options.threads = checked_threads(args.threads);
  const BackendRegistry& registry = BackendRegistry::global();
  InProcessMeasurer measurer(registry.native(), options);
  serve_partition_measurements(
      measurer, [&](const std::string& name) { return registry.find_measured(name); },
      [](const std::string& bytes, const std::string& weights_dir) {
        return graph_from_bytes(bytes, weights_dir);
      },
      std::cin, replies);
}

void run_fleet(const WorkerArgs& args) {
  if (!is_cache_url(args.cache)) {
    throw Error("a fleet worker takes its jobs from a PostgreSQL database: postgresql://...",
                {.field = "--cache"});
  }
  if (args.lease < 3) throw Error("must be at least 3 seconds", {.field = "--lease"});
  if (args.idle_exit < 0) throw Error("must not be negative", {.field = "--idle-exit"});
  load_backend_plugins(args.backend_plugins);
  // The first SIGINT or SIGTERM stops claiming; the job in hand is
  // finished and stored first.
  struct sigaction action = {};
  action.sa_handler = [](int) { stop_requested.store(true); };
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  FleetWorkerOptions options;
  options.url = args.cache;
  options.name = args.name;
  options.threads = checked_threads(args.threads);
  options.lease_seconds = args.lease;
  options.idle_exit_seconds = args.idle_exit;
  options.worker_command = partition_worker_command("", options.threads);
  options.log = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  options.stop = &stop_requested;
  const int finished = run_fleet_worker(options);
  fmt::print("{} jobs measured\n", finished);
}

void run_worker(const WorkerArgs& args) {
  if (args.partitions) {
    serve_partitions(args);
  } else if (!args.cache.empty()) {
    run_fleet(args);
  } else if (!args.model.empty()) {
    serve_model(args);
  } else {
    throw Error("give --cache postgresql://... to measure the jobs tuners post there");
  }
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "worker",
      "Measure the candidates tuners post to a PostgreSQL cache (--cache postgresql://...; "
      "docs/fleet.md)");
  cmd->add_option("model", args->model, "(internal) the model of a tuner's own worker");
  add_input_shape_flag(*cmd, args->input_shapes);
  // A fleet worker takes the jobs of tuners with as many threads.
  add_threads_flag(*cmd, args->threads);
  add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->add_flag("--partitions", args->partitions, "(internal) measure partitions sent as files")
      ->group("");
  cmd->add_option("--body", args->body,
                  "(internal) INDEX:NODE, repeatable: measure candidates of that body of that "
                  "control-flow node, nested in the order given")
      ->group("");
  cmd->add_option("--cache", args->cache,
                  "the PostgreSQL database whose jobs to measure (postgresql://user@host/db)");
  cmd->add_option("--name", args->name,
                  "the name this worker claims jobs under (default HOST:PID)");
  cmd->add_option("--lease", args->lease,
                  "seconds a claimed job stays this worker's without word from it; renewed "
                  "every third of it while measuring")
      ->capture_default_str();
  cmd->add_option("--idle-exit", args->idle_exit,
                  "stop after this many seconds without a job (0: never)")
      ->capture_default_str();
  add_backend_plugin_flag(*cmd, args->backend_plugins);
  cmd->callback([args] { run_worker(*args); });
}

}  // namespace collage::cli
