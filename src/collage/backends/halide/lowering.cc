// The Lowerer's core: values, pipeline arguments, stages, and the dispatch
// of each node to its op table row's lowering.
#include "collage/backends/halide/lowering.h"

#include <fmt/format.h>

#include "collage/backends/halide/lowerer.h"
#include "collage/backends/halide/op_support.h"
#include "collage/backends/halide/op_table.h"
#include "collage/ir/error.h"

namespace collage::halide {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Declares a pipeline argument (input or output) dense row-major with exact
// bounds, so the compiler knows every extent and stride: a loop over fused
// dimensions then splits its index by constants, not by divisions by
// run-time extents. The same numbers are the autoschedulers' estimates.
void set_dense_layout(Halide::OutputImageParam buffer, const Shape& shape) {
  std::int64_t stride = 1;
  for (int h = 0; h < static_cast<int>(shape.size()); ++h) {
    const std::int64_t extent = shape[shape.size() - 1 - static_cast<std::size_t>(h)];
    buffer.dim(h)
        .set_bounds(0, static_cast<int>(extent))
        .set_stride(static_cast<int>(stride))
        .set_estimate(0, static_cast<int>(extent));
    stride *= extent;
  }
}

}  // namespace

Lowered Lowerer::run() {
  for (ValueId id : graph_.inputs()) add_param(id);
  for (const Node& node : graph_.nodes()) lower_node(node);
  Lowered lowered;
  std::vector<bool> taken(graph_.num_values(), false);
  for (ValueId id : graph_.outputs()) {
    // An output must be its own Func: copy a pass-through input or
    // constant, or a value listed twice.
    const bool own = graph_.value(id).producer != kNoNode && !taken[static_cast<std::size_t>(id)];
    taken[static_cast<std::size_t>(id)] = true;
    Func out = own ? func(id) : copy_of(id);
    stage_of(out).is_output = true;
    set_dense_layout(out.output_buffer(), shape(id));
    lowered.outputs.push_back(out);
  }
  lowered.params = params_;
  lowered.param_values = param_values_;
  lowered.stages = stages_;
  return lowered;
}

void Lowerer::lower_node(const Node& node) {
  const OpRow* row = find_op_row(node.op_type);
  if (row == nullptr) {
    throw Error(fmt::format("no Halide lowering for {}", node.op_type), {.node = node.name});
  }
  (this->*row->lower)(node);
}

// ---- values

Func& Lowerer::func(ValueId id) {
  Func& f = funcs_[static_cast<std::size_t>(id)];
  if (!f.defined()) {
    const Value& value = graph_.value(id);
    if (!value.is_constant()) {
      throw Error(fmt::format("value '{}' is read before it is defined", value.name));
    }
    define_constant(id);
  }
  return f;
}

Expr Lowerer::at_or(ValueId id, const std::vector<Expr>& index, const std::vector<bool>& checked,
                    Expr outside) {
  // `likely` marks the inside as the common case, as Halide's boundary
  // conditions do: the loops are split into a steady state without the
  // checks and thin borders with them.
  std::vector<Expr> clamped = index;
  Expr inside;
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (!checked[i]) continue;
    const Expr extent = static_cast<int>(shape(id)[i]);
    const Expr here = index[i] >= 0 && index[i] < extent;
    inside = inside.defined() ? (inside && here) : here;
    clamped[i] = Halide::clamp(Halide::likely(index[i]), 0, extent - 1);
  }
  if (!inside.defined()) return at(id, index);
  return Halide::select(Halide::likely(inside), at(id, clamped), outside);
}

Expr Lowerer::broadcast_at(ValueId id, const std::vector<Var>& out) {
  const int r = rank(id);
  const int offset = static_cast<int>(out.size()) - r;
  std::vector<Expr> index;
  for (int i = 0; i < r; ++i) {
    index.push_back(shape(id)[static_cast<std::size_t>(i)] == 1 ? Expr(0) : Expr(out[i + offset]));
  }
  return at(id, index);
}

std::vector<Var> Lowerer::vars(std::size_t rank) {
  std::vector<Var> v;
  for (std::size_t i = 0; i < rank; ++i) v.emplace_back(fmt::format("d{}", i));
  return v;
}

// ---- stages

Stage& Lowerer::stage_of(const Func& f) {
  for (Stage& stage : stages_) {
    if (stage.func.name() == f.name()) return stage;
  }
  throw Error("internal: a Func without a stage");
}

Func Lowerer::new_func(const std::string& hint, const Shape& shape, bool materialize) {
  Func f(fmt::format("{}_{}", hint, stages_.size()));
  stages_.push_back(Stage{f, shape, materialize, false});
  return f;
}

Func Lowerer::pure(const std::string& hint, const Shape& shape, const Body& body,
                   bool materialize) {
  Func f = new_func(hint, shape, materialize);
  const std::vector<Var> v = vars(shape.size());
  f(reversed(v)) = body(v);
  return f;
}

void Lowerer::define(ValueId id, const Body& body, const std::string& hint) {
  funcs_[static_cast<std::size_t>(id)] = pure(hint, shape(id), body);
}

Func Lowerer::reduce(const std::string& hint, const Shape& out_shape, Halide::RDom domain,
                     const Term& term, Combine combine, Expr init) {
  Func f = new_func(hint, out_shape, /*materialize=*/true);
  const std::vector<Var> v = vars(out_shape.size());
  f(reversed(v)) = init;
  const Expr t = term(v, domain);
  switch (combine) {
    case Combine::kSum:
      f(reversed(v)) += t;
      break;
    case Combine::kMax:
      f(reversed(v)) = Halide::max(f(reversed(v)), t);
      break;
    case Combine::kMin:
      f(reversed(v)) = Halide::min(f(reversed(v)), t);
      break;
  }
  return f;
}

// ---- pipeline arguments

void Lowerer::add_param(ValueId id) {
  const Shape& s = shape(id);
  Halide::ImageParam param(Halide::Float(32), static_cast<int>(s.size()),
                           fmt::format("p{}", params_.size()));
  set_dense_layout(param, s);
  params_.push_back(param);
  param_values_.push_back(id);
  funcs_[static_cast<std::size_t>(id)] =
      pure("in", s, [&](const std::vector<Var>& v) { return param(reversed(v)); });
}

void Lowerer::define_constant(ValueId id) {
  const Tensor& tensor = *graph_.value(id).constant;
  if (tensor.dtype() != DType::kFloat32) {
    throw Error(fmt::format("constant '{}' of type {} is read as data", graph_.value(id).name,
                            dtype_name(tensor.dtype())));
  }
  if (tensor.numel() == 1) {
    const float value = tensor.data<float>()[0];
    define(
        id, [value](const std::vector<Var>&) { return Expr(value); }, "const");
  } else {
    add_param(id);
  }
}

Func Lowerer::copy_of(ValueId id) {
  return pure("copy", shape(id), [&](const std::vector<Var>& v) { return at(id, exprs(v)); });
}

void Lowerer::materialize(ValueId id) {
  if (graph_.value(id).producer != kNoNode) stage_of(func(id)).materialize = true;
}

Result<Lowered> lower(const Graph& partition) {
  for (const Node& node : partition.nodes()) {
    if (!supports_node(partition, node)) {
      return Failure{fmt::format("Halide cannot run {} '{}'", node.op_type, node.name)};
    }
  }
  try {
    return Lowerer(partition).run();
  } catch (const Halide::Error& error) {
    return Failure{fmt::format("Halide rejected the region: {}", error.what())};
  } catch (const Error& error) {
    return Failure{error.what()};
  }
}

}  // namespace collage::halide
