// ONNX import: a model file in, a Graph with static types out.
//
// The importer parses the model (any size protobuf allows; weights stay in
// the parsed message and are borrowed, not copied), checks that the opset is
// one the project implements, fixes the input shapes (from the model, the
// user or the caller's data; every kernel and every measurement is for
// concrete shapes, so a dimension left open is set to kOpenDimSize and
// recorded in Graph::open_dims), takes every other type from ONNX shape
// inference, and canonicalizes the graph (ir/passes/canonicalize.h). What it
// cannot handle it reports at once and completely: all unsupported operators
// in one message, so a user sees the whole gap of a model in one run.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "collage/ir/evaluator.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"

namespace collage {

// The oldest and newest opset of the default ONNX domain the importer reads;
// opsets after 17 are converted to 17 (opset_conversion.h). Opsets 7 and 8
// (the ONNX model zoo's older CNNs) read as opset 9 does, but for
// BatchNormalization's `spatial = 0`, which is refused. Opset 6 and older
// broadcast differently (a `broadcast` attribute) and are refused.
inline constexpr std::int64_t kMinOpset = 7;
inline constexpr std::int64_t kMaxOpset = 21;

struct ImportOptions {
  // Shapes for graph inputs, overriding (and pinning the dynamic dimensions
  // of) the model's; the rank must match the model's.
  std::map<std::string, Shape> input_shapes;
  // Shapes of the data a caller holds for inputs ("" names a model's only
  // input). One fixes the dynamic dimensions of an input that input_shapes
  // leaves alone, where it agrees with every dimension the model fixes;
  // otherwise the input keeps the model's shape.
  std::map<std::string, Shape> data_shapes;
  // Computes folded constants during canonicalization; without one only
  // Shape and Size fold.
  const OpEvaluator* evaluator = nullptr;
  // Which nodes can run at all (after canonicalization); unset accepts every
  // node whose types are known.
  std::function<bool(const Node&)> is_supported;
  bool canonicalize = true;
  // Computes the float16 ops of a model in float32 (ir/passes/float16.h);
  // off, with canonicalize off, the graph is read exactly as written.
  bool float16_in_float32 = true;
  // The graph optimizations canonicalization applies (see canonicalize.h).
  GraphOptLevel graph_opt = GraphOptLevel::kAll;
  // When set, receives what canonicalization did (for `collage info`).
  CanonicalizeStats* canonicalize_stats = nullptr;
};

// Imports the model at `path`; external data is read relative to its
// directory. Throws Error naming the file (and the node, input or value)
// for anything it cannot import.
Graph import_onnx(const std::string& path, const ImportOptions& options = {});

// Imports a model already in memory; `model` stays referenced by the graph's
// constants, whose data it borrows. External data is read relative to
// `model_dir`. Errors carry no file name.
Graph import_onnx_model(std::shared_ptr<const onnx::ModelProto> model,
                        const ImportOptions& options = {}, const std::string& model_dir = ".");

// Parses `bytes` (the contents of an .onnx file) into a model; Error saying
// how many bytes are not one.
std::shared_ptr<onnx::ModelProto> parse_onnx_model(const std::string& bytes);

// Parses the value of an --input-shape flag: "NAME=D0,D1,..." ("NAME=" for a
// scalar). The name ends at the last '='. Throws Error on malformed text.
std::pair<std::string, Shape> parse_input_shape(std::string_view text);
// One dimension of such a value: a size >= 0 in decimal, else nullopt.
std::optional<std::int64_t> parse_dimension(std::string_view text);

}  // namespace collage
