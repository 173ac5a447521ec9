// Times every backend on the regions the halide backend takes in real
// models: the memory-bound parts (depthwise and grouped convolutions with
// their epilogues, pooling, normalizations, elementwise chains, data
// movement) that no GEMM library covers.
//
// The regions are those of the model's `single:halide` placement (largest
// Halide candidates first, the rest on native). Each distinct region is
// extracted as a standalone partition, compiled by every backend that can
// compile it whole, checked against the reference executor, and timed with
// the same inputs and thread count; the backends take turns within each
// round (A B C A B C ...), and a cell is the median of the round medians.
//
// With --schedules, halide is also timed under each of Halide's
// autoschedulers (columns halide/mullapudi2016, halide/adams2019,
// halide/li2018; `halide` is the template schedule), and a second tally
// says which schedule was fastest on how many regions.
//
//   bench_halide_regions [--threads N] [--rounds R] [--schedules]
//                        [--input-shape NAME=D,...] MODEL.onnx [MODEL.onnx ...]
// One markdown table row per region on stdout.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collage/backends/halide/halide_backend.h"
#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/cost/measurer.h"
#include "collage/ir/structural_hash.h"
#include "collage/onnx/importer.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "collage/search/backend_spec.h"
#include "collage/search/strategy.h"
#include "collage/session/model_loading.h"

namespace collage {
namespace {

struct Region {
  std::string model;
  std::string ops;
  std::string shape;
  Graph graph;
};

std::string describe_ops(const Graph& graph) {
  std::vector<std::string> parts;
  for (const Node& node : graph.nodes()) parts.push_back(node.op_type);
  if (parts.size() > 6) {
    const std::size_t more = parts.size() - 5;
    parts.resize(5);
    parts.push_back(fmt::format("... ({} ops)", more + 5));
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "+") + part;
  return text;
}

std::vector<Region> halide_regions(const std::string& path, const std::string& name,
                                   const std::map<std::string, Shape>& shapes,
                                   std::set<std::uint64_t>& seen) {
  const Graph model = load_model(path, shapes);
  const DataflowGraph dfg(model);
  const BackendRegistry& registry = BackendRegistry::global();
  const SpecOptions options;
  const std::vector<PartitionSpecPtr> priority{make_backend_spec(registry.get("halide"), options)};
  const PartitionSpecPtr fallback = make_backend_spec(registry.native(), options);
  std::vector<Region> regions;
  for (const ChosenPartition& chosen : greedy_cover(dfg, priority, fallback)) {
    if (chosen.candidate.spec_name() != "halide") continue;
    Graph graph = extract_subgraph(model, chosen.candidate.sub_graph.node_ids(dfg));
    if (!seen.insert(structural_hash(graph)).second) continue;
    const Shape& shape = graph.type(graph.outputs().front()).shape;
    regions.push_back(Region{name, describe_ops(graph), shape_to_string(shape), std::move(graph)});
  }
  return regions;
}

int run(int argc, char** argv) {
  int threads = 2;
  int rounds = 3;
  bool schedules = false;
  std::map<std::string, Shape> shapes;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "--schedules") {
      schedules = true;
    } else if (arg == "--input-shape" && i + 1 < argc) {
      shapes.insert(parse_input_shape(argv[++i]));
    } else {
      models.push_back(arg);
    }
  }
  if (models.empty() || threads < 1 || rounds < 1) {
    std::cerr << "usage: bench_halide_regions [--threads N] [--rounds R] [--schedules] "
                 "[--input-shape NAME=D,...] MODEL.onnx...\n";
    return 2;
  }
  // The columns: every registered backend, then the autoscheduled halides.
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<std::string> names = registry.names();
  std::vector<const Backend*> backends = registry.all();
  const std::size_t registered = names.size();
  std::vector<std::unique_ptr<Backend>> variants;
  if (schedules) {
    for (halide::ScheduleKind kind :
         {halide::ScheduleKind::kMullapudi2016, halide::ScheduleKind::kAdams2019,
          halide::ScheduleKind::kLi2018}) {
      variants.push_back(make_halide_backend(kind));
      backends.push_back(variants.back().get());
      names.push_back("halide/" + halide::schedule_name(kind));
    }
  }
  fmt::print("| model | region | output | {} ms | fastest |{}\n", fmt::join(names, " ms | "),
             schedules ? " fastest schedule |" : "");
  std::string separator = "|---|---|---|";
  for (std::size_t k = 0; k <= names.size() + (schedules ? 1 : 0); ++k) separator += "---|";
  fmt::print("{}\n", separator);
  std::set<std::uint64_t> seen;
  std::map<std::string, int> wins;
  std::map<std::string, int> schedule_wins;
  int total = 0;
  for (const std::string& path : models) {
    std::string name = path.substr(0, path.rfind('/'));
    name = name.substr(name.rfind('/') + 1);
    for (Region& region : halide_regions(path, name, shapes, seen)) {
      std::map<std::string, Tensor> by_name = random_inputs(region.graph);
      std::vector<Tensor> inputs;
      for (ValueId id : region.graph.inputs())
        inputs.push_back(by_name.at(region.graph.value(id).name));
      std::vector<Tensor> expected;
      for (ValueId id : region.graph.outputs())
        expected.push_back(Tensor::allocate(region.graph.type(id)));
      compile_reference(region.graph, 1)->run(inputs, expected);
      std::vector<std::unique_ptr<Kernel>> kernels(names.size());
      std::vector<std::vector<Tensor>> outputs(names.size());
      for (std::size_t b = 0; b < names.size(); ++b) {
        auto kernel = backends[b]->compile(region.graph, CompileOptions{threads});
        if (!kernel) continue;
        for (ValueId id : region.graph.outputs()) {
          outputs[b].push_back(Tensor::allocate(region.graph.type(id)));
        }
        try {
          (*kernel)->run(inputs, outputs[b]);
        } catch (const std::exception& error) {
          std::cerr << names[b] << " on " << region.ops << ": " << error.what() << "\n";
          continue;
        }
        bool right = true;
        for (std::size_t k = 0; k < expected.size(); ++k) {
          right = right && !compare_outputs(outputs[b][k], expected[k], 1e-3, 1e-5).has_value();
        }
        if (right) kernels[b] = std::move(*kernel);
      }
      std::vector<std::vector<double>> round_medians(names.size());
      TimingOptions timing;
      timing.budget_seconds = 0.2;
      for (int r = 0; r < rounds; ++r) {
        for (std::size_t b = 0; b < names.size(); ++b) {
          if (!kernels[b]) continue;
          Kernel& kernel = *kernels[b];
          std::vector<Tensor>& out = outputs[b];
          round_medians[b].push_back(
              time_function([&] { kernel.run(inputs, out); }, timing).median_seconds);
        }
      }
      // The fastest backend among the registered ones (halide with its
      // default schedule), and the fastest halide schedule.
      std::string cells;
      double best = 0;
      std::string fastest;
      double best_schedule = 0;
      std::string fastest_schedule;
      for (std::size_t b = 0; b < names.size(); ++b) {
        if (round_medians[b].empty()) {
          cells += " — |";
          continue;
        }
        const double ms = percentile(round_medians[b], 0.5) * 1e3;
        cells += fmt::format(" {:.4f} |", ms);
        if (b < registered && (fastest.empty() || ms < best)) {
          best = ms;
          fastest = names[b];
        }
        if (names[b].rfind("halide", 0) == 0 && (fastest_schedule.empty() || ms < best_schedule)) {
          best_schedule = ms;
          fastest_schedule = names[b];
        }
      }
      ++wins[fastest];
      ++total;
      std::string schedule_cell;
      if (schedules) {
        ++schedule_wins[fastest_schedule];
        schedule_cell = " " + fastest_schedule + " |";
      }
      fmt::print("| {} | {} | {} |{} {} |{}\n", region.model, region.ops, region.shape, cells,
                 fastest, schedule_cell);
      std::fflush(stdout);
    }
  }
  fmt::print("\nfastest backend over {} regions:", total);
  for (const auto& [backend, count] : wins) fmt::print(" {} {}", backend, count);
  fmt::print(" (threads {}, {} rounds)\n", threads, rounds);
  if (schedules) {
    fmt::print("fastest halide schedule:");
    for (const auto& [schedule, count] : schedule_wins) fmt::print(" {} {}", schedule, count);
    fmt::print(" (halide = the template)\n");
  }
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  try {
    return collage::run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "bench_halide_regions: " << error.what() << "\n";
    return 2;
  }
}
