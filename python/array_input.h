// How the Python module takes an input array: what numpy says of it (its
// dtype, shape and strides) is checked against what the model takes before
// a byte of it is read or copied.
//
// A numpy array may be a view much larger than its memory (a zero-stride
// broadcast of one float to a billion elements) or not contiguous; making it
// contiguous copies every logical element. So the description is checked
// first, in plain C++ that needs no Python (and is fuzzed as such), and only
// an array of exactly the model's type and shape is ever made contiguous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/element_type.h"
#include "collage/session.h"

namespace collage::python {

// What numpy's array interface says of an array, before its data is read.
struct ArrayDescription {
  // numpy's dtype.kind ('f', 'i', 'u', 'b', ...), dtype.itemsize and
  // dtype.byteorder ('=' native, '<' little, '>' big, '|' not applicable).
  char kind = 'f';
  std::int64_t itemsize = 4;
  char byteorder = '=';
  std::vector<std::int64_t> shape;
  // In bytes, one per dimension (may be zero or negative for views).
  std::vector<std::int64_t> strides;
};

// The element type of a numpy dtype, or an Error naming the dtype when
// Collage runs no such type (complex, strings, objects, big-endian data).
ElementType element_type_of(const ArrayDescription& array);

// Checks an array given for the model input `expected` and returns its
// element type: a dtype Collage runs and exactly the input's shape, else an
// Error naming the input and what differs. Reads no data.
ElementType check_input_array(const ArrayDescription& array, const ValueInfo& expected);

}  // namespace collage::python
