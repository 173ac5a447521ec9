// Builds small ONNX models in tests, straight in protobuf, so that tests can
// describe what no Graph can hold (dynamic dimensions, Constant nodes with
// every kind of attribute, broken models) and never commit binary files.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collage/ir/tensor.h"
#include "collage/onnx/proto_file.h"
#include "collage/onnx/tensor_proto.h"

namespace collage::testing {

// One dimension of a declared shape: a size, or a named dynamic dimension.
struct Dim {
  Dim(std::int64_t value) : value(value) {}  // NOLINT(google-explicit-constructor)
  Dim(const char* param) : param(param) {}   // NOLINT(google-explicit-constructor)
  std::int64_t value = -1;
  std::string param;
};

inline onnx::AttributeProto attr(const std::string& name, std::int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

inline onnx::AttributeProto attr(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

inline onnx::AttributeProto attr(const std::string& name, const std::string& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
  return a;
}

inline onnx::AttributeProto attr(const std::string& name, const char* value) {
  return attr(name, std::string(value));
}

inline onnx::AttributeProto attr(const std::string& name, const std::vector<float>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a.add_floats(v);
  return a;
}

inline onnx::AttributeProto attr(const std::string& name, const std::vector<std::int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (std::int64_t v : values) a.add_ints(v);
  return a;
}

inline onnx::AttributeProto attr(const std::string& name, const Tensor& tensor) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = tensor_to_proto(tensor, "");
  return a;
}

class ModelBuilder {
 public:
  explicit ModelBuilder(std::int64_t opset = 13) {
    model_->set_ir_version(8);
    model_->set_producer_name("collage-tests");
    auto* import = model_->add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    model_->mutable_graph()->set_name("test");
  }

  ModelBuilder& input(const std::string& name, const std::vector<Dim>& dims,
                      int elem_type = onnx::TensorProto::FLOAT) {
    declare(*graph().add_input(), name, dims, elem_type);
    return *this;
  }
  ModelBuilder& output(const std::string& name) {
    graph().add_output()->set_name(name);
    return *this;
  }
  ModelBuilder& output(const std::string& name, const std::vector<Dim>& dims,
                       int elem_type = onnx::TensorProto::FLOAT) {
    declare(*graph().add_output(), name, dims, elem_type);
    return *this;
  }
  ModelBuilder& value_info(const std::string& name, const std::vector<Dim>& dims,
                           int elem_type = onnx::TensorProto::FLOAT) {
    declare(*graph().add_value_info(), name, dims, elem_type);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const Tensor& tensor) {
    *graph().add_initializer() = tensor_to_proto(tensor, name);
    return *this;
  }
  ModelBuilder& node(const std::string& op_type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs,
                     const std::vector<onnx::AttributeProto>& attributes = {},
                     const std::string& domain = "") {
    auto* n = graph().add_node();
    n->set_op_type(op_type);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    for (const auto& a : attributes) *n->add_attribute() = a;
    return *this;
  }

  onnx::GraphProto& graph() { return *model_->mutable_graph(); }
  onnx::ModelProto& model() { return *model_; }
  std::shared_ptr<const onnx::ModelProto> shared() const { return model_; }
  void save(const std::string& path) const { write_proto_file(path, *model_); }

 private:
  static void declare(onnx::ValueInfoProto& info, const std::string& name,
                      const std::vector<Dim>& dims, int elem_type) {
    info.set_name(name);
    auto* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* shape = tensor->mutable_shape();
    for (const Dim& dim : dims) {
      auto* d = shape->add_dim();
      if (!dim.param.empty()) {
        d->set_dim_param(dim.param);
      } else if (dim.value >= 0) {
        d->set_dim_value(dim.value);
      }
    }
  }

  std::shared_ptr<onnx::ModelProto> model_ = std::make_shared<onnx::ModelProto>();
};

}  // namespace collage::testing
