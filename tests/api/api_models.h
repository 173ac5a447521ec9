// Small ONNX models for the public API's tests, written with the ONNX
// protobuf alone: these tests see Collage only as a user does, through
// include/collage/ and libcollage.so.
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace collage::api_testing {

// A float tensor initializer with deterministic values.
inline void add_weights(onnx::GraphProto& graph, const std::string& name,
                        const std::vector<std::int64_t>& dims, float scale) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  std::int64_t count = 1;
  for (std::int64_t d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    tensor->add_float_data(scale * std::sin(0.37f * static_cast<float>(i) + 0.1f));
  }
}

inline void declare(onnx::ValueInfoProto& info, const std::string& name,
                    const std::vector<std::int64_t>& dims) {
  info.set_name(name);
  auto* type = info.mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (std::int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
}

// x[1,8,12,12] -> Conv 3x3 (16 channels, pad 1) + bias -> Relu -> y, and
// y + Sigmoid(y) -> z: a convolution any backend takes, then elementwise ops.
inline std::string conv_model_bytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("collage-api-tests");
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("conv_relu");
  declare(*graph.add_input(), "x", {1, 8, 12, 12});
  add_weights(graph, "w", {16, 8, 3, 3}, 0.2f);
  add_weights(graph, "b", {16}, 0.1f);
  auto node = [&](const std::string& op, std::vector<std::string> in, std::string out) {
    onnx::NodeProto* n = graph.add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  onnx::NodeProto* conv = node("Conv", {"x", "w", "b"}, "c");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  node("Relu", {"c"}, "y");
  node("Sigmoid", {"y"}, "s");
  node("Add", {"y", "s"}, "z");
  declare(*graph.add_output(), "y", {1, 16, 12, 12});
  declare(*graph.add_output(), "z", {1, 16, 12, 12});
  return model.SerializeAsString();
}

// A fresh directory, removed with its contents when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("collage_api_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `bytes` to `name` and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace collage::api_testing
