#include "collage/onnx/tensor_proto.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/onnx/proto_file.h"

namespace collage {
namespace {

using onnx::TensorProto;

Error tensor_error(const TensorProto& proto, const std::string& message) {
  return Error(message, {.field = "tensor " + quote_untrusted(proto.name())});
}

TensorType proto_type(const TensorProto& proto) {
  std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    throw tensor_error(proto,
                       "element type " + onnx_dtype_name(proto.data_type()) + " is not supported");
  }
  Shape shape;
  for (std::int64_t dim : proto.dims()) {
    if (dim < 0) throw tensor_error(proto, fmt::format("negative dimension {}", dim));
    shape.push_back(dim);
  }
  TensorType type{*dtype, std::move(shape)};
  check_byte_size(type, {.field = "tensor " + quote_untrusted(proto.name())});
  return type;
}

bool is_aligned(const void* data, DType dtype) {
  return reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) == 0;
}

// Borrows `data` when an owner keeps it alive and it is aligned; copies otherwise.
Tensor borrow_or_copy(const TensorType& type, const void* data,
                      const std::shared_ptr<const void>& owner) {
  if (owner && is_aligned(data, type.dtype)) return Tensor::borrow(type, owner, data);
  Tensor tensor = Tensor::allocate(type);
  if (tensor.byte_size() > 0) std::memcpy(tensor.raw(), data, tensor.byte_size());
  return tensor;
}

void check_count(const TensorProto& proto, const TensorType& type, std::int64_t count,
                 const char* field) {
  if (count == type.numel()) return;
  throw tensor_error(proto, fmt::format("{} holds {} values, the shape {} needs {}", field, count,
                                        shape_to_string(type.shape), type.numel()));
}

// Narrow element types are stored widened to int32 in int32_data.
template <typename T>
Tensor narrow_from_int32(const TensorType& type, const TensorProto& proto) {
  Tensor tensor = Tensor::allocate(type);
  auto* out = static_cast<T*>(tensor.raw());
  for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = static_cast<T>(proto.int32_data(i));
  return tensor;
}

Tensor from_typed_fields(const TensorProto& proto, const TensorType& type,
                         const std::shared_ptr<const void>& owner) {
  switch (type.dtype) {
    case DType::kFloat32:
      check_count(proto, type, proto.float_data_size(), "float_data");
      return borrow_or_copy(type, proto.float_data().data(), owner);
    case DType::kFloat64:
      check_count(proto, type, proto.double_data_size(), "double_data");
      return borrow_or_copy(type, proto.double_data().data(), owner);
    case DType::kInt64:
      check_count(proto, type, proto.int64_data_size(), "int64_data");
      return borrow_or_copy(type, proto.int64_data().data(), owner);
    case DType::kInt32:
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      return borrow_or_copy(type, proto.int32_data().data(), owner);
    case DType::kInt16:
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      return narrow_from_int32<std::int16_t>(type, proto);
    case DType::kInt8:
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      return narrow_from_int32<std::int8_t>(type, proto);
    case DType::kUInt8:
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      return narrow_from_int32<std::uint8_t>(type, proto);
    case DType::kFloat16:
      // The IEEE half bits, as uint16 values.
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      return narrow_from_int32<std::uint16_t>(type, proto);
    case DType::kBool: {
      check_count(proto, type, proto.int32_data_size(), "int32_data");
      Tensor tensor = Tensor::allocate(type);
      auto* out = static_cast<std::uint8_t*>(tensor.raw());
      for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = proto.int32_data(i) != 0 ? 1 : 0;
      return tensor;
    }
  }
  throw tensor_error(proto, "unhandled element type");
}

std::int64_t parse_size(const TensorProto& proto, const std::string& key, const std::string& text) {
  std::size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 0) {
    throw tensor_error(proto, fmt::format("external data {} '{}' is not a byte count", key, text));
  }
  return value;
}

// The real path of `path` (symlinks resolved), which must lie inside the real
// `base_dir`: a location without ".." can still leave the model's directory
// through a symlink (to /etc/passwd, or to ../secret.bin).
std::string resolved_inside(const TensorProto& proto, const std::string& path,
                            const std::string& base_dir) {
  char real_path[PATH_MAX];
  char real_dir[PATH_MAX];
  if (::realpath(path.c_str(), real_path) == nullptr) {
    throw tensor_error(proto, "external data file " + quote_untrusted(path) + " not found");
  }
  if (::realpath(base_dir.c_str(), real_dir) == nullptr) {
    throw tensor_error(
        proto, "the model's directory " + quote_untrusted(base_dir) + " cannot be resolved");
  }
  std::string dir(real_dir);
  if (dir.back() != '/') dir += '/';
  if (std::string_view(real_path).substr(0, dir.size()) != dir) {
    throw tensor_error(proto, "external data file " + quote_untrusted(path) + " resolves to " +
                                  quote_untrusted(real_path) + ", outside the model's directory");
  }
  return real_path;
}

Tensor from_external_data(const TensorProto& proto, const TensorType& type,
                          const std::string& base_dir) {
  std::string location;
  std::int64_t offset = 0;
  std::optional<std::int64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = parse_size(proto, "offset", entry.value());
    if (entry.key() == "length") length = parse_size(proto, "length", entry.value());
  }
  if (location.empty()) throw tensor_error(proto, "external data without a location");
  std::filesystem::path relative(location);
  bool escapes = relative.is_absolute();
  for (const auto& part : relative) escapes = escapes || part == "..";
  if (escapes) {
    throw tensor_error(proto, "external data location " + quote_untrusted(location) +
                                  " must be a relative path inside the model's directory");
  }
  const auto bytes = static_cast<std::int64_t>(type.byte_size());
  if (length && *length != bytes) {
    throw tensor_error(proto, fmt::format("external data length {} does not match {} ({} bytes)",
                                          *length, type.to_string(), bytes));
  }
  const std::string path = (std::filesystem::path(base_dir) / relative).string();
  const std::string real = resolved_inside(proto, path, base_dir);
  int fd = -1;
  try {
    fd = open_regular_file(real);
  } catch (const Error& error) {
    throw tensor_error(proto,
                       "external data file " + quote_untrusted(path) + ": " + error.message());
  }
  const auto file_size = static_cast<std::int64_t>(::lseek(fd, 0, SEEK_END));
  std::int64_t end = 0;
  if (__builtin_add_overflow(offset, bytes, &end) || end > file_size) {
    ::close(fd);
    throw tensor_error(proto, fmt::format("external data file {} has {} bytes, the tensor needs "
                                          "{} bytes at offset {}",
                                          quote_untrusted(path), file_size, bytes, offset));
  }
  Tensor tensor = Tensor::allocate(type);
  auto* out = static_cast<char*>(tensor.raw());
  std::int64_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd, out + done, static_cast<std::size_t>(bytes - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw tensor_error(proto, "cannot read external data file " + quote_untrusted(path));
    }
    done += n;
  }
  ::close(fd);
  return tensor;
}

}  // namespace

std::optional<DType> dtype_from_onnx(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kFloat32;
    case TensorProto::DOUBLE:
      return DType::kFloat64;
    case TensorProto::FLOAT16:
      return DType::kFloat16;
    case TensorProto::INT8:
      return DType::kInt8;
    case TensorProto::UINT8:
      return DType::kUInt8;
    case TensorProto::INT16:
      return DType::kInt16;
    case TensorProto::INT32:
      return DType::kInt32;
    case TensorProto::INT64:
      return DType::kInt64;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

int dtype_to_onnx(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return TensorProto::FLOAT;
    case DType::kFloat64:
      return TensorProto::DOUBLE;
    case DType::kFloat16:
      return TensorProto::FLOAT16;
    case DType::kInt8:
      return TensorProto::INT8;
    case DType::kUInt8:
      return TensorProto::UINT8;
    case DType::kInt16:
      return TensorProto::INT16;
    case DType::kInt32:
      return TensorProto::INT32;
    case DType::kInt64:
      return TensorProto::INT64;
    case DType::kBool:
      return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

std::string onnx_dtype_name(int elem_type) {
  if (!onnx::TensorProto_DataType_IsValid(elem_type)) return fmt::format("#{}", elem_type);
  return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
}

Tensor tensor_from_proto(const TensorProto& proto, const std::string& base_dir,
                         std::shared_ptr<const void> owner) {
  if (proto.has_segment()) throw tensor_error(proto, "segmented tensors are not supported");
  const TensorType type = proto_type(proto);
  if (proto.data_location() == TensorProto::EXTERNAL) {
    return from_external_data(proto, type, base_dir);
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != type.byte_size()) {
      throw tensor_error(proto, fmt::format("raw_data has {} bytes, {} needs {}", raw.size(),
                                            type.to_string(), type.byte_size()));
    }
    return borrow_or_copy(type, raw.data(), owner);
  }
  if (type.numel() == 0) return Tensor::allocate(type);
  return from_typed_fields(proto, type, owner);
}

Tensor load_tensor_proto_file(const std::string& path) {
  auto proto = std::make_shared<TensorProto>();
  read_proto_file(path, *proto, "ONNX tensor");
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  try {
    return tensor_from_proto(*proto, base_dir.empty() ? "." : base_dir, proto);
  } catch (const Error& error) {
    throw error.in_file(path);
  }
}

TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name) {
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype_to_onnx(tensor.dtype()));
  for (std::int64_t dim : tensor.shape()) proto.add_dims(dim);
  proto.set_raw_data(tensor.raw(), tensor.byte_size());
  return proto;
}

void save_tensor_proto_file(const Tensor& tensor, const std::string& name,
                            const std::string& path) {
  write_proto_file(path, tensor_to_proto(tensor, name));
}

}  // namespace collage
