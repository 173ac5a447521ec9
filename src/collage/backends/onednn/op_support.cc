#include "collage/backends/onednn/op_support.h"

#include <fmt/format.h>

#include "collage/backends/onednn/binary.h"
#include "collage/backends/onednn/convolution.h"
#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/matmul.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/normalization.h"
#include "collage/backends/onednn/pooling.h"
#include "collage/backends/onednn/softmax.h"
#include "collage/ir/error.h"

namespace collage::onednn {
namespace {

template <typename T>
std::optional<std::string> reason(const Result<T>& result) {
  if (result) return std::nullopt;
  return result.error();
}

std::optional<std::string> family_reason(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  if (is_activation(op)) return reason(eltwise_steps(graph, node));
  if (binary_algorithm(op)) return reason(binary_spec(graph, node));
  if (op == "Conv" || op == "ConvTranspose") return reason(convolution_spec(graph, node));
  if (op == "MatMul" || op == "Gemm") return reason(matmul_spec(graph, node));
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalMaxPool" ||
      op == "GlobalAveragePool") {
    return reason(pooling_spec(graph, node));
  }
  if (op == "BatchNormalization") return reason(batch_norm_spec(graph, node));
  if (op == "LayerNormalization") return reason(layer_norm_spec(graph, node));
  if (op == "Softmax" || op == "LogSoftmax") return reason(softmax_spec(graph, node));
  return fmt::format("oneDNN has no primitive for {}", op);
}

}  // namespace

std::optional<std::string> why_unsupported(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node)) return fmt::format("{} is not in the ONNX domain", node.op_type);
  try {
    return family_reason(graph, node);
  } catch (const Error& e) {
    // An attribute of an unexpected kind: not a node this backend runs.
    return fmt::format("{}: {}", node.op_type, e.what());
  }
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> ops = {"Conv",
                                  "ConvTranspose",
                                  "MatMul",
                                  "Gemm",
                                  "MaxPool",
                                  "AveragePool",
                                  "GlobalMaxPool",
                                  "GlobalAveragePool",
                                  "BatchNormalization",
                                  "LayerNormalization",
                                  "Softmax",
                                  "LogSoftmax"};
  for (const std::string& op : binary_ops()) ops.push_back(op);
  for (const std::string& op : activation_ops()) ops.push_back(op);
  return ops;
}

}  // namespace collage::onednn
