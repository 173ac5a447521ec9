// `collage run MODEL`: plan a model under a strategy, compile the plan, run
// it, time it and summarize (or save) its outputs.
//
// The strategy goes through the same make_plan()/compile_plan() path as
// `tune` and `compare`, so a strategy added there runs here unchanged.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "collage/backends/registry.h"
#include "collage/cost/measurer.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_compiler.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_profile.h"
#include "collage/runtime/interleaved_timing.h"
#include "collage/runtime/npy.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "collage/session/evaluation.h"
#include "collage/session/model_loading.h"
#include "collage/session/prepared_model.h"
#include "collage/session/resources.h"
#include "collage/session/shape_plans.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string graph_opt = "all";
  // Whether --graph-opt was given; a replayed plan otherwise uses its own level.
  bool graph_opt_given = false;
  std::vector<std::string> inputs;
  std::string save_outputs;
  std::string max_memory;
  int threads = 0;
  // Whether --threads was given; a replayed plan otherwise runs at its own count.
  bool threads_given = false;
  int repeat = 10;
  int warmup = 2;
  std::string strategy = "native";
  // Saved plans (collage tune -o) to replay instead of planning; two or
  // more are timed side by side.
  std::vector<std::string> plans;
  // Where to write the Chrome trace of the timed runs.
  std::string profile;
  std::vector<std::string> backend_plugins;
};

// An --input value: "NAME=FILE.npy", or just "FILE.npy" for a model with
// one input.
struct InputFlag {
  std::string name;  // empty: the model's only input
  std::string path;
};

// Input names rarely contain '=' and paths sometimes do, so the name ends at
// the first '='. A value without '=' is a path.
InputFlag parse_input_flag(const std::string& text) {
  std::size_t eq = text.find('=');
  if (eq == std::string::npos) return InputFlag{"", text};
  if (eq == 0 || eq + 1 == text.size()) {
    throw Error("expected NAME=FILE.npy", {.field = "--input " + quote_untrusted(text)});
  }
  return InputFlag{text.substr(0, eq), text.substr(eq + 1)};
}

// Characters other than [A-Za-z0-9._-] become '_', so any ONNX value name
// makes a safe file name.
std::string file_name_for(const std::string& value_name) {
  std::string out = value_name;
  for (char& c : out) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!safe) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out + ".npy";
}

struct Summary {
  double min = 0;
  double max = 0;
  double mean = 0;
  std::int64_t non_finite = 0;
};

Summary summarize_values(const Tensor& tensor) {
  Summary s;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    double v = tensor.number_at(i);
    if (!std::isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    ++finite;
  }
  if (finite == 0) s.min = s.max = std::numeric_limits<double>::quiet_NaN();
  s.mean = finite == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / finite;
  return s;
}

std::string first_values(const Tensor& tensor, std::int64_t count) {
  std::vector<std::string> parts;
  for (std::int64_t i = 0; i < std::min(count, tensor.numel()); ++i) {
    parts.push_back(fmt::format("{:.6g}", tensor.number_at(i)));
  }
  if (tensor.numel() > count) parts.push_back("...");
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string milliseconds(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

// Reads the --input files. They are read before the (slower) import, so a
// bad file is reported at once; names are resolved against the model after.
std::vector<std::pair<InputFlag, Tensor>> read_input_files(const std::vector<std::string>& flags) {
  std::vector<std::pair<InputFlag, Tensor>> files;
  for (const std::string& text : flags) {
    InputFlag flag = parse_input_flag(text);
    files.emplace_back(flag, read_npy(flag.path));
  }
  return files;
}

// Writes the trace of the traced runs, with each partition's estimate, and
// prints the profile summary, its end to end and the time between kernels
// from the `untraced` runs.
void write_profile(const Plan& plan, std::vector<TraceSpan> spans, const std::string& path,
                   const UntracedRuns& untraced) {
  for (TraceSpan& span : spans) {
    if (span.kind != SpanKind::kPartition || span.partition < 0) continue;
    const PlanPartition& partition = plan.partitions[static_cast<std::size_t>(span.partition)];
    if (partition.estimated_ms) {
      span.args.emplace_back("estimated_ms", fmt::format("{:.4f}", *partition.estimated_ms));
    }
  }
  write_file_atomically(path, to_chrome_json(spans));
  PlanProfile profile = profile_plan(plan, spans);
  leave_out_tracing(profile, untraced);
  fmt::print("{}", profile_to_text(profile));
  fmt::print("trace written to {} (open in Perfetto or chrome://tracing)\n", path);
}

// The inputs a run uses: the --input files by name (each named in
// `from_files`), deterministic random data for the others.
std::map<std::string, Tensor> model_inputs(const Graph& graph,
                                           std::vector<std::pair<InputFlag, Tensor>> files,
                                           std::set<std::string>& from_files) {
  std::map<std::string, Tensor> inputs;
  for (auto& [flag, tensor] : files) {
    std::string name = flag.name;
    if (name.empty()) {
      if (graph.inputs().size() != 1) {
        throw Error(fmt::format("the model has {} inputs; name the one '{}' is for "
                                "(--input NAME=FILE.npy)",
                                graph.inputs().size(), flag.path),
                    {.field = "--input"});
      }
      name = graph.value(graph.inputs()[0]).name;
    }
    if (!inputs.emplace(name, tensor).second) {
      throw Error(fmt::format("input '{}' is given twice", name), {.field = "--input"});
    }
    // Checked here as well as by the executor, so that the message names
    // the file that holds the wrong data.
    std::optional<ValueId> id = graph.find_value(name);
    if (!id ||
        std::find(graph.inputs().begin(), graph.inputs().end(), *id) == graph.inputs().end()) {
      std::vector<std::string> names;
      for (ValueId input : graph.inputs()) names.push_back(graph.value(input).name);
      throw Error(
          fmt::format("the model has no input '{}' (its inputs: {})", name, fmt::join(names, ", ")),
          {.field = "--input"});
    }
    if (tensor.type() != graph.type(*id)) {
      throw Error(fmt::format("{} holds {}, but the model needs {}", flag.path,
                              tensor.type().to_string(), graph.type(*id).to_string()),
                  {.field = "input " + quote_untrusted(name)});
    }
    from_files.insert(name);
  }
  // Every input the user left out gets deterministic random data.
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    if (inputs.count(value.name) != 0) continue;
    std::int64_t bound = index_bound(graph, id, RandomOptions{}.int_bound);
    inputs.emplace(value.name, random_tensor_bounded(value.type, value.name, bound));
  }
  return inputs;
}

// "onednn 2, native 1": a plan's partitions per backend.
std::string placement_text(const Plan& plan) {
  std::vector<std::string> placement;
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    placement.push_back(fmt::format("{} {}", backend, count));
  }
  return fmt::format("{}", fmt::join(placement, ", "));
}

// `run --plan A --plan B ...`: the plans of one model timed side by side,
// A B A B ..., each settling before its timed call as in the tune's
// end-to-end check (session/evaluation.h), so that the machine's drift
// falls on all of them alike; each plan's outputs are checked against the
// first's.
void run_side_by_side(const RunArgs& args, const PrepareOptions& options,
                      std::vector<std::pair<InputFlag, Tensor>> files) {
  if (!args.profile.empty()) {
    throw Error("profiles one plan; profile the plans one at a time", {.field = "--profile"});
  }
  if (!args.save_outputs.empty()) {
    throw Error("saves the outputs of one plan; run the plans one at a time",
                {.field = "--save-outputs"});
  }
  std::vector<PreparedModel> prepared;
  prepared.reserve(args.plans.size());
  for (const std::string& path : args.plans) {
    PrepareOptions with_plan = options;
    with_plan.plan_source = path;
    prepared.push_back(prepare_for_shapes(args.model, std::nullopt, with_plan, load_plans(path)));
    for (const std::string& warning : prepared.back().warnings) {
      std::fprintf(stderr, "collage: warning: %s: %s\n", path.c_str(), warning.c_str());
    }
  }
  const Graph& graph = prepared.front().graph;
  std::set<std::string> from_files;
  std::map<std::string, Tensor> inputs = model_inputs(graph, std::move(files), from_files);
  fmt::print("model: {} ({} nodes), {} plans side by side, {} rounds, inputs {}\n", args.model,
             graph.num_nodes(), prepared.size(), args.repeat,
             from_files.empty() ? "random" : "from files");

  const std::map<std::string, Tensor> reference =
      run_checked(graph, prepared.front().executor, inputs);
  const PlanTolerance tolerance = plan_output_tolerance(graph);
  std::vector<std::optional<std::string>> mismatches(prepared.size());
  for (std::size_t i = 1; i < prepared.size(); ++i) {
    mismatches[i] =
        outputs_differ(run_checked(graph, prepared[i].executor, inputs), reference, tolerance);
  }

  std::vector<std::function<void()>> variants;
  for (PreparedModel& model : prepared) {
    variants.push_back([&model, &inputs] { model.executor.run(inputs); });
  }
  std::vector<TimingResult> timings =
      time_interleaved(variants, args.repeat, args.warmup, 1, kPlanSettleSeconds);
  const double first = timings.front().median_seconds;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const Plan& plan = prepared[i].plan;
    fmt::print("plan {}: {} (partitions: {}), threads: {}\n", args.plans[i], plan.label(),
               placement_text(plan), prepared[i].threads);
    fmt::print("  latency over {} runs: median {}, p10 {}, p90 {}; {:.3f}x the first plan's\n",
               args.repeat, milliseconds(timings[i].median_seconds),
               milliseconds(timings[i].p10_seconds), milliseconds(timings[i].p90_seconds),
               timings[i].median_seconds / first);
    if (mismatches[i]) {
      std::fprintf(stderr, "collage: warning: %s: outputs differ from the first plan's: %s\n",
                   args.plans[i].c_str(), mismatches[i]->c_str());
    }
  }
}

void run_run(const RunArgs& args) {
  Strategy::parse(args.strategy);
  checked_threads(args.threads);
  if (args.repeat < 1) throw Error("must be at least 1", {.field = "--repeat"});
  if (args.warmup < 0) throw Error("must not be negative", {.field = "--warmup"});
  PrepareOptions prepare;
  prepare.input_shapes = parse_input_shapes(args.input_shapes);
  prepare.strategy = args.strategy;
  prepare.threads = args.threads_given ? args.threads : 0;
  prepare.graph_opt = args.graph_opt_given ? args.graph_opt : "";
  prepare.max_memory = args.max_memory;
  std::vector<std::pair<InputFlag, Tensor>> files = read_input_files(args.inputs);
  // A file's shape fixes its input's dynamic dimensions.
  for (const auto& [flag, tensor] : files) prepare.data_shapes.emplace(flag.name, tensor.shape());
  if (args.plans.size() > 1) {
    run_side_by_side(args, prepare, std::move(files));
    return;
  }

  // A plan file may hold plans for several shapes: the one for the shapes
  // given (--input-shape, the --input files) runs, the first when none are.
  std::vector<Plan> plans;
  if (!args.plans.empty()) {
    plans = load_plans(args.plans.front());
    prepare.plan_source = args.plans.front();
  }
  auto start = std::chrono::steady_clock::now();
  PreparedModel prepared = plans.empty()
                               ? prepare_model(args.model, std::nullopt, prepare)
                               : prepare_for_shapes(args.model, std::nullopt, prepare, plans);
  double prepare_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& warning : prepared.warnings) {
    std::fprintf(stderr, "collage: warning: %s\n", warning.c_str());
  }
  const Graph& graph = prepared.graph;
  const Plan& plan = prepared.plan;
  Executor& executor = prepared.executor;
  const int threads = prepared.threads;

  std::set<std::string> from_files;
  std::map<std::string, Tensor> inputs = model_inputs(graph, std::move(files), from_files);

  fmt::print("model: {} ({} nodes)\n", args.model, graph.num_nodes());
  fmt::print("strategy: {} (partitions: {}), threads: {}, plan and compile: {}\n", plan.strategy,
             placement_text(plan), threads, milliseconds(prepare_seconds));
  if (plans.size() > 1 && plan_for_shapes(plans, plan.input_shapes)) {
    fmt::print("plan: for {}, of {} plans in {}\n", escape_control(shapes_text(plan.input_shapes)),
               plans.size(), args.plans.front());
  }
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    fmt::print("input  {}  {}  ({})\n", value.name, value.type.to_string(),
               from_files.count(value.name) ? "from file" : "random");
  }

  for (int i = 0; i < args.warmup; ++i) executor.run(inputs);
  std::vector<double> samples;
  std::map<std::string, Tensor> outputs;
  // With --profile, each timed run is followed by a traced one: tracing
  // costs a few microseconds per partition, so the latency is of the
  // untraced runs, and alternating them lets both sample the same seconds
  // of a machine whose speed moves.
  TraceRecorder recorder;
  UntracedRuns untraced;
  for (int i = 0; i < args.repeat; ++i) {
    auto run_start = std::chrono::steady_clock::now();
    outputs = executor.run(inputs);
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count());
    if (args.profile.empty()) continue;
    untraced.run_ms.push_back(samples.back() * 1e3);
    untraced.kernels_ms.push_back(executor.last_kernel_seconds() * 1e3);
    executor.record_into(&recorder);
    outputs = executor.run(inputs);
    executor.record_into(nullptr);
  }
  TimingResult timing = summarize(samples);
  fmt::print("latency over {} run{}: median {}, min {}, max {}\n", args.repeat,
             args.repeat == 1 ? "" : "s", milliseconds(timing.median_seconds),
             milliseconds(timing.min_seconds), milliseconds(timing.max_seconds));

  if (!args.profile.empty()) {
    write_profile(plan, recorder.spans(), args.profile, untraced);
  }

  for (const std::string& name : executor.output_names()) {
    const Tensor& tensor = outputs.at(name);
    if (tensor.numel() == 0) {
      fmt::print("output {}  {}  (no elements)\n", name, tensor.type().to_string());
      continue;
    }
    Summary s = summarize_values(tensor);
    fmt::print("output {}  {}  min {:.6g} max {:.6g} mean {:.6g}{}  {}\n", name,
               tensor.type().to_string(), s.min, s.max, s.mean,
               s.non_finite == 0 ? "" : fmt::format(" non-finite {}", s.non_finite),
               first_values(tensor, 5));
  }

  if (args.save_outputs.empty()) return;
  std::filesystem::path dir(args.save_outputs);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Error(fmt::format("cannot create directory: {}", ec.message()),
                {.file = args.save_outputs, .field = "--save-outputs"});
  }
  std::set<std::string> written;
  for (const std::string& name : executor.output_names()) {
    std::string file = file_name_for(name);
    if (!written.insert(file).second) {
      throw Error(fmt::format("two outputs map to the file name '{}'", file),
                  {.field = "--save-outputs"});
    }
    write_npy((dir / file).string(), outputs.at(name));
  }
  fmt::print("saved {} output{} to {}\n", written.size(), written.size() == 1 ? "" : "s",
             dir.string());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model and report its latency and outputs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_input_shape_flag(*cmd, args->input_shapes);
  CLI::Option* graph_opt = add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->add_option("--input", args->inputs,
                  "Input data: NAME=FILE.npy, or FILE.npy for a one-input model (repeatable); "
                  "a file's shape fixes its input's dynamic dimensions; inputs not given get "
                  "deterministic random data")
      ->allow_extra_args(false);
  cmd->add_option("--save-outputs", args->save_outputs,
                  "Write each output to DIR/<name>.npy (characters outside [A-Za-z0-9._-] "
                  "become '_')");
  CLI::Option* threads = add_threads_flag(*cmd, args->threads);
  add_max_memory_flag(*cmd, args->max_memory);
  cmd->add_option("--repeat", args->repeat, "Timed runs")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "Untimed runs before timing")->capture_default_str();
  cmd->add_option("--strategy", args->strategy,
                  "How to place nodes on backends: native, single:<backend>, "
                  "greedy:<b1>,<b2>,... or collage")
      ->capture_default_str();
  cmd->add_option("--plan", args->plans,
                  "Replay a plan saved by `collage tune -o` (no search; --strategy is ignored); "
                  "of a file with plans for several shapes, the one for the shapes given "
                  "(--input, --input-shape; other shapes: the closest plan compiled for them, "
                  "with a warning); given more than once, the plans run side by side, "
                  "interleaved, and the latencies are compared")
      ->allow_extra_args(false);
  cmd->add_option("--profile", args->profile,
                  "After the timed runs, run as many again traced, write their Chrome trace "
                  "(Perfetto, chrome://tracing) to FILE and print where the time goes: per "
                  "partition in context vs estimate, boundary work, the largest gaps");
  add_backend_plugin_flag(*cmd, args->backend_plugins);
  cmd->callback([args, threads, graph_opt] {
    load_backend_plugins(args->backend_plugins);
    args->threads_given = threads->count() > 0;
    args->graph_opt_given = graph_opt->count() > 0;
    run_run(*args);
  });
}

}  // namespace collage::cli
