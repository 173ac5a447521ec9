// Conversions between ONNX's TensorProto and Tensor.
//
// A TensorProto holds weights (initializers), attribute values and the
// reference inputs and outputs of ONNX's test data. Its data sits in one of
// several places: `raw_data` bytes, a typed repeated field (float_data,
// int64_data, ...; narrow types are widened into int32_data), or an external
// file next to the model. Weights are the bulk of a model, so when the caller
// keeps the parsed message alive, data already in Tensor's layout is borrowed
// rather than copied.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>

#include "collage/ir/tensor.h"

namespace collage {

// The DType for an ONNX TensorProto::DataType, or nullopt for element types
// the project does not handle (string, uint16/32/64, complex, bfloat16).
std::optional<DType> dtype_from_onnx(int elem_type);
// The ONNX TensorProto::DataType of a DType.
int dtype_to_onnx(DType dtype);
// "FLOAT", "UINT32", ... for error messages.
std::string onnx_dtype_name(int elem_type);

// Converts `proto`. External data is read from files relative to `base_dir`
// (the model's directory). When `owner` is given and keeps `proto` alive,
// data that is already in place (raw_data suitably aligned, float_data,
// int64_data, ...) is borrowed instead of copied. Throws Error naming the
// tensor for unsupported element types, data that does not match the shape,
// and missing or short external data files.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir = ".",
                         std::shared_ptr<const void> owner = nullptr);

// Reads a file holding one serialized TensorProto (the .pb files of ONNX's
// test data). Throws Error naming the file.
Tensor load_tensor_proto_file(const std::string& path);

// A TensorProto named `name` holding `tensor` as raw_data.
onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name);

// Writes `tensor` as a serialized TensorProto file.
void save_tensor_proto_file(const Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace collage
