// OpTable: one row per op family the halide backend lowers.
//
// A row names the ONNX op types of a family, which of their inputs are
// parameters compiled into the kernel (bounds, axes, shapes, paddings)
// rather than float data, the check a node of the family must pass beyond
// float32 data and static shapes (op_support.h), the Lowerer method that
// defines its outputs' Funcs (lowerer.h), and what the check requires, as
// `collage backends` prints it. The support predicate, that description and
// the lowering's dispatch all read these rows, so an op is added in one
// place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::halide {

class Lowerer;

// The inputs of a node that are parameters: read at compile time, so they
// need not be float32 data.
enum class ParameterInputs {
  kNone,
  // Input 1 (Reshape's shape, a Reduce's or Squeeze's axes, Split's sizes).
  kSecond,
  // Every input after the first (Clip's bounds, Slice's starts..steps,
  // Pad's pads and fill).
  kAllButFirst,
};

struct OpRow {
  std::vector<std::string> op_types;
  ParameterInputs parameters = ParameterInputs::kNone;
  // Whether the backend runs `node`, given float32 data and static shapes.
  // May throw Error for an attribute of the wrong kind (not supported).
  bool (*check)(const Graph& graph, const Node& node) = nullptr;
  // Defines the Funcs of the node's outputs.
  void (Lowerer::*lower)(const Node& node) = nullptr;
  // What check requires, for `collage backends`; empty when nothing worth
  // saying.
  std::string_view conditions;
};

// Every family.
const std::vector<OpRow>& op_table();

// The row of `op_type`; nullptr when the backend has no lowering for it.
const OpRow* find_op_row(std::string_view op_type);

// Whether input `i` of a node of `row` is a parameter.
bool is_parameter_input(const OpRow& row, std::size_t i);

}  // namespace collage::halide
