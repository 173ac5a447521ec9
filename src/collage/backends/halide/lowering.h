// Lowering: a partition Graph as one Halide pipeline.
//
// Every value of the region becomes a Halide Func over the value's index
// space; every op defines its outputs' Funcs in terms of its inputs' Funcs,
// so the whole region is one expression DAG that Halide fuses, schedules and
// compiles into one kernel. Halide orders a Func's arguments innermost first,
// the reverse of ONNX's row-major dimensions; the lowering speaks ONNX order
// and reverses at every definition and call.
//
// What becomes a pipeline argument: the partition's inputs, in
// Graph::inputs() order, then every float constant with more than one
// element (weights and biases are run-time buffers, so a compiled kernel
// serves every region of the same structure, whatever its weights), then the
// outputs. Scalar float constants and integer constants (shapes, axes,
// paddings) are compiled in; the structural hash that keys the kernel cache
// covers their values.
#pragma once

#include <Halide.h>

#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::halide {

// A Func the lowering defined, and what the schedule needs to know of it.
struct Stage {
  Halide::Func func;
  Shape shape;
  // Computed once into its own buffer instead of inlined into its
  // consumers: a reduction, or a value read many times (a window op's input,
  // the exponentials a Softmax reads twice). Parameters are never copied.
  bool materialize = false;
  bool is_output = false;
};

struct Lowered {
  // Pipeline arguments before the outputs: partition inputs, then buffer constants.
  std::vector<Halide::ImageParam> params;
  // The value behind each param, same order.
  std::vector<ValueId> param_values;
  // One Func per partition output, in Graph::outputs() order.
  std::vector<Halide::Func> outputs;
  // Every Func the lowering defined, in definition (topological) order.
  std::vector<Stage> stages;
};

// Builds the pipeline's Funcs for `partition`, each node by its op table
// row (op_table.h). A node the backend does not support (op_support.h) is a
// Failure naming it.
Result<Lowered> lower(const Graph& partition);

}  // namespace collage::halide
