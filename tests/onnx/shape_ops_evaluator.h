// A small OpEvaluator for tests: the integer shape arithmetic that exported
// models do (Gather, Unsqueeze, Squeeze, Concat, Add, Mul) and
// ConstantOfShape, so that constant folding can be tested independently of
// the native kernels. It counts its evaluations.
#pragma once

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "collage/ir/error.h"
#include "collage/ir/evaluator.h"

namespace collage::testing {

class ShapeOpsEvaluator : public OpEvaluator {
 public:
  bool can_evaluate(const Graph& graph, const Node& node) const override {
    static const std::set<std::string> kOps = {"Gather", "Unsqueeze", "Squeeze",        "Concat",
                                               "Add",    "Mul",       "ConstantOfShape"};
    if (kOps.count(node.op_type) == 0) return false;
    if (node.op_type == "ConstantOfShape") return true;
    DType dtype = graph.type(node.inputs[0]).dtype;
    if (node.op_type == "Add" || node.op_type == "Mul") {
      return dtype == DType::kInt64 || dtype == DType::kFloat32;
    }
    return dtype == DType::kInt64;
  }

  std::vector<Tensor> evaluate(const Graph& graph, const Node& node,
                               std::span<const Tensor> inputs) const override {
    ++evaluations;
    Tensor out = Tensor::allocate(graph.type(node.outputs[0]));
    if (node.op_type == "Gather") {
      const Tensor& data = inputs[0];
      const Tensor& indices = inputs[1];
      for (std::int64_t i = 0; i < indices.numel(); ++i) {
        std::int64_t index = indices.int_at(i);
        if (index < 0) index += data.numel();
        if (index < 0 || index >= data.numel()) throw Error("index out of range");
        out.data<std::int64_t>()[i] = data.int_at(index);
      }
    } else if (node.op_type == "Unsqueeze" || node.op_type == "Squeeze") {
      std::memcpy(out.raw(), inputs[0].raw(), out.byte_size());
    } else if (node.op_type == "Concat") {
      std::int64_t at = 0;
      for (const Tensor& part : inputs) {
        for (std::int64_t i = 0; i < part.numel(); ++i)
          out.data<std::int64_t>()[at++] = part.int_at(i);
      }
    } else if (node.op_type == "Add" || node.op_type == "Mul") {
      binary(node.op_type == "Add", inputs[0], inputs[1], out);
    } else if (node.op_type == "ConstantOfShape") {
      std::memset(out.raw(), 0, out.byte_size());
      if (node.attributes.has("value")) {
        const Tensor& value = node.attributes.get_tensor("value");
        for (std::int64_t i = 0; i < out.numel(); ++i) {
          std::memcpy(static_cast<char*>(out.raw()) + i * dtype_size(out.dtype()), value.raw(),
                      dtype_size(out.dtype()));
        }
      }
    }
    return {out};
  }

  mutable int evaluations = 0;

 private:
  // Same shapes, or one side a single element.
  static void binary(bool add, const Tensor& a, const Tensor& b, Tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      std::int64_t ia = a.numel() == 1 ? 0 : i;
      std::int64_t ib = b.numel() == 1 ? 0 : i;
      if (out.dtype() == DType::kFloat32) {
        float x = a.data<float>()[ia];
        float y = b.data<float>()[ib];
        out.data<float>()[i] = add ? x + y : x * y;
      } else {
        std::int64_t x = a.int_at(ia);
        std::int64_t y = b.int_at(ib);
        out.data<std::int64_t>()[i] = add ? x + y : x * y;
      }
    }
  }
};

}  // namespace collage::testing
