#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

struct PoolCase {
  std::string name;
  std::string op;
  Shape input;
  Shape kernel;
  std::vector<std::int64_t> strides = {};
  std::vector<std::int64_t> pads = {};
  bool ceil_mode = false;
  bool count_include_pad = false;
  std::vector<std::int64_t> dilations = {};
  std::string auto_pad = "NOTSET";
};

Shape pool_output(const PoolCase& c) {
  const std::size_t sp = c.kernel.size();
  Shape out = {c.input[0], c.input[1]};
  for (std::size_t i = 0; i < sp; ++i) {
    const std::int64_t in = c.input[2 + i];
    const std::int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const std::int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const std::int64_t pl = c.pads.empty() ? 0 : c.pads[i];
    const std::int64_t pr = c.pads.empty() ? 0 : c.pads[i + sp];
    const std::int64_t extent = (c.kernel[i] - 1) * d + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out.push_back((in + s - 1) / s);
      continue;
    }
    const std::int64_t span = in + pl + pr - extent;
    std::int64_t size = (c.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // ONNX drops a last window that would start in the right padding.
    if (c.ceil_mode && (size - 1) * s >= in + pl) --size;
    out.push_back(size);
  }
  return out;
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MatchesTheReference) {
  const PoolCase& c = GetParam();
  GraphBuilder b;
  Attributes a = attrs({{"kernel_shape", std::vector<std::int64_t>(c.kernel)},
                        {"ceil_mode", std::int64_t{c.ceil_mode}}});
  if (!c.strides.empty()) a.set("strides", c.strides);
  if (!c.pads.empty()) a.set("pads", c.pads);
  if (!c.dilations.empty()) a.set("dilations", c.dilations);
  if (c.auto_pad != "NOTSET") a.set("auto_pad", c.auto_pad);
  if (c.op == "AveragePool") a.set("count_include_pad", std::int64_t{c.count_include_pad});
  b.output(b.node(c.op, {b.input(c.input)}, pool_output(c), a));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph()));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, PoolTest,
    ::testing::Values(
        PoolCase{"Max2x2", "MaxPool", {2, 3, 8, 10}, {2, 2}, {2, 2}},
        PoolCase{"Max3x3Stride2Padded", "MaxPool", {1, 5, 11, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
        PoolCase{"MaxCeilMode", "MaxPool", {1, 4, 10, 11}, {3, 3}, {2, 2}, {}, true},
        PoolCase{
            "MaxCeilModeWithPads", "MaxPool", {1, 4, 9, 9}, {3, 3}, {2, 2}, {1, 1, 0, 0}, true},
        PoolCase{"MaxDilated", "MaxPool", {1, 2, 12, 12}, {3, 3}, {1, 1}, {}, false, false, {2, 2}},
        PoolCase{"MaxSameUpper",
                 "MaxPool",
                 {1, 3, 9, 8},
                 {3, 3},
                 {2, 2},
                 {},
                 false,
                 false,
                 {},
                 "SAME_UPPER"},
        PoolCase{"Max1D", "MaxPool", {2, 3, 15}, {4}, {3}, {1, 2}},
        PoolCase{"Max3D", "MaxPool", {1, 2, 6, 7, 8}, {2, 2, 2}, {2, 2, 2}},
        PoolCase{"AvgExcludePad", "AveragePool", {2, 3, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
        PoolCase{"AvgIncludePad",
                 "AveragePool",
                 {2, 3, 9, 9},
                 {3, 3},
                 {2, 2},
                 {1, 1, 1, 1},
                 false,
                 true},
        PoolCase{"AvgCeilModeExcludePad", "AveragePool", {1, 4, 10, 11}, {3, 3}, {2, 2}, {}, true},
        PoolCase{"AvgAsymmetric", "AveragePool", {1, 3, 7, 9}, {2, 4}, {1, 3}, {0, 1, 1, 2}}),
    [](const ::testing::TestParamInfo<PoolCase>& info) { return info.param.name; });

TEST(GlobalPoolTest, GlobalAverageMatchesTheReference) {
  GraphBuilder b;
  b.output(b.node("GlobalAveragePool", {b.input({2, 7, 5, 6})}, {2, 7, 1, 1}));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(GlobalPoolTest, GlobalMaxMatchesTheReference) {
  GraphBuilder b;
  b.output(b.node("GlobalMaxPool", {b.input({2, 7, 5, 6})}, {2, 7, 1, 1}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(PoolSupportTest, RejectsCeilModeAveragesThatCountPadding) {
  PoolCase c{"", "AveragePool", {1, 4, 10, 11}, {3, 3}, {2, 2}, {}, true, true};
  GraphBuilder b;
  b.output(b.node("AveragePool", {b.input(c.input)}, pool_output(c),
                  attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                         {"strides", std::vector<std::int64_t>{2, 2}},
                         {"ceil_mode", std::int64_t{1}},
                         {"count_include_pad", std::int64_t{1}}})));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(PoolSupportTest, RejectsMaxPoolWithIndices) {
  GraphBuilder b;
  Graph& g = b.graph();
  ValueId x = b.input({1, 1, 4, 4});
  ValueId y = g.add_value("y", f32({1, 1, 2, 2}));
  ValueId indices = g.add_value("i", TensorType{DType::kInt64, {1, 1, 2, 2}});
  g.add_node("MaxPool", {x}, {y, indices},
             attrs({{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                    {"strides", std::vector<std::int64_t>{2, 2}}}));
  g.add_output(y);
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
}

}  // namespace
}  // namespace collage::onednn_test
