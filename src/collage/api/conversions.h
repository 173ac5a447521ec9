// Conversions between the public API's types (include/collage/) and the
// library's own (Tensor, Shape), in one place. Element types need none: the
// library's DType is the public ElementType.
//
// An Array and a Tensor share buffers both ways: an input Array becomes a
// Tensor view of the caller's memory, an output Tensor becomes an Array that
// keeps the Tensor's buffer alive. Nothing is copied.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/array.h"
#include "collage/ir/tensor.h"

namespace collage::api {

Tensor to_tensor(const Array& array);
Array to_array(const Tensor& tensor);

std::map<std::string, Tensor> to_tensors(const std::map<std::string, Array>& arrays);

// Runs `body`, turning any exception other than collage::Error into one
// (the API throws one exception type).
template <typename Body>
auto one_error_type(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("out of memory");
  } catch (const std::exception& e) {
    throw Error(std::string("internal error: ") + e.what());
  }
}

}  // namespace collage::api
