// Native kernels on values stored in a channels-last or blocked layout.
//
// Between two oneDNN convolutions a tensor is stored as oneDNN computes it
// (NHWC, nChw16c or nChw8c). The ops that sit between heavy kernels
// (elementwise chains and their broadcasts, pools, global pools, channel
// Concat and Gather, GroupNormalization, Resize of H and W, depthwise and Winograd convolutions)
// can run on it as it
// is, so that a native partition there costs no conversion: a native kernel whose every node
// runs_in_layout computes in the layout its edges arrive in (NativeBackend::compile).
//
// Both layouts are runs of channels: a 4-D [N, C, H, W] tensor is
// [N * C / lanes, H, W, lanes] floats, lanes = C for channels-last and the
// block for a blocked layout.
#pragma once

#include <span>

#include "collage/backends/backend.h"
#include "collage/backends/native/compute_kernels.h"

namespace collage::native {

// The channels of one run of `layout` for a tensor of `channels`.
std::int64_t layout_lanes(EdgeLayout layout, std::int64_t channels);

// Whether a value of `type` is stored differently in `layout` than plain
// (a 4-D tensor with more than one channel and one pixel), so a kernel
// must read it as laid out.
bool laid_out(const TensorType& type, EdgeLayout layout);

// The shape by which a value of `shape`, broadcast against a 4-D output
// stored in `layout`, is indexed there: channels-last [n, h, w, c]; blocked
// [n, c / block, h, w, block], or [n, 1, h, w, 1] for one channel. A shape
// of fewer axes is first padded in front with ones.
Shape laid_out_dims(const Shape& shape, EdgeLayout layout);

// Whether `node` runs on its values stored in `layout`: it is a float32
// elementwise op, a 2-D MaxPool (without Indices) or AveragePool, a global
// pool, a Concat or Gather of channels, a 4-D GroupNormalization, a Resize that keeps the batch
// and the channels (resize_in_lanes_fits), a 2-D depthwise
// Conv or a Conv on Winograd (winograd_in_layout_fits), or none of its values is laid_out; and each
// of its laid-out values fits the layout (edge_layout_fits).
bool runs_in_layout(const Graph& graph, const Node& node, EdgeLayout layout);

// Runs a pool, Concat, Gather, GroupNormalization, Resize or Conv `node` that
// runs_in_layout, its laid-out inputs and outputs stored in `layout`. A
// Conv takes what the kernel prepared for it (`conv`, may be null: its
// weights repacked, the activation of its store), a GroupNormalization
// the activation alone; other nodes take none.
void run_in_layout(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, EdgeLayout layout, int threads,
                   const ConvOperands* conv = nullptr);

}  // namespace collage::native
