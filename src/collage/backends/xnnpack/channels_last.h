// Channels-last layout: how a 4-D NCHW tensor is stored inside an XNNPACK
// partition.
//
// ONNX tensors are NCHW; XNNPACK's spatial operators (convolution, pooling,
// depth-to-space) only take NHWC. Inside a partition a 4-D value therefore
// lives in one of two layouts: kPlain (the ONNX row-major order) or
// kChannelsLast (NHWC). This file holds the shape arithmetic of that choice
// and the data transposes that move tensors between the two, both for
// activations at run time (at the partition's edges) and for constants at
// compile time. A shape whose NCHW and NHWC orders coincide in memory
// (C == 1 or H * W == 1) is "layout-free": changing its layout is a reshape.
#pragma once

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/ir/tensor.h"
#include "collage/ir/tensor_type.h"

namespace collage::xnnpack {

enum class Layout { kPlain, kChannelsLast };

// Whether the NCHW and NHWC orders of a 4-D shape are the same in memory.
// Shapes of any other rank have only one layout, so they are layout-free too.
bool is_layout_free(const Shape& shape);

// The dimensions XNNPACK sees for a value of logical (ONNX) shape `shape`
// stored in `layout`: [N,H,W,C] for a channels-last 4-D shape, the shape
// itself otherwise. A rank-0 shape becomes [1] (XNNPACK values have dims).
std::vector<std::size_t> xnn_dims(const Shape& shape, Layout layout);

// `shape` with leading 1s up to `rank` (numpy broadcasting alignment).
Shape pad_to_rank(const Shape& shape, int rank);

// Copies a dense [N,C,HW] tensor to [N,HW,C] (to_channels_last) or back.
// Large tensors are split over `pool` (may be null).
void nchw_to_nhwc(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  pthreadpool_t pool);
void nhwc_to_nchw(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  pthreadpool_t pool);

// The data of a constant of logical 4-D shape `shape` (NCHW) in `layout`.
std::vector<float> constant_in_layout(const float* data, const Shape& shape, Layout layout);

// A 4-D tensor of `type` (float32 or 8-bit) from NCHW to NHWC, or with
// `to_channels_last` false back; 8-bit bytes flip their sign bits on the way
// when `flip`.
void transpose_nchw(const TensorType& type, const void* src, void* dst, bool to_channels_last,
                    bool flip, pthreadpool_t pool);

// dst[i] = src[i] with its sign bit flipped (uint8 <-> int8 shifted by 128),
// eight bytes at a time.
void flip_sign_bits(const std::uint8_t* src, std::uint8_t* dst, std::size_t size);

// The bytes of an 8-bit constant (int8 or uint8) of logical shape `shape` in
// `layout`, with sign bits flipped when `flip` (a uint8 constant held as int8
// shifted by 128).
std::vector<std::uint8_t> eight_bit_in_layout(const Tensor& data, const Shape& shape, Layout layout,
                                              bool flip);

}  // namespace collage::xnnpack
