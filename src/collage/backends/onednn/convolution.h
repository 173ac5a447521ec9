// Convolution: ONNX Conv and ConvTranspose as oneDNN (de)convolutions.
//
// Any number of groups (depthwise included), strides, dilations, explicit or
// automatic padding, over 1 to 3 spatial dimensions. Source, weights and
// destination use format_tag::any so oneDNN picks its blocked layouts;
// constant weights are reordered into that layout once, at compile time.
// The direct algorithm is used: Winograd, where oneDNN has it, trades
// accuracy for speed beyond what the reference comparison tolerates.
#pragma once

#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/post_ops.h"
#include "collage/backends/onednn/program.h"
#include "collage/backends/onednn/window.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct ConvolutionSpec {
  bool transposed = false;
  ValueId input = kNoValue;
  ValueId weights = kNoValue;
  // A 1-D tensor of output-channel count elements, or kNoValue.
  ValueId bias = kNoValue;
  ValueId output = kNoValue;
  memory::dim groups = 1;
  memory::dim out_channels = 0;
  memory::dims src_dims;
  memory::dims dst_dims;
  // oneDNN's weight dims ([g,] O, I, k...) and how they lie in the ONNX
  // weight buffer (strides of a view; ConvTranspose stores I before O).
  memory::dims weights_dims;
  memory::dims weights_strides;
  WindowDims window;
};

// oneDNN's weight dims of a deconvolution and their strides in a
// ConvTranspose's weight buffer: ONNX stores [I, O/g, k...] = [g, I/g, O/g,
// k...]; oneDNN wants [g,] O/g, I/g, k..., so the view swaps the strides of
// I and O.
struct WeightsView {
  memory::dims dims;
  memory::dims strides;
};
WeightsView deconvolution_weights(memory::dim groups, const Shape& w);

// The window of a convolution (or a transposed one) of input shape x by
// weights w in oneDNN's terms, checked against the output shape y.
Result<WindowDims> convolution_window(const Node& node, bool transposed, const Shape& x,
                                      const Shape& w, const Shape& y);

// Decodes a Conv or ConvTranspose node, or says why oneDNN cannot run it.
Result<ConvolutionSpec> convolution_spec(const Graph& graph, const Node& node);

// Which 3x3 convolutions of stride 1 run oneDNN's Winograd kernel (where
// this machine has one): those where it is timed clearly faster than the
// direct kernel, with the reorders it needs (the default), or every one it
// can run, so that tests reach its numerics whatever the timing says.
enum class WinogradPolicy { kWhenFaster, kWhenAvailable };
void set_winograd_policy(WinogradPolicy policy);

// Adds the (de)convolution primitive with as many groups of `chain` fused
// as oneDNN runs well; returns how many. The last fused group's value (or
// spec.output, if none) holds the result; the caller runs the rest.
std::size_t emit_convolution(ProgramBuilder& builder, const ConvolutionSpec& spec,
                             const PostOpChain& chain);

}  // namespace collage::onednn
