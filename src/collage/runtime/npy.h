// NumPy .npy files: the exchange format for model inputs and outputs.
//
// `collage run --input x=file.npy` reads inputs a user made with numpy.save,
// `--save-outputs` writes what numpy.load reads back, and the zoo's reference
// outputs from PyTorch arrive this way. Supported: format versions 1.0, 2.0
// and 3.0 headers; little-endian (or single-byte) f16/f32/f64, i8/i16/i32/i64,
// u8 and bool; C order. Anything else (Fortran order, big-endian data,
// object arrays, a truncated file) is an Error naming the file and the field.
#pragma once

#include <string>
#include <string_view>

#include "collage/ir/tensor.h"

namespace collage {

// Reads a whole .npy file.
Tensor read_npy(const std::string& path);

// Parses .npy bytes; `origin` names them in errors (usually the file path).
Tensor parse_npy(std::string_view bytes, const std::string& origin);

// Writes `tensor` as a version 1.0 file (2.0 if the header needs it).
void write_npy(const std::string& path, const Tensor& tensor);

// The bytes write_npy writes.
std::string serialize_npy(const Tensor& tensor);

}  // namespace collage
