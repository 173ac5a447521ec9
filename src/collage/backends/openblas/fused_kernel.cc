#include "collage/backends/openblas/fused_kernel.h"

#include <fmt/format.h>

#include "collage/backends/openblas/blas.h"
#include "collage/backends/openblas/head_op.h"
#include "collage/ir/error.h"

namespace collage::openblas {
namespace {

bool is_fusable_add(const Graph& graph, const Node& node) {
  if (node.op_type != "Add" || (!node.domain.empty() && node.domain != "ai.onnx") ||
      node.inputs.size() != 2 || node.outputs.size() != 1 || node.input(0) == kNoValue ||
      node.input(1) == kNoValue) {
    return false;
  }
  const TensorType& a = graph.type(node.input(0));
  const TensorType& b = graph.type(node.input(1));
  const TensorType& out = graph.type(node.outputs[0]);
  if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32 || out.dtype != DType::kFloat32) {
    return false;
  }
  return (a.shape == out.shape && broadcasts_to(b.shape, out.shape)) ||
         (b.shape == out.shape && broadcasts_to(a.shape, out.shape));
}

// The epilogue step of chain node `node`, which reads `current` (the result
// so far, of shape `output`).
Result<EpilogueStep> chain_step(const Graph& partition, const Node& node, ValueId current,
                                const Shape& output) {
  if (node.op_type == "Add") {
    if (!is_fusable_add(partition, node)) {
      return Failure{"Add " + node.name + " does not broadcast onto the result it follows"};
    }
    const bool first = node.input(0) == current;
    if (!first && node.input(1) != current) {
      return Failure{"Add " + node.name + " does not read the result it follows"};
    }
    if (partition.type(node.outputs[0]).shape != output) {
      return Failure{"Add " + node.name + " changes the shape of the result it follows"};
    }
    Result<Operand> operand = operand_for(partition, node.input(first ? 1 : 0));
    if (!operand) return Failure{"Add " + node.name + ": " + operand.error()};
    return EpilogueStep{Addend{std::move(*operand), 1.0f}};
  }
  if (node.input(0) != current) {
    return Failure{node.op_type + " " + node.name + " does not read the result it follows"};
  }
  Result<Activation> activation = activation_from_node(partition, node);
  if (!activation) return Failure{activation.error()};
  return EpilogueStep{*activation};
}

Result<std::unique_ptr<CoreCompute>> make_core(const Graph& partition, const HeadOp& head,
                                               int threads) {
  Result<Operand> lhs = operand_for(partition, head.lhs);
  if (!lhs) return Failure{lhs.error()};
  Result<Operand> rhs = operand_for(partition, head.rhs);
  if (!rhs) return Failure{rhs.error()};
  if (const auto* gemm = std::get_if<GemmGeometry>(&head.geometry)) {
    return std::unique_ptr<CoreCompute>(
        std::make_unique<BatchedGemm>(*gemm, std::move(*lhs), std::move(*rhs), threads));
  }
  return std::unique_ptr<CoreCompute>(std::make_unique<Im2colConv>(
      std::get<ConvGeometry>(head.geometry), std::move(*lhs), std::move(*rhs), threads));
}

}  // namespace

FusedKernel::FusedKernel(std::unique_ptr<CoreCompute> core, Epilogue epilogue,
                         std::vector<TensorType> input_types, TensorType output_type, int threads)
    : core_(std::move(core)),
      epilogue_(std::move(epilogue)),
      input_types_(std::move(input_types)),
      output_type_(std::move(output_type)),
      threads_(threads) {}

void FusedKernel::run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  if (inputs.size() != input_types_.size() || outputs.size() != 1) {
    throw Error(fmt::format("openblas kernel takes {} inputs and 1 output, got {} and {}",
                            input_types_.size(), inputs.size(), outputs.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].type() != input_types_[i] || inputs[i].empty()) {
      throw Error(fmt::format("openblas kernel input {} must be {}, got {}", i,
                              input_types_[i].to_string(), inputs[i].type().to_string()));
    }
  }
  if (outputs[0].type() != output_type_ || outputs[0].empty()) {
    throw Error(fmt::format("openblas kernel output must be {}, got {}", output_type_.to_string(),
                            outputs[0].type().to_string()));
  }
  set_threads(threads_);
  float* out = outputs[0].data<float>();
  core_->run(inputs, out);
  epilogue_.apply(inputs, out, threads_);
}

bool can_follow_head(const Graph& graph, const Node& node) {
  if (node.op_type == "Add") return is_fusable_add(graph, node);
  return activation_from_node(graph, node).ok();
}

Result<std::unique_ptr<Kernel>> compile_partition(const Graph& partition, int threads) {
  threads = std::max(threads, 1);
  if (partition.num_nodes() == 0) return Failure{"the partition has no nodes"};
  if (partition.outputs().size() != 1) {
    return Failure{fmt::format("a partition of the openblas backend has one output, not {}",
                               partition.outputs().size())};
  }
  const Node& head_node = partition.node(0);
  Result<HeadOp> head = analyze_head_op(partition, head_node);
  if (!head) return Failure{head.error()};

  std::vector<EpilogueStep> steps;
  if (head->addend != kNoValue) {
    Result<Operand> addend = operand_for(partition, head->addend);
    if (!addend) return Failure{addend.error()};
    addend->shape = head->addend_shape;
    steps.emplace_back(Addend{std::move(*addend), head->addend_scale});
  }

  const std::vector<std::vector<NodeId>> consumers = partition.consumers();
  ValueId current = head_node.outputs[0];
  for (std::size_t i = 1; i < partition.num_nodes(); ++i) {
    const Node& node = partition.node(static_cast<NodeId>(i));
    const std::string& name = partition.value(current).name;
    if (partition.is_output(current)) {
      return Failure{"intermediate result '" + name + "' is also a partition output"};
    }
    if (consumers[static_cast<std::size_t>(current)] !=
        std::vector<NodeId>{static_cast<NodeId>(i)}) {
      return Failure{"'" + name + "' must be read by the next node of the chain only"};
    }
    if (node.outputs.size() != 1) {
      return Failure{node.op_type + " " + node.name + " cannot be fused after " +
                     head_node.op_type};
    }
    Result<EpilogueStep> step = chain_step(partition, node, current, head->output);
    if (!step) return Failure{step.error()};
    steps.push_back(std::move(*step));
    current = node.outputs[0];
  }
  if (partition.outputs()[0] != current) {
    return Failure{"the partition output is not the end of its chain"};
  }

  Result<Epilogue> epilogue = Epilogue::plan(head->output, std::move(steps));
  if (!epilogue) return Failure{epilogue.error()};
  Result<std::unique_ptr<CoreCompute>> core = make_core(partition, *head, threads);
  if (!core) return Failure{core.error()};

  std::vector<TensorType> input_types;
  for (ValueId input : partition.inputs()) input_types.push_back(partition.type(input));
  return std::unique_ptr<Kernel>(
      std::make_unique<FusedKernel>(std::move(*core), std::move(*epilogue), std::move(input_types),
                                    partition.type(current), threads));
}

}  // namespace collage::openblas
