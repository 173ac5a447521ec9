// Layout: oneDNN memory descriptors for the project's plain tensors.
//
// Kernels take and return dense row-major float32 (or, for quantized
// convolutions, 8-bit) tensors; inside a kernel,
// oneDNN primitives pick their own (often blocked, e.g. nChw8c) layouts. These
// helpers describe the plain side of that boundary and tell whether a
// descriptor oneDNN chose is plain, so that reorders are inserted only where
// the layout really changes.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <optional>

#include "collage/backends/backend.h"
#include "collage/ir/tensor_type.h"

namespace collage::onednn {

using dnnl::memory;

// oneDNN dims of a shape; a scalar (rank 0) becomes {1}, since oneDNN has no
// rank-0 tensors.
memory::dims to_dims(const Shape& shape);

// The product of the dims.
std::int64_t dims_numel(const memory::dims& dims);

// `dims` with leading 1s up to `rank` (numpy-style broadcasting alignment).
memory::dims align_rank(const memory::dims& dims, int rank);

// Dense row-major strides of `dims`.
memory::dims row_major_strides(const memory::dims& dims);

// oneDNN's data type for an element type it computes with (float32, and
// int8, uint8 and int32 for quantized convolutions); nullopt for others.
std::optional<memory::data_type> onednn_data_type(DType dtype);

// A dense row-major descriptor (float32 unless `type` says otherwise).
memory::desc plain_desc(const memory::dims& dims, memory::data_type type = memory::data_type::f32);

// A descriptor that lets the primitive choose the layout.
memory::desc any_desc(const memory::dims& dims, memory::data_type type = memory::data_type::f32);

// A descriptor with explicit strides (a transposed view of a buffer).
memory::desc strided_desc(const memory::dims& dims, const memory::dims& strides,
                          memory::data_type type = memory::data_type::f32);

// The descriptor of a kernel edge of `shape` stored in `layout` (see
// EdgeLayout): plain row-major, nhwc, nChw8c or nChw16c; float32 unless
// `type` says otherwise.
memory::desc edge_desc(const Shape& shape, EdgeLayout layout,
                       memory::data_type type = memory::data_type::f32);

// The layout oneDNN's convolutions choose for their activations on this
// machine (nChw16c or nChw8c for the direct JIT kernels, nhwc for the
// brgemm ones of newer CPUs), found by asking for a typical convolution
// with free layouts; plain when it is none of those.
EdgeLayout preferred_edge_layout(const dnnl::engine& engine);

// The first of nChw16c, nChw8c and nhwc, other than `preferred`, in which
// oneDNN has a generated kernel for that convolution: what the backend can
// be asked to compute in instead (Backend::compute_layouts); nullopt when
// there is none.
std::optional<EdgeLayout> other_compute_layout(const dnnl::engine& engine, EdgeLayout preferred);

// Whether oneDNN runs `pd` with one of its generated kernels (JIT or BRGEMM),
// not a reference or GEMM-based one.
bool is_generated_kernel(const dnnl::primitive_desc& pd);

// The channels-last or blocked edge layout a 4-D `desc` is stored in, as
// edge_desc describes it; nullopt for a plain or any other descriptor.
std::optional<EdgeLayout> laid_out_edge_layout(const memory::desc& desc);

// A descriptor of `dims` and `type` in the channels-last or blocked edge
// layout `like` is stored in (when both are 4-D), else plain.
memory::desc layout_like(const memory::desc& like, const memory::dims& dims,
                         memory::data_type type);

// Whether `desc` is dense and row-major for its dims, with no blocking,
// padding or offset: its bytes are those of a plain tensor (of its own data
// type, which callers compare where it matters).
bool is_plain(const memory::desc& desc);

}  // namespace collage::onednn
