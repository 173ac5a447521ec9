#include "collage/onnx/graph_bytes.h"

#include <fmt/format.h>

#include <set>
#include <string_view>

#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
#include "collage/onnx/exporter.h"
#include "collage/onnx/importer.h"

namespace collage {
namespace {

std::string serialized(const onnx::ModelProto& model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw Error("cannot serialize the graph as an ONNX model (over 2 GiB?)");
  }
  return bytes;
}

bool is_weight_file_name(const std::string& name) {
  if (name.size() < 20 || name[0] != 'w' || name[17] != '-') return false;
  for (std::size_t i = 1; i < name.size(); ++i) {
    const char c = name[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (i == 17 ? c != '-' : (i < 17 ? !hex : !(c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

std::string graph_to_bytes(const Graph& graph) { return serialized(export_onnx(graph)); }

std::string weight_file_name(const Tensor& weight) {
  const std::string_view bytes(static_cast<const char*>(weight.raw()), weight.byte_size());
  return fmt::format("w{:016x}-{}", fnv1a_64(bytes), weight.byte_size());
}

PackedGraph pack_graph(const Graph& graph, WeightNames& names) {
  PackedGraph packed;
  std::set<std::string> listed;
  ExportOptions options;
  options.external_file = [&](const Tensor& weight) -> std::optional<std::string> {
    if (weight.byte_size() < kSeparateWeightBytes) return std::nullopt;
    auto [it, inserted] = names.try_emplace({weight.raw(), weight.byte_size()});
    if (inserted) it->second = {weight_file_name(weight), weight};
    const std::string& name = it->second.first;
    if (listed.insert(name).second) packed.weights.emplace_back(name, weight);
    return name;
  };
  packed.model = serialized(export_onnx(graph, options));
  return packed;
}

std::vector<std::string> weight_files(const std::string& model_bytes) {
  std::shared_ptr<onnx::ModelProto> model = parse_onnx_model(model_bytes);
  std::set<std::string> files;
  for (const onnx::TensorProto& tensor : model->graph().initializer()) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (const auto& entry : tensor.external_data()) {
      if (entry.key() != "location") continue;
      if (!is_weight_file_name(entry.value())) {
        throw Error("weight " + quote_untrusted(tensor.name()) + " refers to " +
                    quote_untrusted(entry.value()) + ", not a weight file");
      }
      files.insert(entry.value());
    }
  }
  return {files.begin(), files.end()};
}

Graph graph_from_bytes(const std::string& bytes, const std::string& weights_dir) {
  ImportOptions options;
  options.canonicalize = false;
  options.float16_in_float32 = false;
  return import_onnx_model(parse_onnx_model(bytes), options, weights_dir);
}

}  // namespace collage
