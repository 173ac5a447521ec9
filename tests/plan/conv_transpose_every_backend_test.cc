// ConvTranspose with output_shape on every backend of this build: the
// padding output_shape implies must be placed the way ONNX defines it, the
// odd element first unless auto_pad is SAME_UPPER, whichever backend a plan
// gives the node to. Expected values come from a direct loop over the ONNX
// definition, not from any backend.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"

namespace collage {
namespace {

constexpr std::int64_t kInput = 3;
constexpr std::int64_t kKernel = 3;
constexpr std::int64_t kStride = 2;
constexpr float kBias = 0.25f;

struct OutputShapeCase {
  std::string name;
  // Left out of the node when empty.
  std::string auto_pad;
  // output_shape, the same on both axes. The full result is
  // 2 * (3 - 1) + 3 = 7: an output of 6 crops one element (an odd total),
  // one of 8 adds one that only the bias reaches.
  std::int64_t output;
};

// Test names and failure messages show the case by its name.
void PrintTo(const OutputShapeCase& c, std::ostream* out) { *out << c.name; }

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// 1, 2, 3, ... times `scale`: every position distinct, so a shifted window shows.
Tensor counting(const Shape& shape, float scale) {
  Tensor tensor = Tensor::allocate(f32(shape));
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<float>()[i] = static_cast<float>(i + 1) * scale;
  }
  return tensor;
}

Tensor input_tensor() { return counting({1, 1, kInput, kInput}, 1.0f); }
Tensor weight_tensor() { return counting({1, 1, kKernel, kKernel}, 0.5f); }

Graph conv_transpose_graph(const OutputShapeCase& c) {
  Graph graph;
  graph.opset = 17;
  const ValueId x = graph.add_input("x", f32({1, 1, kInput, kInput}));
  const ValueId w = graph.add_constant("w", weight_tensor());
  const ValueId b = graph.add_constant("b", Tensor::from_vector<float>({kBias}, {1}));
  const ValueId y = graph.add_value("y", f32({1, 1, c.output, c.output}));
  Attributes attributes;
  attributes.set("strides", std::vector<std::int64_t>{kStride, kStride});
  attributes.set("output_shape", std::vector<std::int64_t>{c.output, c.output});
  if (!c.auto_pad.empty()) attributes.set("auto_pad", c.auto_pad);
  graph.add_node("ConvTranspose", {x, w, b}, {y}, attributes, "deconv");
  graph.add_output(y);
  return graph;
}

// The ONNX definition: each input element adds its weighted kernel to the
// full result at stride steps; output_shape then leaves
//   total = stride * (input - 1) + output_padding + kernel extent - output
// to cut, pads[begin] = total / 2 for SAME_UPPER and total - total / 2
// otherwise (halves rounded down, as ONNX's reference implementation does).
std::vector<float> onnx_definition(const OutputShapeCase& c) {
  const Tensor x = input_tensor();
  const Tensor w = weight_tensor();
  const std::int64_t full = kStride * (kInput - 1) + kKernel;
  std::vector<double> result(static_cast<std::size_t>(full * full), 0.0);
  for (std::int64_t iy = 0; iy < kInput; ++iy) {
    for (std::int64_t ix = 0; ix < kInput; ++ix) {
      for (std::int64_t ky = 0; ky < kKernel; ++ky) {
        for (std::int64_t kx = 0; kx < kKernel; ++kx) {
          result[static_cast<std::size_t>((iy * kStride + ky) * full + ix * kStride + kx)] +=
              static_cast<double>(x.data<float>()[iy * kInput + ix]) *
              w.data<float>()[ky * kKernel + kx];
        }
      }
    }
  }
  const std::int64_t total = full - c.output;
  const auto half = static_cast<std::int64_t>(std::floor(static_cast<double>(total) / 2));
  const std::int64_t begin = c.auto_pad == "SAME_UPPER" ? half : total - half;
  std::vector<float> expected;
  for (std::int64_t oy = 0; oy < c.output; ++oy) {
    for (std::int64_t ox = 0; ox < c.output; ++ox) {
      const std::int64_t fy = oy + begin;
      const std::int64_t fx = ox + begin;
      const bool inside = fy >= 0 && fy < full && fx >= 0 && fx < full;
      const double value = inside ? result[static_cast<std::size_t>(fy * full + fx)] : 0.0;
      expected.push_back(static_cast<float>(value + kBias));
    }
  }
  return expected;
}

std::vector<float> run(Kernel& kernel, const Graph& graph) {
  std::vector<Tensor> inputs = {input_tensor()};
  std::vector<Tensor> outputs = {Tensor::zeros(graph.type(graph.outputs()[0]))};
  kernel.run(inputs, outputs);
  return {outputs[0].data<float>(), outputs[0].data<float>() + outputs[0].numel()};
}

void expect_matches(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4f * std::abs(expected[i]) + 1e-5f) << "element " << i;
  }
}

const OutputShapeCase kCases[] = {
    {"NoAutoPadOddTotal", "", 6},
    {"NotSetOddTotal", "NOTSET", 6},
    {"SameUpperOddTotal", "SAME_UPPER", 6},
    {"SameLowerOddTotal", "SAME_LOWER", 6},
    {"NotSetLargerThanTheFullResult", "NOTSET", 8},
};

class ConvTransposeOutputShapeTest
    : public ::testing::TestWithParam<std::tuple<std::string, OutputShapeCase>> {};

TEST_P(ConvTransposeOutputShapeTest, BackendMatchesTheOnnxDefinition) {
  const auto& [backend_name, c] = GetParam();
  const Backend& backend = BackendRegistry::global().get(backend_name);
  const Graph graph = conv_transpose_graph(c);
  if (!backend.supports(graph, graph.node(0))) {
    GTEST_SKIP() << backend_name << " does not support ConvTranspose with output_shape " << c.output
                 << "x" << c.output << (c.auto_pad.empty() ? "" : " and auto_pad ") << c.auto_pad;
  }
  Result<std::unique_ptr<Kernel>> kernel = backend.compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  expect_matches(run(*kernel.value(), graph), onnx_definition(c));
}

INSTANTIATE_TEST_SUITE_P(
    EveryBackend, ConvTransposeOutputShapeTest,
    ::testing::Combine(::testing::ValuesIn(BackendRegistry::global().names()),
                       ::testing::ValuesIn(kCases)),
    [](const ::testing::TestParamInfo<ConvTransposeOutputShapeTest::ParamType>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

TEST(ConvTransposeOutputShapeReferenceTest, WholeGraphOnNativeMatchesTheOnnxDefinition) {
  for (const OutputShapeCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const Graph graph = conv_transpose_graph(c);
    std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
    expect_matches(run(*kernel, graph), onnx_definition(c));
  }
}

}  // namespace
}  // namespace collage
