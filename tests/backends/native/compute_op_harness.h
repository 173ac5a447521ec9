// Runs one compute op straight through its compute_ops() entry, for the
// compute kernel tests.
//
// A test states the op, its inputs, the static output types the graph would
// have, attributes, opset and thread count. The harness builds the one-node
// graph, asks the entry's check(), fills the outputs with NaN (so an element
// the kernel forgets to write cannot pass by accident) and runs the entry.
// Reference results come from naive loops written in each test file.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"
#include "collage/ir/graph.h"

namespace collage::native_test {

inline TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

inline Tensor f32_tensor(Shape shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(values, std::move(shape));
}

inline Tensor i64_tensor(Shape shape, const std::vector<std::int64_t>& values) {
  return Tensor::from_vector<std::int64_t>(values, std::move(shape));
}

using testing::random_tensor;

// The sliding window of a convolution or pooling problem with up to 3
// spatial axes, as the ONNX attributes give it (an empty list: the default).
struct WindowProblem {
  std::vector<std::int64_t> input;   // spatial sizes
  std::vector<std::int64_t> kernel;  // spatial sizes
  std::vector<std::int64_t> strides, dilations, pads;
  std::string auto_pad;  // empty means NOTSET
  int threads = 1;

  std::size_t rank() const { return input.size(); }
  std::int64_t stride(std::size_t i) const { return strides.empty() ? 1 : strides[i]; }
  std::int64_t dilation(std::size_t i) const { return dilations.empty() ? 1 : dilations[i]; }
  // The dilated kernel's span along axis i.
  std::int64_t extent(std::size_t i) const { return (kernel[i] - 1) * dilation(i) + 1; }
};

// `op_type` is qualified by its domain outside the default one
// ("com.microsoft.QLinearAdd").
inline const native::OpEntry& compute_entry(std::string_view op_type) {
  for (const native::OpEntry& entry : native::compute_ops()) {
    if (entry.op_type == op_type) return entry;
  }
  ADD_FAILURE() << op_type << " is not in compute_ops()";
  static const native::OpEntry missing{"", nullptr, nullptr};
  return missing;
}

struct ComputeCase {
  // Qualified by its domain outside the default one ("com.microsoft.QGemm").
  std::string op_type;
  // An empty tensor stands for an omitted optional input.
  std::vector<Tensor> inputs;
  std::vector<TensorType> outputs;
  Attributes attributes;
  std::int64_t opset = 13;
  int threads = 1;
  // Inputs that are graph constants rather than graph inputs (by index).
  std::vector<std::size_t> constant_inputs;

  Graph graph() const {
    Graph g;
    g.opset = opset;
    std::vector<ValueId> ids;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      const bool constant =
          std::find(constant_inputs.begin(), constant_inputs.end(), i) != constant_inputs.end();
      if (inputs[i].empty()) {
        ids.push_back(kNoValue);
      } else if (constant) {
        ids.push_back(g.add_constant(name, inputs[i]));
      } else {
        ids.push_back(g.add_input(name, inputs[i].type()));
      }
    }
    std::vector<ValueId> outs;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      outs.push_back(g.add_value("out" + std::to_string(i), outputs[i]));
    }
    const std::size_t dot = op_type.rfind('.');
    const NodeId id = g.add_node(dot == std::string::npos ? op_type : op_type.substr(dot + 1), ids,
                                 outs, attributes, "node");
    if (dot != std::string::npos) g.node(id).domain = op_type.substr(0, dot);
    for (ValueId out : outs) g.add_output(out);
    return g;
  }

  bool supported() const {
    const Graph g = graph();
    return compute_entry(op_type).check(g, g.node(0));
  }

  // The outputs; fails the test when check() says no.
  std::vector<Tensor> run() const {
    const Graph g = graph();
    const native::OpEntry& entry = compute_entry(op_type);
    EXPECT_TRUE(entry.check(g, g.node(0))) << op_type << " says it cannot run this case";
    std::vector<Tensor> results;
    for (const TensorType& type : outputs) {
      Tensor tensor = Tensor::allocate(type);
      if (type.dtype == DType::kFloat32) {
        std::fill(tensor.data<float>(), tensor.data<float>() + tensor.numel(),
                  std::numeric_limits<float>::quiet_NaN());
      }
      results.push_back(tensor);
    }
    entry.run(g, g.node(0), inputs, results, threads);
    return results;
  }

  Tensor run_one() const { return run().at(0); }
};

inline std::vector<float> values_of(const Tensor& tensor) {
  const float* data = tensor.data<float>();
  return std::vector<float>(data, data + tensor.numel());
}

// Every element within `tolerance` * max(1, |expected|) of the expected value.
inline void expect_close(const Tensor& actual, const std::vector<float>& expected,
                         float tolerance = 1e-5f) {
  ASSERT_EQ(actual.dtype(), DType::kFloat32);
  ASSERT_EQ(actual.numel(), static_cast<std::int64_t>(expected.size()));
  const float* data = actual.data<float>();
  int reported = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const float bound = tolerance * std::max(1.0f, std::fabs(expected[i]));
    const bool close = std::fabs(data[i] - expected[i]) <= bound ||
                       (std::isinf(expected[i]) && data[i] == expected[i]);
    if (!close && reported++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << data[i] << ", expected " << expected[i];
    }
  }
  EXPECT_EQ(reported, 0) << "mismatching elements";
}

}  // namespace collage::native_test
