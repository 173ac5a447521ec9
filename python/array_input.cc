#include "array_input.h"

#include <string>

#include "collage/array.h"
#include "collage/error.h"

namespace collage::python {
namespace {

std::string dtype_name(char kind, std::int64_t itemsize) {
  const std::string bits = std::to_string(itemsize * 8);
  switch (kind) {
    case 'f':
      return "float" + bits;
    case 'i':
      return "int" + bits;
    case 'u':
      return "uint" + bits;
    case 'c':
      return "complex" + bits;
    case 'b':
      return "bool";
    case 'U':
    case 'S':
      return "string";
    case 'O':
      return "object";
    case 'M':
    case 'm':
      return "datetime";
    case 'V':
      return "void (structured)";
  }
  return "an unknown kind of dtype";
}

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  if (dims.size() == 1) text += ",";
  return text + ")";
}

Error input_error(const ValueInfo& expected, const std::string& what) {
  // The name comes from the model the session loaded, already checked at
  // import; Error escapes control characters in the whole message.
  return Error(what, {.field = "input '" + expected.name + "'"});
}

}  // namespace

ElementType element_type_of(const ArrayDescription& array) {
  // Big-endian data would be read as garbage; numpy converts it with
  // astype("<...") or byteswap().
  if (array.byteorder == '>') {
    throw Error("numpy dtype " + dtype_name(array.kind, array.itemsize) +
                " is big-endian; convert it with .astype(its little-endian dtype)");
  }
  const char kind = array.kind;
  const std::int64_t size = array.itemsize;
  if (kind == 'f' && size == 4) return ElementType::kFloat32;
  if (kind == 'f' && size == 8) return ElementType::kFloat64;
  if (kind == 'f' && size == 2) return ElementType::kFloat16;
  if (kind == 'i' && size == 1) return ElementType::kInt8;
  if (kind == 'i' && size == 2) return ElementType::kInt16;
  if (kind == 'i' && size == 4) return ElementType::kInt32;
  if (kind == 'i' && size == 8) return ElementType::kInt64;
  if (kind == 'u' && size == 1) return ElementType::kUInt8;
  if (kind == 'b' && size == 1) return ElementType::kBool;
  throw Error("numpy dtype " + dtype_name(kind, size) + " has no ONNX element type Collage runs");
}

ElementType check_input_array(const ArrayDescription& array, const ValueInfo& expected) {
  if (array.strides.size() != array.shape.size()) {
    throw input_error(expected, "the array describes " + std::to_string(array.shape.size()) +
                                    " dimensions but " + std::to_string(array.strides.size()) +
                                    " strides");
  }
  ElementType type{};
  try {
    type = element_type_of(array);
  } catch (const Error& error) {
    throw input_error(expected, error.message());
  }
  // The model's shape was checked at import to fit in memory, so an array
  // of that shape is as small, whatever its strides make it look like; one
  // of another shape is refused before it is copied, unless it differs only
  // where the model leaves a dimension open (the session compiles for that
  // shape, and checks its size against the memory budget then). An element
  // type that differs is the session's to report, with the model's type
  // beside it.
  if (!expected.takes(array.shape)) {
    throw input_error(expected, "has shape " + shape_text(array.shape) + ", but the model needs " +
                                    shape_text(expected.dims));
  }
  return type;
}

}  // namespace collage::python
