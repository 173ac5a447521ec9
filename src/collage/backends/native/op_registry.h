// The native op kernels, by ONNX op type (and domain, for the com.microsoft
// ops of ONNX Runtime's quantized models).
//
// Each entry runs one node on plain row-major tensors. The native backend,
// the reference executor and constant folding all go through this table, so
// an op is implemented exactly once. Entries are grouped by the file that
// implements them: compute_ops() (convolution, GEMM, pooling, normalization,
// reductions, resize, RNN/GRU/LSTM) and tensor_ops() (elementwise math, broadcasting, shape
// and indexing ops), and control_flow_ops() (If, Loop, Scan).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "collage/ir/error.h"
#include "collage/ir/graph.h"

namespace collage::native {

// Runs `node` of `graph` (the graph gives the opset, whose version changes
// some ops' semantics, and the static types). `inputs` has one tensor per
// node input (an empty Tensor for an omitted optional input); `outputs` are
// preallocated with the graph's types for the node's outputs. `threads` is
// the most threads the op may use (OpenMP).
using OpRun = void (*)(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                       std::span<Tensor> outputs, int threads);

// Whether the kernel handles this node (dtypes, attributes, ranks). Ops whose
// entry says no are unsupported for that node, not wrong.
using OpCheck = bool (*)(const Graph& graph, const Node& node);

struct OpEntry {
  std::string_view op_type;
  OpRun run;
  OpCheck check;
};

std::span<const OpEntry> compute_ops();
std::span<const OpEntry> tensor_ops();
// If, Loop and Scan, which run their bodies with the entries above.
std::span<const OpEntry> control_flow_ops();
// Runtime-shaped regions (ir/runtime_shapes.h), which run their bodies
// node by node with the entries above, and the ops whose output sizes follow
// their data (NonZero, Compress, NonMaxSuppression, Unique).
std::span<const OpEntry> runtime_shape_ops();

// Whether the node has an entry whose check accepts it (a check that throws
// on a malformed attribute counts as a refusal).
bool node_supported(const Graph& graph, const Node& node);

// Whether every node of `graph` is node_supported.
bool graph_supported(const Graph& graph);

// Throws Error naming `node` once a loop has run `done` iterations without
// stopping: after 2^24 it is taken never to stop (import refuses the ones
// that plainly cannot). Compiled Loops and those in runtime-shaped regions
// share it.
inline void check_loop_iterations(const Node& node, std::int64_t done) {
  constexpr std::int64_t kMaxLoopIterations = std::int64_t{1} << 24;
  if (done < kMaxLoopIterations) return;
  throw Error(fmt::format("the loop did not stop after {} iterations: its condition never "
                          "turned false",
                          done),
              {.node = node.name});
}

// Runs `graph` node by node on `inputs` (one per graph input): each node's
// outputs are what `run_node` computes from its inputs (an empty Tensor for
// an omitted one). Returns the graph's outputs. Control flow's op entries
// and runtime-shaped regions run their bodies so.
using NodeRun =
    std::function<std::vector<Tensor>(const Node& node, std::span<const Tensor> inputs)>;
std::vector<Tensor> run_node_by_node(const Graph& graph, std::span<const Tensor> inputs,
                                     const NodeRun& run_node);

// Runs body `index` of a control-flow node (in bodies(node)'s order: If's
// then, else; Loop's or Scan's body) on `inputs`, of the body's input
// types, into `outputs`, preallocated with its output types.
using BodyRun = std::function<void(std::size_t index, std::span<const Tensor> inputs,
                                   std::span<Tensor> outputs)>;

// Runs a control-flow node (whose entry's check accepted it) with its
// bodies run by `run_body`: what a compiled kernel uses to run bodies it
// compiled once, where the op entry runs them node by node.
void run_control_flow(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, const BodyRun& run_body);

// The entry for `op_type`, or nullptr: an op of the default ONNX domain by
// its name ("Conv"), one of another domain by domain and name
// ("com.microsoft.QLinearAdd").
const OpEntry* find_op(std::string_view op_type);
// The entry for the node's op in its domain, or nullptr.
const OpEntry* find_op(const Node& node);

}  // namespace collage::native
