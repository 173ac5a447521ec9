#include "collage/onnx/graph_bytes.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
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

// The metadata entry that carries Graph::model_edges, a JSON array of names.
constexpr const char* kModelEdgesKey = "collage.model_edges";

std::string serialized_with_model_edges(onnx::ModelProto model, const Graph& graph) {
  if (!graph.model_edges.empty()) {
    auto* entry = model.add_metadata_props();
    entry->set_key(kModelEdgesKey);
    entry->set_value(nlohmann::json(graph.model_edges).dump());
  }
  return serialized(model);
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

std::string graph_to_bytes(const Graph& graph) {
  return serialized_with_model_edges(export_onnx(graph), graph);
}

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
  packed.model = serialized_with_model_edges(export_onnx(graph, options), graph);
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
  std::shared_ptr<onnx::ModelProto> model = parse_onnx_model(bytes);
  Graph graph = import_onnx_model(model, options, weights_dir);
  for (const auto& entry : model->metadata_props()) {
    if (entry.key() != kModelEdgesKey) continue;
    try {
      for (const auto& name : nlohmann::json::parse(entry.value())) {
        graph.model_edges.insert(name.get<std::string>());
      }
    } catch (const nlohmann::json::exception& e) {
      throw Error(std::string("malformed ") + kModelEdgesKey + ": " + e.what());
    }
  }
  return graph;
}

}  // namespace collage
