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
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_compiler.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_profile.h"
#include "collage/runtime/npy.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "commands.h"
#include "model_loading.h"
#include "planning.h"
#include "resource_options.h"

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
  // A saved plan (collage tune -o) to replay instead of planning.
  std::string plan;
  // Where to write the Chrome trace of the timed runs.
  std::string profile;
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

// Writes the trace of the timed runs, with each partition's estimate, and
// prints the profile summary.
void write_profile(const Plan& plan, std::vector<TraceSpan> spans, const std::string& path) {
  for (TraceSpan& span : spans) {
    if (span.kind != SpanKind::kPartition || span.partition < 0) continue;
    const PlanPartition& partition = plan.partitions[static_cast<std::size_t>(span.partition)];
    if (partition.estimated_ms) {
      span.args.emplace_back("estimated_ms", fmt::format("{:.4f}", *partition.estimated_ms));
    }
  }
  write_file_atomically(path, to_chrome_json(spans));
  fmt::print("{}", profile_to_text(profile_plan(plan, spans)));
  fmt::print("trace written to {} (open in Perfetto or chrome://tracing)\n", path);
}

// The thread count a saved plan was tuned at, checked like --threads.
int plan_threads(const Plan& plan, const std::string& plan_file) {
  if (plan.threads >= 1 && plan.threads <= max_threads()) return plan.threads;
  throw Error(
      fmt::format("{} is out of range: must be between 1 and {}", plan.threads, max_threads()),
      {.file = plan_file, .field = "threads"});
}

// One line on stderr when the plan was measured elsewhere: on another machine
// or with other backend versions its choices may not be the fastest here.
void warn_if_measured_elsewhere(const Plan& plan, int threads, const std::string& plan_file) {
  std::vector<std::string> differences;
  if (!plan.machine.empty() && plan.machine != machine_text(threads)) {
    differences.push_back(fmt::format("machine {} (here {})", quote_untrusted(plan.machine, 80),
                                      quote_untrusted(machine_text(threads), 80)));
  }
  for (const auto& [name, version] : plan.backend_versions) {
    const Backend* backend = BackendRegistry::global().find(name);
    if (backend == nullptr || backend->version() == version) continue;
    differences.push_back(fmt::format("{} {} (here {})", quote_untrusted(name, 40),
                                      quote_untrusted(version, 80),
                                      quote_untrusted(backend->version(), 80)));
  }
  if (differences.empty()) return;
  std::string line = escape_control(fmt::format(
      "collage: warning: {}: the plan was measured with {}; its choices may not be the fastest "
      "here (re-tune with `collage tune`)",
      plan_file, fmt::join(differences, ", ")));
  std::fprintf(stderr, "%s\n", line.c_str());
}

void run_run(const RunArgs& args) {
  Strategy strategy = Strategy::parse(args.strategy);
  int threads = checked_threads(args.threads);
  if (args.repeat < 1) throw Error("must be at least 1", {.field = "--repeat"});
  if (args.warmup < 0) throw Error("must not be negative", {.field = "--warmup"});
  std::map<std::string, Shape> shapes = parse_input_shapes(args.input_shapes);
  std::optional<Plan> saved;
  if (!args.plan.empty()) {
    saved = load_plan(args.plan);
    // The plan was made for its input shapes; flags given here override them.
    for (const auto& [name, shape] : saved->input_shapes) shapes.emplace(name, shape);
    strategy = Strategy::parse(saved->strategy);
    if (!args.threads_given) threads = plan_threads(*saved, args.plan);
    if (args.graph_opt_given && args.graph_opt != saved->graph_opt) {
      throw Error(fmt::format("the plan was made at --graph-opt {}: its partitions name nodes "
                              "of that graph; leave the flag out to replay it",
                              quote_untrusted(saved->graph_opt)),
                  {.field = "--graph-opt"});
    }
  }
  const GraphOptLevel graph_opt = graph_opt_level(saved ? saved->graph_opt : args.graph_opt);
  std::vector<std::pair<InputFlag, Tensor>> files = read_input_files(args.inputs);

  Graph graph = load_model(args.model, shapes, graph_opt);
  require_native_support(graph, args.model);
  check_max_memory(graph, args.max_memory);

  std::map<std::string, Tensor> inputs;
  std::set<std::string> from_files;
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
    // Checked here as well as by the executor, so a wrong file is reported
    // before the (possibly long) planning.
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

  PlanningOptions planning;
  planning.model_path = args.model;
  planning.input_shapes = shapes;
  planning.graph_opt = graph_opt;
  planning.backends = parse_backend_list("all");
  planning.threads = threads;
  auto start = std::chrono::steady_clock::now();
  Plan plan = saved ? *saved : make_plan(graph, strategy, planning);
  if (saved) {
    check_plan_matches(graph, plan, args.plan);
    warn_if_measured_elsewhere(plan, threads, args.plan);
  }
  Executor executor = compile_plan(graph, plan, BackendRegistry::global(), threads);
  double prepare_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<std::string> placement;
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    placement.push_back(fmt::format("{} {}", backend, count));
  }
  fmt::print("model: {} ({} nodes)\n", args.model, graph.num_nodes());
  fmt::print("strategy: {} (partitions: {}), threads: {}, plan and compile: {}\n",
             strategy.to_string(), fmt::join(placement, ", "), threads,
             milliseconds(prepare_seconds));
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    fmt::print("input  {}  {}  ({})\n", value.name, value.type.to_string(),
               from_files.count(value.name) ? "from file" : "random");
  }

  for (int i = 0; i < args.warmup; ++i) executor.run(inputs);
  TraceRecorder recorder;
  if (!args.profile.empty()) executor.record_into(&recorder);
  std::vector<double> samples;
  std::map<std::string, Tensor> outputs;
  for (int i = 0; i < args.repeat; ++i) {
    auto run_start = std::chrono::steady_clock::now();
    outputs = executor.run(inputs);
    samples.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count());
  }
  TimingResult timing = summarize(samples);
  fmt::print("latency over {} run{}: median {}, min {}, max {}\n", args.repeat,
             args.repeat == 1 ? "" : "s", milliseconds(timing.median_seconds),
             milliseconds(timing.min_seconds), milliseconds(timing.max_seconds));

  if (!args.profile.empty()) {
    executor.record_into(nullptr);
    write_profile(plan, recorder.spans(), args.profile);
  }

  for (const std::string& name : executor.output_names()) {
    const Tensor& tensor = outputs.at(name);
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
  cmd->add_option("--input-shape", args->input_shapes,
                  "Fix an input's shape: NAME=D0,D1,... (repeatable)")
      ->allow_extra_args(false);
  CLI::Option* graph_opt = add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->add_option("--input", args->inputs,
                  "Input data: NAME=FILE.npy, or FILE.npy for a one-input model (repeatable); "
                  "inputs not given get deterministic random data")
      ->allow_extra_args(false);
  cmd->add_option("--save-outputs", args->save_outputs,
                  "Write each output to DIR/<name>.npy (characters outside [A-Za-z0-9._-] "
                  "become '_')");
  CLI::Option* threads = add_threads_option(cmd, args->threads);
  add_max_memory_option(cmd, args->max_memory);
  cmd->add_option("--repeat", args->repeat, "Timed runs")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "Untimed runs before timing")->capture_default_str();
  cmd->add_option("--strategy", args->strategy,
                  "How to place nodes on backends: native, single:<backend>, "
                  "greedy:<b1>,<b2>,... or collage")
      ->capture_default_str();
  cmd->add_option("--plan", args->plan,
                  "Replay a plan saved by `collage tune -o` (no search; --strategy is ignored)");
  cmd->add_option("--profile", args->profile,
                  "Write a Chrome trace (Perfetto, chrome://tracing) of the timed runs to FILE "
                  "and print where the time goes: per partition in context vs estimate, "
                  "boundary work, the largest gaps");
  cmd->callback([args, threads, graph_opt] {
    args->threads_given = threads->count() > 0;
    args->graph_opt_given = graph_opt->count() > 0;
    run_run(*args);
  });
}

}  // namespace collage::cli
