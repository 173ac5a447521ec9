// Export of a Graph as an ONNX model.
//
// Two uses: writing models (tests build small models in C++ and save them;
// users can save the canonical graph to look at it), and handing the graph to
// ONNX shape inference during import. Inference needs the data of small
// constants (shape vectors) but not of weights, so the export can leave large
// constants out as typed graph inputs: inference stays cheap however large
// the model is, and no weight is copied.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "collage/ir/graph.h"

namespace collage {

struct ExportOptions {
  // Constants with more elements than this become graph inputs of their type
  // without data; the others become initializers.
  std::int64_t max_initializer_elements = std::numeric_limits<std::int64_t>::max();
  // Whether to describe intermediate values (value_info). Types that are not
  // known yet (see partial_type.h) are written as far as they are known.
  bool value_info = true;
  // Whether control-flow nodes carry their bodies (ir/control_flow.h).
  // Without them, ONNX's inference leaves their outputs to the importer.
  bool bodies = true;
  // When set, a constant it names a file for is written as external data:
  // the whole of that file, relative to the model's directory (how a
  // partition's weights travel apart from it, onnx/graph_bytes.h).
  std::function<std::optional<std::string>(const Tensor&)> external_file;
};

onnx::ModelProto export_onnx(const Graph& graph, const ExportOptions& options = {});

// Writes the whole graph, weights included, as an ONNX model file. Throws
// Error naming the file.
void save_onnx(const Graph& graph, const std::string& path);

// Fills `type` with `tensor_type` as far as it is known (an unknown
// dimension has neither value nor parameter; an unknown rank has no shape).
void type_to_proto(const TensorType& tensor_type, onnx::TypeProto& type);

}  // namespace collage
