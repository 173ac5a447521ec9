// Lowerer: builds one region's Halide Funcs, node by node (see lowering.h).
//
// The core (lowering.cc) keeps one Func per value, declares the pipeline's
// arguments and records a Stage for every Func it defines; each op family's
// lowering (lowering_elementwise.cc, lowering_window.cc,
// lowering_reduction.cc, lowering_norm.cc, lowering_movement.cc) defines its
// outputs' Funcs through the helpers below. The op table (op_table.h) names
// the method that lowers each op.
#pragma once

#include <Halide.h>

#include <functional>
#include <string>
#include <vector>

#include "collage/backends/halide/lowering.h"
#include "collage/ir/graph.h"

namespace collage::halide {

class Lowerer {
 public:
  explicit Lowerer(const Graph& graph) : graph_(graph), funcs_(graph.num_values()) {}

  // Lowers every node of the graph, in order. Throws Error (or
  // Halide::Error) for a node it cannot lower.
  Lowered run();

  // The op table's lowering entries: each defines the Funcs of a node's outputs.
  void lower_unary(const Node& node);
  void lower_binary(const Node& node);
  void lower_conv(const Node& node);
  void lower_pool(const Node& node);
  void lower_global_pool(const Node& node);
  void lower_reduce(const Node& node);
  void lower_matmul(const Node& node);
  void lower_gemm(const Node& node);
  void lower_softmax(const Node& node);
  void lower_layer_norm(const Node& node);
  void lower_batch_norm(const Node& node);
  void lower_reshape(const Node& node);
  void lower_transpose(const Node& node);
  void lower_concat(const Node& node);
  void lower_split(const Node& node);
  void lower_slice(const Node& node);
  void lower_pad(const Node& node);

 private:
  using Body = std::function<Halide::Expr(const std::vector<Halide::Var>&)>;
  using Term = std::function<Halide::Expr(const std::vector<Halide::Var>&, const Halide::RDom&)>;
  // How a reduction accumulates its terms.
  enum class Combine { kSum, kMax, kMin };

  void lower_node(const Node& node);

  // ---- values

  const Shape& shape(ValueId id) const { return graph_.type(id).shape; }
  int rank(ValueId id) const { return static_cast<int>(shape(id).size()); }

  // The Func of value `id`; a constant's is defined on first use.
  Halide::Func& func(ValueId id);

  // Reads value `id` at an ONNX-ordered index.
  Halide::Expr at(ValueId id, const std::vector<Halide::Expr>& index) {
    return call(func(id), index);
  }

  // Calls `f` at an ONNX-ordered index.
  static Halide::Expr call(const Halide::Func& f, const std::vector<Halide::Expr>& index) {
    return f(std::vector<Halide::Expr>(index.rbegin(), index.rend()));
  }

  // Reads `id` at `index`, or `outside` where the index leaves the tensor.
  // Only the axes in `checked` can leave it.
  Halide::Expr at_or(ValueId id, const std::vector<Halide::Expr>& index,
                     const std::vector<bool>& checked, Halide::Expr outside);

  // Reads `id` broadcast to an output indexed by `out` (numpy rules).
  Halide::Expr broadcast_at(ValueId id, const std::vector<Halide::Var>& out);

  static std::vector<Halide::Var> vars(std::size_t rank);
  static std::vector<Halide::Var> reversed(const std::vector<Halide::Var>& v) {
    return {v.rbegin(), v.rend()};
  }
  static std::vector<Halide::Expr> exprs(const std::vector<Halide::Var>& v) {
    return {v.begin(), v.end()};
  }

  Stage& stage_of(const Halide::Func& f);
  Halide::Func new_func(const std::string& hint, const Shape& shape, bool materialize);

  // A pure Func of `shape` defined as `body` over its ONNX-ordered index.
  Halide::Func pure(const std::string& hint, const Shape& shape, const Body& body,
                    bool materialize = false);

  // Defines value `id` (an op output) as `body` over its ONNX-ordered index.
  void define(ValueId id, const Body& body, const std::string& hint);

  // A sum-like reduction: init, then `term` accumulated over `domain`.
  Halide::Func reduce(const std::string& hint, const Shape& out_shape, Halide::RDom domain,
                      const Term& term, Combine combine, Halide::Expr init);

  void add_param(ValueId id);
  void define_constant(ValueId id);
  Halide::Func copy_of(ValueId id);

  // Reading a parameter or a constant costs nothing: only computed values
  // are materialized.
  void materialize(ValueId id);

  const Graph& graph_;
  std::vector<Halide::Func> funcs_;
  std::vector<Halide::ImageParam> params_;
  std::vector<ValueId> param_values_;
  std::vector<Stage> stages_;
};

}  // namespace collage::halide
