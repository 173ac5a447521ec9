// Runtime-shaped regions: the part of a model whose shapes depend on the
// data.
//
// NonZero, NonMaxSuppression, Unique and Compress produce as many elements as
// the data selects; TopK with a computed K, and Reshape, Expand, Resize or
// Tile with sizes computed from the data, produce shapes that follow values.
// A detector's post-processing is made of them. Everything else of a model
// has static shapes and is planned, measured and compiled ahead of time.
//
// Import encloses the nodes whose inputs or outputs have shapes known only
// when the model runs, together with every node on a path between two of
// them (so that the rest stays acyclic), in one node: op RuntimeShapes of
// the "collage" domain, whose "body" attribute holds them as a graph with
// the shapes inference could tell (the others unknown). The node reads the
// static values the region reads and defines the values read after it.
// Those of its outputs whose shapes are known only at run time (only model
// outputs can be: whatever reads such a value is in the region) are typed
// TensorType::at_run_time. Native runs the node by running its body node
// by node, each with the shapes its inputs have in this run
// (backends/native/runtime_shapes_run.cc); no other backend takes it.
#pragma once

#include <cstdint>
#include <string_view>

#include "collage/ir/graph.h"

namespace collage {

inline constexpr std::string_view kRuntimeShapesDomain = "collage";
inline constexpr std::string_view kRuntimeShapesOp = "RuntimeShapes";

// Whether `node` is a runtime-shaped region.
bool is_runtime_shaped_region(const Node& node);

// Encloses the nodes of `graph` whose shapes are not all static in one
// runtime-shaped region and marks its outputs with unknown dimensions
// at_run_time; a graph whose shapes are static is left as it is, and so is
// one already enclosed (but for marking the region's outputs), and so is one
// where a value the region would define for the rest has an unknown rank
// (inference failed there: import reports it). Returns the number of nodes
// enclosed.
int enclose_runtime_shapes(Graph& graph);

// How a region types each node as it runs: the shape inference of import
// (onnx/type_inference.h), which the importer installs, since this layer
// cannot call it. type_at_run_time throws Error when none is installed.
using GraphTyping = void (*)(Graph& graph);
void set_runtime_typing(GraphTyping typing);
void type_at_run_time(Graph& graph);

// The most bytes one value a region computes may take (--max-memory, set by
// the session; 0: no limit): a size the data chose beyond it is an Error.
void set_runtime_memory_budget(std::int64_t bytes);
std::int64_t runtime_memory_budget();

// The placeholder type of a value whose shape is known only at run time:
// `partial` with each unknown dimension 0, marked at_run_time.
TensorType at_run_time_type(const TensorType& partial);

}  // namespace collage
