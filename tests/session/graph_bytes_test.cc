// A partition sent to a fleet worker as ONNX bytes must come back as the
// same graph: every candidate the search makes of the zoo models, for every
// backend, keeps its structural hash through graph_to_bytes and
// graph_from_bytes, whole and packed (its large weights apart).
#include "collage/onnx/graph_bytes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/ir/structural_hash.h"
#include "collage/onnx/importer.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/backend_spec.h"
#include "collage/session/model_loading.h"

namespace collage {
namespace {

namespace fs = std::filesystem;

TEST(GraphBytesTest, BytesThatAreNotAModelAreRefused) {
  EXPECT_THROW(graph_from_bytes("not a model"), Error);
  EXPECT_THROW(graph_from_bytes(""), Error);
  EXPECT_THROW(weight_files("not a model"), Error);
}

// Which of a partition's edges are the model's own inputs and outputs
// travels with it: a worker times those plain, as the tuner's own
// measurements do (preferred_edges).
TEST(GraphBytesTest, APartitionsModelEdgesTravelWithIt) {
  Graph model;
  const TensorType type{DType::kFloat32, {1, 16, 4, 4}};
  ValueId x = model.add_input("x", type);
  ValueId a = model.add_value("a", type);
  ValueId y = model.add_value("y", type);
  model.add_node("Relu", {x}, {a});
  model.add_node("Neg", {a}, {y});
  model.add_output(y);
  const Graph first = extract_subgraph(model, {0});
  ASSERT_EQ(first.model_edges, std::set<std::string>{"x"});
  EXPECT_EQ(graph_from_bytes(graph_to_bytes(first)).model_edges, first.model_edges);
  const Graph whole = extract_subgraph(model, {0, 1});
  EXPECT_EQ(graph_from_bytes(graph_to_bytes(whole)).model_edges, (std::set<std::string>{"x", "y"}));
  // A graph of its own has none, and its bytes carry none.
  EXPECT_TRUE(graph_from_bytes(graph_to_bytes(model)).model_edges.empty());
  // An entry that names no input or output is an error, not a crash.
  for (const char* bad : {"", "i1", "o7", "x0", "i", "i-1", "i0,,o0", "i99999999999999"}) {
    std::shared_ptr<onnx::ModelProto> proto = parse_onnx_model(graph_to_bytes(first));
    ASSERT_EQ(proto->metadata_props_size(), 1);
    proto->mutable_metadata_props(0)->set_value(bad);
    std::string bytes;
    ASSERT_TRUE(proto->SerializeToString(&bytes));
    EXPECT_THROW(graph_from_bytes(bytes), Error) << bad;
  }
}

class ZooCandidatesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooCandidatesTest, EveryCandidateComesBackAsItWent) {
  const char* zoo = std::getenv("COLLAGE_ZOO_DIR");
  if (zoo == nullptr || *zoo == '\0') GTEST_SKIP() << "COLLAGE_ZOO_DIR is not set";
  const fs::path path = fs::path(zoo) / GetParam() / "model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is missing";
  const Graph model = load_model(path.string(), {});
  const DataflowGraph dfg(model);
  std::set<std::string> seen;
  int checked = 0;
  WeightNames names;
  const fs::path weights = fs::path(::testing::TempDir()) / ("weights-" + GetParam());
  fs::create_directories(weights);
  for (const Backend* backend : BackendRegistry::global().all()) {
    for (const CandidatePartition& candidate :
         gather_candidates(dfg, make_backend_spec(*backend))) {
      const Graph partition = candidate.sub_graph.extract(dfg);
      const std::string hash = structural_hash_hex(partition);
      if (!seen.insert(hash).second) continue;
      const Graph back = graph_from_bytes(graph_to_bytes(partition));
      ASSERT_EQ(structural_hash_hex(back), hash)
          << backend->name() << " candidate of " << partition.num_nodes() << " nodes, first "
          << partition.node(0).op_type;
      ASSERT_EQ(back.model_edges, partition.model_edges);
      // Packed: the large weights as files of their own, each written once.
      const PackedGraph packed = pack_graph(partition, names);
      for (const auto& [name, weight] : packed.weights) {
        if (fs::exists(weights / name)) continue;
        write_file_atomically(
            (weights / name).string(),
            std::string_view(static_cast<const char*>(weight.raw()), weight.byte_size()));
      }
      std::vector<std::string> files = weight_files(packed.model);
      ASSERT_EQ(files.size(), packed.weights.size());
      const Graph unpacked = graph_from_bytes(packed.model, weights.string());
      ASSERT_EQ(structural_hash_hex(unpacked), hash);
      ASSERT_EQ(unpacked.model_edges, partition.model_edges);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  fs::remove_all(weights);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooCandidatesTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "bert_encoder",
                                           "dcgan_generator", "squeezenet1_1_fp16"));

}  // namespace
}  // namespace collage
