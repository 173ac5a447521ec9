// Convolutions whose taps mostly read padding, as one product per tap.
//
// A dilated convolution on a small map reaches the input through each tap
// at only some output positions: DeepLab v3's ASPP convolution of dilation
// 12 on a 14x14 map reads the input through its off-centre taps for two
// rows or two columns of outputs only, 18 % of its (tap, output) pairs.
// im2col multiplies the rest by the zeros of the padding. Per tap, the
// outputs whose window reads the input through it form one box (a run of
// rows by a run of columns), so the convolution is a sum over taps of that
// tap's weights (K x C) times the input box it reads (C x box), added into
// the output box: the products im2col would make, without those of zeros.
// (Taps that never reach the input are trimmed from the graph before:
// ir/passes/trim_conv_taps.h.)
#pragma once

#include <vector>

#include "collage/backends/native/compute_kernels.h"

namespace collage::native {

// Whether a Conv of `shape` runs by taps: 2-D, one group, and at most half
// of its (tap, output) pairs read the input (so at most half of im2col's
// products are kept).
bool conv_by_taps_fits(const ConvShape& shape);
// conv_by_taps_fits of a Conv node's static shapes.
bool conv_by_taps_fits(const Graph& graph, const Node& node);

// The weights [K, C, kh, kw] as one K x C matrix per tap, [kh * kw][K][C].
std::vector<float> weights_by_tap(const Tensor& weights);

// y = conv(x, w) + bias (bias may be null) for a shape conv_by_taps_fits,
// plain NCHW. `by_tap` (may be null) is weights_by_tap(w); null, each call
// repacks w.
void run_conv_by_taps(const ConvShape& shape, const float* x, const float* w, const float* by_tap,
                      const float* bias, float* y, int threads);

}  // namespace collage::native
