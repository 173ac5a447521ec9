// Shape arithmetic: the ops exported models compute parameters with, folded
// at import.
//
// Exporters write the parameters of Pad, Slice, Expand, Tile, Resize,
// ConstantOfShape and Range as sub-graphs over Shape: PyTorch pads a window
// partition to `(window - H % window) % window`, builds attention masks by
// slice assignment (ScatterND into a ConstantOfShape), and so on. Once the
// input shapes are static these sub-graphs are constants, and folding them is
// the only way the shapes downstream become known (ONNX's data propagation
// follows a few ops only). Folding borrows the kernels of the evaluator the
// importer is given; the ops here are the rest of such arithmetic, which no
// backend need run because it never survives the import.
#pragma once

#include "collage/ir/evaluator.h"

namespace collage {

// Evaluates what `kernels` can, and the shape arithmetic ops it lacks (Mod,
// ScatterND, ScatterElements) on their own. `kernels` may be null: then only those ops fold.
class ShapeArithmeticEvaluator : public OpEvaluator {
 public:
  explicit ShapeArithmeticEvaluator(const OpEvaluator* kernels) : kernels_(kernels) {}

  bool can_evaluate(const Graph& graph, const Node& node) const override;
  std::vector<Tensor> evaluate(const Graph& graph, const Node& node,
                               std::span<const Tensor> inputs) const override;

 private:
  const OpEvaluator* kernels_;
};

}  // namespace collage
