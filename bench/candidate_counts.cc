// Counts the candidates each backend offers the search on a model, as tune
// gathers them (one per distinct node set), with the nodes they cover, the
// largest, and how many a node lies in at most: where a branchy graph makes a
// fusing compiler's or a graph runtime's candidates multiply.
//
//   bench_candidate_counts [--max-depth D] [--max-exits E]
//                          [--input-shape NAME=D,...] MODEL.onnx [MODEL.onnx ...]
// One markdown table row per model and backend on stdout.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/backend_spec.h"
#include "collage/session/model_loading.h"

using namespace collage;

namespace {

void count(const std::string& path, const std::map<std::string, Shape>& shapes,
           const SpecOptions& options) {
  const Graph model = load_model(path, shapes);
  const std::string name = std::filesystem::path(path).stem().string();
  const DataflowGraph dfg(model);
  for (const Backend* backend : BackendRegistry::global().all()) {
    std::vector<CandidatePartition> candidates =
        gather_candidates(dfg, make_backend_spec(*backend, options));
    std::vector<int> per_node(dfg.size(), 0);
    std::size_t largest = 0;
    for (const CandidatePartition& candidate : candidates) {
      largest = std::max(largest, candidate.sub_graph.operator_count(dfg));
      for (PostDfsIndex index : candidate.sub_graph.inside().to_vector()) {
        if (dfg.is_operator(index)) ++per_node[static_cast<std::size_t>(index)];
      }
    }
    int covered = static_cast<int>(
        std::count_if(per_node.begin(), per_node.end(), [](int n) { return n > 0; }));
    int most = per_node.empty() ? 0 : *std::max_element(per_node.begin(), per_node.end());
    fmt::print("| {} | {} | {} | {} | {} of {} | {} |\n", name, backend->name(), candidates.size(),
               largest, covered, model.num_nodes(), most);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    SpecOptions options;
    std::map<std::string, Shape> shapes;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if ((arg == "--max-depth" || arg == "--max-exits" || arg == "--input-shape") &&
          i + 1 < argc) {
        std::string value = argv[++i];
        if (arg == "--input-shape") {
          shapes.insert(parse_input_shape(value));
        } else if (arg == "--max-depth") {
          options.graph_max_depth = options.compiler_max_depth = std::stoul(value);
        } else {
          options.max_exits = std::stoul(value);
        }
      } else {
        models.push_back(arg);
      }
    }
    if (models.empty()) {
      fmt::print(stderr,
                 "usage: bench_candidate_counts [--max-depth D] [--max-exits E] "
                 "[--input-shape NAME=D,...] MODEL.onnx...\n");
      return 2;
    }
    fmt::print(
        "| model | backend | candidates | largest (nodes) | nodes covered | most candidates "
        "on one node |\n|---|---|---|---|---|---|\n");
    for (const std::string& model : models) count(model, shapes, options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_candidate_counts: {}\n", e.what());
    return 2;
  }
  return 0;
}
