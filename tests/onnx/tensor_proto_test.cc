#include "collage/onnx/tensor_proto.h"

#include <gtest/gtest.h>

#include <fstream>

#include "collage/ir/error.h"
#include "onnx/error_text.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

using testing::error_of;
using testing::TempDir;

onnx::TensorProto float_proto(const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(static_cast<std::int64_t>(values.size()));
  for (float v : values) proto.add_float_data(v);
  return proto;
}

void write_bytes(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

TEST(TensorProtoTest, RawDataRoundTrips) {
  Tensor original = Tensor::from_vector<std::int64_t>({1, -2, 3, 4, 5, 6}, {6}).reshaped({2, 3});
  onnx::TensorProto proto = tensor_to_proto(original, "t");
  Tensor back = tensor_from_proto(proto);
  EXPECT_EQ(back.type(), original.type());
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(back.int_at(i), original.int_at(i));
}

TEST(TensorProtoTest, FloatDataIsRead) {
  Tensor tensor = tensor_from_proto(float_proto("t", {1.5f, -2.0f}));
  EXPECT_EQ(tensor.type(), (TensorType{DType::kFloat32, {2}}));
  EXPECT_EQ(tensor.data<float>()[0], 1.5f);
  EXPECT_EQ(tensor.data<float>()[1], -2.0f);
}

TEST(TensorProtoTest, NarrowTypesAreReadFromInt32Data) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT8);
  proto.add_dims(3);
  for (int v : {-128, 0, 127}) proto.add_int32_data(v);
  Tensor tensor = tensor_from_proto(proto);
  EXPECT_EQ(tensor.dtype(), DType::kInt8);
  EXPECT_EQ(tensor.int_at(0), -128);
  EXPECT_EQ(tensor.int_at(2), 127);
}

TEST(TensorProtoTest, BoolsAreReadFromInt32Data) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::BOOL);
  proto.add_dims(2);
  proto.add_int32_data(1);
  proto.add_int32_data(0);
  Tensor tensor = tensor_from_proto(proto);
  EXPECT_EQ(tensor.dtype(), DType::kBool);
  EXPECT_EQ(tensor.int_at(0), 1);
  EXPECT_EQ(tensor.int_at(1), 0);
}

TEST(TensorProtoTest, Float16KeepsItsBits) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT16);
  proto.add_int32_data(0x3C00);  // 1.0
  Tensor tensor = tensor_from_proto(proto);
  EXPECT_EQ(tensor.dtype(), DType::kFloat16);
  EXPECT_EQ(tensor.rank(), 0);
  EXPECT_EQ(*static_cast<const std::uint16_t*>(tensor.raw()), 0x3C00);
}

TEST(TensorProtoTest, DataIsBorrowedWhenAnOwnerKeepsTheProtoAlive) {
  auto proto = std::make_shared<onnx::TensorProto>(
      tensor_to_proto(Tensor::from_vector<float>({1, 2, 3, 4}, {4}), "w"));
  Tensor tensor = tensor_from_proto(*proto, ".", proto);
  EXPECT_EQ(tensor.raw(), static_cast<const void*>(proto->raw_data().data()));
}

TEST(TensorProtoTest, DataIsCopiedWithoutAnOwner) {
  onnx::TensorProto proto = tensor_to_proto(Tensor::from_vector<float>({1, 2}, {2}), "w");
  Tensor tensor = tensor_from_proto(proto);
  EXPECT_NE(tensor.raw(), static_cast<const void*>(proto.raw_data().data()));
  EXPECT_EQ(tensor.data<float>()[1], 2.0f);
}

TEST(TensorProtoTest, RawDataOfTheWrongSizeIsAnErrorNamingTheTensor) {
  onnx::TensorProto proto = tensor_to_proto(Tensor::from_vector<float>({1, 2}, {2}), "weights");
  proto.add_dims(2);
  std::string message = error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(message.find("weights"), std::string::npos) << message;
  EXPECT_NE(message.find("raw_data"), std::string::npos) << message;
}

TEST(TensorProtoTest, TooFewTypedValuesIsAnError) {
  onnx::TensorProto proto = float_proto("w", {1.0f});
  proto.add_dims(2);
  EXPECT_THROW(tensor_from_proto(proto), Error);
}

TEST(TensorProtoTest, StringTensorsAreUnsupported) {
  onnx::TensorProto proto;
  proto.set_name("labels");
  proto.set_data_type(onnx::TensorProto::STRING);
  proto.add_string_data("cat");
  std::string message = error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(message.find("labels"), std::string::npos) << message;
  EXPECT_NE(message.find("STRING"), std::string::npos) << message;
}

TEST(TensorProtoTest, ExternalDataIsReadFromTheBaseDirectory) {
  TempDir dir;
  const float values[] = {0, 0, 7.0f, 8.0f};  // the tensor starts at byte 8
  write_bytes(dir.file("weights.bin"), values, sizeof(values));
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(2);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = proto.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  auto* offset = proto.add_external_data();
  offset->set_key("offset");
  offset->set_value("8");
  Tensor tensor = tensor_from_proto(proto, dir.path().string());
  EXPECT_EQ(tensor.data<float>()[0], 7.0f);
  EXPECT_EQ(tensor.data<float>()[1], 8.0f);
}

TEST(TensorProtoTest, AMissingExternalDataFileIsAnErrorNamingFileAndTensor) {
  TempDir dir;
  onnx::TensorProto proto;
  proto.set_name("fc.weight");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(2);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = proto.add_external_data();
  location->set_key("location");
  location->set_value("missing.bin");
  std::string message = error_of([&] { tensor_from_proto(proto, dir.path().string()); });
  EXPECT_NE(message.find("missing.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("fc.weight"), std::string::npos) << message;
}

TEST(TensorProtoTest, ExternalDataOutsideTheModelDirectoryIsRejected) {
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(1);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = proto.add_external_data();
  location->set_key("location");
  location->set_value("../etc/passwd");
  EXPECT_THROW(tensor_from_proto(proto), Error);
}

TEST(TensorProtoTest, ATensorFileRoundTrips) {
  TempDir dir;
  Tensor original = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {6}).reshaped({3, 2});
  save_tensor_proto_file(original, "input_0", dir.file("input_0.pb"));
  Tensor back = load_tensor_proto_file(dir.file("input_0.pb"));
  EXPECT_EQ(back.type(), original.type());
  EXPECT_EQ(back.data<float>()[5], 6.0f);
}

TEST(TensorProtoTest, AMissingTensorFileIsAnErrorNamingIt) {
  TempDir dir;
  std::string path = dir.file("nothing.pb");
  std::string message = error_of([&] { load_tensor_proto_file(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(TensorProtoTest, AGarbageTensorFileIsAnErrorNamingIt) {
  TempDir dir;
  std::string path = dir.file("garbage.pb");
  const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99};
  write_bytes(path, garbage, sizeof(garbage));
  std::string message = error_of([&] { load_tensor_proto_file(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

}  // namespace
}  // namespace collage
