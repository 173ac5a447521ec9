// A Graph as the bytes of an ONNX model, and back as the same Graph: how a
// partition travels to a `collage worker` on another machine
// (session/fleet.h). The graph is read back as it was written (no
// canonicalization, no graph optimization), so the partition a worker
// measures is the one the tuner asked for. A partition's model edges
// (Graph::model_edges) travel with it, as the model's metadata.
//
// Packed, a graph's large weights travel apart from it, each as a file
// named by its content: the candidates of one model share most of their
// weights (a ResNet-18's 446 candidates hold 739 MB of weights, 45 MB of
// them distinct), so each is sent, and fetched by a worker, once.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

// The whole graph, weights included.
std::string graph_to_bytes(const Graph& graph);

// Weights of at least this many bytes travel apart when packed.
inline constexpr std::size_t kSeparateWeightBytes = 4096;

struct PackedGraph {
  // The ONNX model; each large weight is external data, the whole of a file
  // named by weight_file_name().
  std::string model;
  // File name -> the weight (sharing the graph's buffer).
  std::vector<std::pair<std::string, Tensor>> weights;
};

// Remembers the file names of weights already hashed, by buffer: the
// candidates of one model share their weights' buffers. The weight is kept
// with its name, so that its buffer's address is not reused meanwhile.
using WeightNames = std::map<std::pair<const void*, std::size_t>, std::pair<std::string, Tensor>>;

PackedGraph pack_graph(const Graph& graph, WeightNames& names);

// "w" + 16 hex digits of the content's hash + "-" + its byte count.
std::string weight_file_name(const Tensor& weight);

// The weight files a model refers to. Throws Error for bytes that are not a
// model, or a file name weight_file_name() does not make.
std::vector<std::string> weight_files(const std::string& model_bytes);

// Reads a graph (packed or whole); the weight files are read from
// `weights_dir`. Throws Error for bytes that are not such a model, and for a
// missing or short weight file.
Graph graph_from_bytes(const std::string& bytes, const std::string& weights_dir = ".");

}  // namespace collage
