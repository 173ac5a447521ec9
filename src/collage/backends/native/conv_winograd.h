// Winograd convolution F(4x4, 3x3) for the native backend's Conv.
//
// A 3x3 convolution of stride 1 computes each 4x4 block of outputs from a
// 6x6 block of inputs. Winograd's minimal filtering (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016) transforms the
// block and the 3x3 weights into 6x6 arrays whose elementwise product,
// transformed back, is the 4x4 block: 36 products where the direct
// convolution takes 144. Summed over input channels, the 36 elementwise
// products become 36 matrix products [K x C] x [C x tiles], which run on
// the backend's sgemm; the transforms cost a pass over the input and one
// over the output. The transforms' constants (1/4, 1/6, 1/24 and powers
// of two up to 8) lose a few bits against the direct sum: about 5e-6 of
// the output's range for 24 to 256 channels.
#pragma once

#include <span>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/elementwise_math.h"

namespace collage::native {

// Whether run_winograd computes `shape`: 2-D, a 3x3 kernel, stride 1, no
// dilation, one group, and enough tiles and channels that the transforms
// pay for themselves.
bool winograd_fits(const ConvShape& shape);

// Whether a Conv node runs on Winograd: winograd_fits of its static shapes.
bool winograd_fits(const Graph& graph, const Node& node);

// Whether a Conv node runs on Winograd with its values stored in `layout`
// (layout_ops.h): winograd_in_lanes_fits of its static shapes.
bool winograd_in_layout_fits(const Graph& graph, const Node& node, EdgeLayout layout);

// Weights [K, C, 3, 3] transformed as run_winograd takes them ([36][K][C]),
// what a compiled kernel prepares once for a Conv with constant weights.
std::vector<float> winograd_weights(const Tensor& weights, int threads);

// y = conv(x, w) + bias (bias may be null) for a shape winograd_fits.
// x is NCHW, w is [K, C, 3, 3], y is NKHW. `transformed` (may be null):
// winograd_weights(w); without it, each call transforms w.
void run_winograd(const ConvShape& shape, const float* x, const float* w, const float* bias,
                  float* y, int threads, const float* transformed = nullptr);

// Whether run_winograd_in_lanes computes `shape` with its input stored in
// runs of `in_lanes` channels and its output in runs of `out_lanes`: it
// winograd_fits and every count of channels is a multiple of eight.
bool winograd_in_lanes_fits(const ConvShape& shape, std::int64_t in_lanes, std::int64_t out_lanes);

// run_winograd for x stored [N * C / in_lanes, H, W, in_lanes] and y stored
// [N * K / out_lanes, OH, OW, out_lanes] (layout_ops.h: channels-last or
// blocked), eight channels to a vector; the weights and bias are plain.
// Then applies `epilogue`'s unary ops to y in order (a fused activation).
void run_winograd_in_lanes(const ConvShape& shape, const float* x, std::int64_t in_lanes,
                           const float* w, const float* bias, float* y, std::int64_t out_lanes,
                           int threads, const float* transformed,
                           std::span<const ElementwiseFn> epilogue);

}  // namespace collage::native
