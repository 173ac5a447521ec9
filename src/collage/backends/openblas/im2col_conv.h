// Im2colConv: ONNX Conv (1-D and 2-D, any groups, strides, pads, dilations
// and auto_pad) as matrix products.
//
// For each image and group, im2col lays the input patches out as a
// [C/g * kh * kw, OH * OW] matrix, and the output block [M/g, OH * OW] is the
// group's weights [M/g, C/g * kh * kw] times it: the ONNX weight layout is
// already that row-major matrix, so weights need no repacking. A 1x1,
// stride-1, unpadded convolution reads the input as that matrix directly.
// A group with one output channel (depthwise) is a matrix-vector product.
// Work is split across threads by (image, group) when there are at least as
// many of those as threads, each with its own workspace and a single-threaded
// BLAS call; otherwise by OpenBLAS inside each product, with im2col split by
// rows. The bias is added by the epilogue.
#pragma once

#include <cstdint>

#include "collage/backends/openblas/core_compute.h"
#include "collage/backends/openblas/operand.h"

namespace collage::openblas {

// A Conv node's sizes; a 1-D convolution is a 2-D one of height 1.
struct ConvGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  std::int64_t height = 1;
  std::int64_t width = 0;
  std::int64_t out_channels = 0;
  std::int64_t groups = 1;
  std::int64_t kernel_h = 1;
  std::int64_t kernel_w = 1;
  std::int64_t stride_h = 1;
  std::int64_t stride_w = 1;
  std::int64_t dilation_h = 1;
  std::int64_t dilation_w = 1;
  std::int64_t pad_top = 0;
  std::int64_t pad_left = 0;
  std::int64_t out_h = 1;
  std::int64_t out_w = 0;
  Shape output;

  // Rows of one group's patch matrix (C/g * kh * kw).
  std::int64_t patch_rows() const { return channels / groups * kernel_h * kernel_w; }
  // Output pixels per channel (OH * OW).
  std::int64_t pixels() const { return out_h * out_w; }
  // Whether the input already is the patch matrix (1x1, stride 1, no padding).
  bool pointwise() const;
};

// The geometry of a Conv node (float32, 1-D or 2-D). The optional bias is
// checked to have shape [M].
Result<ConvGeometry> analyze_conv(const Graph& graph, const Node& node);

// Writes the patch matrix of one image group: `input` points at its first
// channel, `patches` receives patch_rows() x pixels() floats.
void im2col(const ConvGeometry& geometry, const float* input, float* patches, int threads);

class Im2colConv : public CoreCompute {
 public:
  // Allocates the im2col workspace for `threads` once.
  Im2colConv(ConvGeometry geometry, Operand input, Operand weights, int threads);
  void run(std::span<const Tensor> inputs, float* out) override;

  // For tests: whether (image, group) tasks run in parallel with each other.
  bool task_parallel() const { return task_parallel_; }

 private:
  // One (image, group) task; `patches` is its workspace.
  void run_task(std::int64_t task, const float* x, const float* w, float* out, float* patches,
                int threads) const;

  ConvGeometry geometry_;
  Operand input_;
  Operand weights_;
  int threads_;
  bool task_parallel_ = false;
  // One patch matrix per concurrent task; empty for pointwise convolutions.
  Tensor workspace_;
};

}  // namespace collage::openblas
