// Whether timing candidates in the caches a plan leaves makes their sum
// hold in context (cost/cache_state.h).
//
// For a saved plan, this profiles the plan in context (its partitions' medians
// as the executor calls them), then times every partition alone four ways,
// alternating, in each round: back to back (its weights stay in cache); after
// streaming through the caches what `collage tune` streams (eviction_bytes():
// a few times the cores' private caches when the model fits in half the last
// level, else what the rest of the model touches, up to kMaxEvictionBytes), a
// run of a twin of the partition where twin_runs_before() (its code warm, its
// data not: MeasureOptions::twin_before) and a read of its inputs and outputs
// (MeasureOptions::Edges::kRead); the same with its inputs written instead, as
// their producer writes them (Edges::kInputsWritten, what tune does); and that
// once more without any twin. A row per partition: its constant bytes, what
// the rest of the model touches, the eviction, the in-context median and the
// isolated medians (median over rounds); then the sums, and the seconds the
// measurements of each way took. The isolated times use the layouts each
// backend computes in (preferred_edges), as the search's measurements do.
//
//   bench_plan_caches [--threads N] [--rounds R] [--input-shape NAME=D,...] MODEL.onnx PLAN.json
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/cache_state.h"
#include "collage/cost/measurer.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_profile.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "collage/session/model_loading.h"

namespace collage {
namespace {

std::size_t constant_bytes(const Graph& partition) {
  std::size_t bytes = 0;
  for (const Value& value : partition.values()) {
    if (value.is_constant()) bytes += value.type.byte_size();
  }
  return bytes;
}

double megabytes(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

int run(int argc, char** argv) {
  int threads = 2;
  int rounds = 3;
  std::map<std::string, Shape> shapes;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "--input-shape" && i + 1 < argc) {
      shapes.insert(parse_input_shape(argv[++i]));
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) {
    std::cerr << "usage: bench_plan_caches [--threads N] [--rounds R] "
                 "[--input-shape NAME=D,...] MODEL.onnx PLAN.json\n";
    return 2;
  }
  const Plan plan = load_plan(files[1]);
  const Graph model = load_model(files[0], shapes, graph_opt_level(plan.graph_opt));
  const BackendRegistry& registry = BackendRegistry::global();

  MeasureOptions options;
  options.threads = threads;
  options.edges = MeasureOptions::Edges::kInputsWritten;
  InProcessMeasurer measurer(registry.native(), options);
  options.twin_before = false;
  InProcessMeasurer untwinned(registry.native(), options);
  options.twin_before = true;
  options.edges = MeasureOptions::Edges::kRead;
  InProcessMeasurer reading(registry.native(), options);
  const std::map<std::string, Tensor> inputs = random_inputs(model);

  struct Row {
    Graph graph;
    const Backend* backend;
    std::size_t evict_whole, evict;
    std::string ops;
    std::vector<double> context, hot, read, written, no_twin;
  };
  std::vector<Row> rows;
  for (const PlanPartition& partition : plan.partitions) {
    std::vector<NodeId> nodes;
    for (const std::string& name : partition.nodes) {
      std::optional<NodeId> id = model.find_node(name);
      if (!id) throw Error("the plan names a node the model lacks: " + name);
      nodes.push_back(*id);
    }
    rows.push_back(Row{extract_subgraph(model, nodes), &registry.get(partition.backend),
                       eviction_bytes(model, nodes, threads, CacheSizes{}),
                       eviction_bytes(model, nodes, threads)});
  }
  // Each round profiles the plan in context, then times every partition
  // the four ways, so that a slow phase of the machine falls on all five.
  std::vector<double> run_medians;
  double seconds_hot = 0;
  double seconds_read = 0;
  double seconds_written = 0;
  double seconds_no_twin = 0;
  // Times one measurement (ms), adding the seconds it took to `spent`.
  auto timed = [&](InProcessMeasurer& by, const Row& row, std::size_t evict, double& spent) {
    const auto start = std::chrono::steady_clock::now();
    const double ms = by.measure_partition(row.graph, *row.backend, evict).seconds() * 1e3;
    spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return ms;
  };
  for (int r = 0; r < rounds; ++r) {
    const PlanProfile profile = profile_in_context(model, plan, registry, threads, inputs, 10, 3);
    run_medians.push_back(profile.run_median_ms);
    for (std::size_t p = 0; p < rows.size(); ++p) {
      Row& row = rows[p];
      row.ops = profile.partitions[p].ops;
      row.context.push_back(profile.partitions[p].in_context_ms);
      row.hot.push_back(timed(measurer, row, 0, seconds_hot));
      row.read.push_back(timed(reading, row, row.evict, seconds_read));
      row.written.push_back(timed(measurer, row, row.evict, seconds_written));
      row.no_twin.push_back(timed(untwinned, row, row.evict, seconds_no_twin));
    }
  }

  fmt::print("{}: {} partitions, {} threads, {} rounds; end to end {:.3f} ms in context\n\n",
             files[0], plan.partitions.size(), threads, rounds, percentile(run_medians, 0.5));
  fmt::print(
      "| # | backend | ops | constants MiB | rest MiB | evicted MiB | in context ms "
      "| back to back ms | evicted, twin, edges read ms | evicted, twin, inputs written ms "
      "| evicted, no twin, inputs written ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  double sum_context = 0;
  double sum_hot = 0;
  double sum_read = 0;
  double sum_written = 0;
  double sum_no_twin = 0;
  for (std::size_t p = 0; p < rows.size(); ++p) {
    const Row& row = rows[p];
    const double context = percentile(row.context, 0.5);
    sum_context += context;
    sum_hot += percentile(row.hot, 0.5);
    sum_read += percentile(row.read, 0.5);
    sum_written += percentile(row.written, 0.5);
    sum_no_twin += percentile(row.no_twin, 0.5);
    fmt::print(
        "| {} | {} | {} | {:.2f} | {:.0f} | {:.0f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} "
        "|\n",
        p, row.backend->name(), row.ops, megabytes(constant_bytes(row.graph)),
        megabytes(row.evict_whole), megabytes(row.evict), context, percentile(row.hot, 0.5),
        percentile(row.read, 0.5), percentile(row.written, 0.5), percentile(row.no_twin, 0.5));
  }
  auto off = [&](double sum) { return (sum / sum_context - 1) * 100; };
  fmt::print(
      "\nsums: in context {:.3f} ms, back to back {:.3f} ms ({:+.1f}%), edges read "
      "{:.3f} ms ({:+.1f}%), inputs written {:.3f} ms ({:+.1f}%), no twin {:.3f} ms ({:+.1f}%)\n",
      sum_context, sum_hot, off(sum_hot), sum_read, off(sum_read), sum_written, off(sum_written),
      sum_no_twin, off(sum_no_twin));
  fmt::print(
      "seconds measuring: back to back {:.1f}, edges read {:.1f}, inputs written {:.1f}, "
      "no twin {:.1f} (caches: {:.1f} MiB private per core, {:.0f} MiB last level)\n",
      seconds_hot, seconds_read, seconds_written, seconds_no_twin,
      megabytes(machine_caches().per_core), megabytes(machine_caches().last_level));
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  try {
    return collage::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_plan_caches: " << e.what() << "\n";
    return 2;
  }
}
