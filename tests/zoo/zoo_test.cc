// The model zoo (scripts/export_zoo.py) run by the native backend and
// checked against PyTorch's own outputs, at every graph optimization level:
// the rewrites must not change what a model computes.
//
// The zoo lives outside the repository ($COLLAGE_ZOO_DIR, which `make test`
// sets after exporting it); a missing directory or model skips its test with
// the reason rather than failing, so the unit suite runs anywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/onnx/importer.h"
#include "collage/runtime/executor.h"
#include "collage/runtime/npy.h"

namespace collage {
namespace {

namespace fs = std::filesystem;

// The tolerance: the largest error relative to the output's largest
// magnitude. Float32 with different summation orders (blocked GEMM, fused
// batch norm) differs from PyTorch by ~1e-6 of the range. A float16 output
// may round the other way where the two float32 results straddle a rounding
// boundary: one float16 step (2^-10 of the magnitude) at most.
constexpr double kRelativeTolerance = 1e-4;
constexpr double kFloat16RelativeTolerance = 1e-3;

class ZooTest : public ::testing::TestWithParam<std::tuple<std::string, GraphOptLevel>> {};

TEST_P(ZooTest, NativeBackendMatchesPyTorch) {
  const char* zoo = std::getenv("COLLAGE_ZOO_DIR");
  if (zoo == nullptr || *zoo == '\0') {
    GTEST_SKIP() << "COLLAGE_ZOO_DIR is not set (make test exports the zoo and sets it)";
  }
  const auto& [model, level] = GetParam();
  fs::path dir = fs::path(zoo) / model;
  for (const char* file : {"model.onnx", "input.npy", "output.npy"}) {
    if (!fs::exists(dir / file)) GTEST_SKIP() << (dir / file).string() << " does not exist";
  }

  ImportOptions options;
  options.evaluator = &native_evaluator();
  options.graph_opt = level;
  Graph graph = import_onnx((dir / "model.onnx").string(), options);
  ASSERT_EQ(graph.inputs().size(), 1u);
  ASSERT_EQ(graph.outputs().size(), 1u);

  const Backend& native = BackendRegistry::global().get("native");
  for (const Node& node : graph.nodes()) {
    ASSERT_TRUE(native.supports(graph, node)) << node.op_type << " node '" << node.name << "'";
  }
  Executor executor = whole_model_executor(graph, "native", [&](const Graph& partition) {
    return native.compile(partition, CompileOptions{.threads = 2});
  });

  Tensor input = read_npy((dir / "input.npy").string());
  Tensor expected = read_npy((dir / "output.npy").string());
  auto outputs = executor.run({{graph.value(graph.inputs()[0]).name, input}});
  const Tensor& actual = outputs.at(executor.output_names()[0]);
  ASSERT_EQ(actual.type(), expected.type());

  double largest = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    largest = std::max(largest, std::abs(expected.number_at(i)));
  }
  double worst = 0;
  std::int64_t worst_at = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double error = std::abs(actual.number_at(i) - expected.number_at(i));
    if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
    if (error > worst) {
      worst = error;
      worst_at = i;
    }
  }
  const double tolerance =
      expected.dtype() == DType::kFloat16 ? kFloat16RelativeTolerance : kRelativeTolerance;
  EXPECT_LE(worst, tolerance * largest)
      << "element " << worst_at << ": got " << actual.number_at(worst_at) << ", PyTorch "
      << expected.number_at(worst_at) << " (largest magnitude " << largest << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ZooTest,
    ::testing::Combine(::testing::Values("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1",
                                         "bert_encoder", "dcgan_generator", "squeezenet1_1_fp16"),
                       ::testing::Values(GraphOptLevel::kNone, GraphOptLevel::kBasic,
                                         GraphOptLevel::kAll)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + std::string(to_string(std::get<1>(info.param)));
    });

}  // namespace
}  // namespace collage
