// libFuzzer target: the graph passes. A model that parses is imported at
// every graph-optimization level (none, basic, all), each with the native
// evaluator folding constants. Bad input must end in collage::Error; a
// crash, a sanitizer report or another exception is a finding, and so is a
// canonical graph that fails its own invariants (every node's inputs
// defined before it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"

namespace {

// Aborts (a finding) unless every value a node or the graph's outputs read
// is a graph input, a constant, or defined by an earlier node.
void check_invariants(const collage::Graph& graph) {
  std::vector<bool> defined(graph.num_values(), false);
  for (collage::ValueId id : graph.inputs()) defined[static_cast<std::size_t>(id)] = true;
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    if (graph.values()[v].is_constant()) defined[v] = true;
  }
  for (const collage::Node& node : graph.nodes()) {
    for (collage::ValueId in : node.inputs) {
      if (in != collage::kNoValue && !defined[static_cast<std::size_t>(in)]) std::abort();
    }
    for (collage::ValueId out : node.outputs) defined[static_cast<std::size_t>(out)] = true;
  }
  for (collage::ValueId out : graph.outputs()) {
    if (!defined[static_cast<std::size_t>(out)]) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(data, static_cast<int>(size))) return 0;
  for (collage::GraphOptLevel level :
       {collage::GraphOptLevel::kNone, collage::GraphOptLevel::kBasic,
        collage::GraphOptLevel::kAll}) {
    collage::ImportOptions options;
    options.evaluator = &collage::native_evaluator();
    options.graph_opt = level;
    try {
      collage::Graph graph = collage::import_onnx_model(model, options, "/nonexistent");
      check_invariants(graph);
    } catch (const collage::Error&) {
      // Refused at every level alike: the levels differ only after import.
      return 0;
    }
  }
  return 0;
}
