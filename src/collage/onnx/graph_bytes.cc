#include "collage/onnx/graph_bytes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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

// The metadata entry that carries Graph::model_edges: their positions among
// the graph's inputs and outputs, "i0,o1" (positions, not names: a name need
// not be valid UTF-8).
constexpr const char* kModelEdgesKey = "collage.model_edges";

std::string serialized_with_model_edges(onnx::ModelProto model, const Graph& graph) {
  const std::vector<std::string> positions = model_edge_positions(graph);
  if (!positions.empty()) {
    auto* entry = model.add_metadata_props();
    entry->set_key(kModelEdgesKey);
    entry->set_value(fmt::format("{}", fmt::join(positions, ",")));
  }
  return serialized(model);
}

// Reads the positions serialized_with_model_edges wrote into `graph`.
void read_model_edges(const std::string& text, Graph& graph) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string position = text.substr(start, end - start);
    const std::vector<ValueId>* edges = nullptr;
    if (!position.empty() && position[0] == 'i') edges = &graph.inputs();
    if (!position.empty() && position[0] == 'o') edges = &graph.outputs();
    std::size_t index = 0;
    const bool digits = position.size() > 1 && position.size() <= 10 &&
                        std::all_of(position.begin() + 1, position.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
    if (digits) index = std::stoul(position.substr(1));
    if (edges == nullptr || !digits || index >= edges->size()) {
      throw Error(std::string("malformed ") + kModelEdgesKey + " entry " +
                  quote_untrusted(position) + ": not the position of an input or output");
    }
    graph.model_edges.insert(graph.value((*edges)[index]).name);
    start = end + 1;
  }
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
    if (entry.key() == kModelEdgesKey) read_model_edges(entry.value(), graph);
  }
  return graph;
}

}  // namespace collage
