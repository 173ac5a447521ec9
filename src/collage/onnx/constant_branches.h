// If nodes whose condition is a constant, replaced by the branch they take
// (issue: control flow). A model often decides at export time what a
// runtime If would decide: a flag stored as a weight, a Constant node. The
// branch's nodes then stand in the graph in the If's place, its weights
// join the graph's, and its outputs take the If's output names, so the rest
// of the pipeline sees an ordinary graph. Branches nest: an If inside the
// taken branch is inlined in turn when its own condition is constant.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>

namespace collage {

// `model` with every If whose condition is an initializer or a Constant
// node's output (a one-element bool or integer tensor) replaced by its taken
// branch; `model` itself when it has none. Throws Error naming the node for
// a branch whose outputs do not match the If's.
std::shared_ptr<const onnx::ModelProto> with_constant_branches_inlined(
    std::shared_ptr<const onnx::ModelProto> model, const std::string& model_dir);

}  // namespace collage
