#include "collage/onnx/constant_branches.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "collage/ir/error.h"
#include "collage/onnx/tensor_proto.h"

namespace collage {
namespace {

// Branches nest; a model deeper than this is not a model people ship.
constexpr int kMaxInliningRounds = 64;

// The value of a one-element bool or integer tensor, as a truth value.
std::optional<bool> truth_of(const onnx::TensorProto& proto, const std::string& model_dir) {
  std::int64_t elements = 1;
  for (std::int64_t d : proto.dims()) elements *= d;
  if (elements != 1) return std::nullopt;
  try {
    Tensor tensor = tensor_from_proto(proto, model_dir);
    if (tensor.dtype() == DType::kFloat32 || tensor.dtype() == DType::kFloat64 ||
        tensor.dtype() == DType::kFloat16) {
      return std::nullopt;
    }
    return tensor.int_at(0) != 0;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The constant condition of `node` (an If), when its input is a weight or
// a Constant node's output.
std::optional<bool> constant_condition(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                                       const std::string& model_dir) {
  if (node.input_size() < 1 || node.input(0).empty()) return std::nullopt;
  const std::string& name = node.input(0);
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.name() == name) return truth_of(init, model_dir);
  }
  for (const onnx::NodeProto& producer : graph.node()) {
    if (producer.op_type() != "Constant" || producer.output_size() != 1 ||
        producer.output(0) != name) {
      continue;
    }
    for (const onnx::AttributeProto& a : producer.attribute()) {
      if (a.name() == "value" && a.has_t()) return truth_of(a.t(), model_dir);
    }
  }
  return std::nullopt;
}

const onnx::GraphProto* branch_of(const onnx::NodeProto& node, bool taken) {
  const char* wanted = taken ? "then_branch" : "else_branch";
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == wanted && a.has_g()) return &a.g();
  }
  return nullptr;
}

// Replaces graph.node(index), an If taking `branch`, by the branch's nodes.
void inline_branch(onnx::GraphProto& graph, int index, const onnx::GraphProto& branch) {
  const onnx::NodeProto node = graph.node(index);
  if (branch.output_size() != node.output_size()) {
    throw Error(fmt::format("its taken branch has {} outputs where the If has {}",
                            branch.output_size(), node.output_size()),
                {.node = node.name().empty() ? "If -> " + node.output(0) : node.name()});
  }
  // The branch's outputs take the If's names.
  std::map<std::string, std::string> renamed;
  std::set<std::string> produced;
  for (const onnx::NodeProto& inner : branch.node()) {
    for (const std::string& out : inner.output()) produced.insert(out);
  }
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < branch.output_size(); ++i) {
    const std::string& from = branch.output(i).name();
    const std::string& to = node.output(i);
    if (to.empty()) continue;
    if (produced.count(from) != 0 && renamed.count(from) == 0) {
      renamed[from] = to;
    } else {
      // An outer value, a weight of the branch, or a value given out twice:
      // passed on by an Identity.
      onnx::NodeProto identity;
      identity.set_op_type("Identity");
      identity.set_name(node.name() + "/" + to);
      identity.add_input(from);
      identity.add_output(to);
      nodes.push_back(std::move(identity));
    }
  }
  std::vector<onnx::NodeProto> inlined;
  for (const onnx::NodeProto& inner : branch.node()) {
    onnx::NodeProto copy = inner;
    for (std::string& in : *copy.mutable_input()) {
      if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
    }
    for (std::string& out : *copy.mutable_output()) {
      if (auto it = renamed.find(out); it != renamed.end()) out = it->second;
    }
    if (!copy.name().empty()) copy.set_name(node.name() + "/" + copy.name());
    inlined.push_back(std::move(copy));
  }
  inlined.insert(inlined.end(), nodes.begin(), nodes.end());
  for (const onnx::TensorProto& init : branch.initializer()) *graph.add_initializer() = init;
  for (const onnx::ValueInfoProto& info : branch.value_info()) *graph.add_value_info() = info;

  // The node list with the If replaced, in place, by the branch's nodes.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> all;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (i != index) {
      *all.Add() = graph.node(i);
      continue;
    }
    for (onnx::NodeProto& n : inlined) *all.Add() = std::move(n);
  }
  graph.mutable_node()->Swap(&all);
}

}  // namespace

std::shared_ptr<const onnx::ModelProto> with_constant_branches_inlined(
    std::shared_ptr<const onnx::ModelProto> model, const std::string& model_dir) {
  std::shared_ptr<onnx::ModelProto> copy;
  for (int round = 0; round < kMaxInliningRounds; ++round) {
    const onnx::GraphProto& graph = copy ? copy->graph() : model->graph();
    int found = -1;
    std::optional<bool> taken;
    for (int i = 0; i < graph.node_size() && found < 0; ++i) {
      const onnx::NodeProto& node = graph.node(i);
      if (node.op_type() != "If" || !(node.domain().empty() || node.domain() == "ai.onnx")) {
        continue;
      }
      taken = constant_condition(graph, node, model_dir);
      if (taken && branch_of(node, *taken) != nullptr) found = i;
    }
    if (found < 0) break;
    if (!copy) copy = std::make_shared<onnx::ModelProto>(*model);
    onnx::GraphProto& target = *copy->mutable_graph();
    const onnx::GraphProto branch = *branch_of(target.node(found), *taken);
    inline_branch(target, found, branch);
  }
  if (copy) return copy;
  return model;
}

}  // namespace collage
