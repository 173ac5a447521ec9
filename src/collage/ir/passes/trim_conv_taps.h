// Trimming the taps of a Conv that read only its zero padding.
//
// A dilated Conv on a small image can have taps that fall in the padding
// for every output position: DeepLab v3's ASPP runs 3x3 convolutions of
// dilation 12, 24 and 36 with "same" padding on a 14x14 feature map (at a
// 224x224 input), where every tap but the centre of the dilation-24 and -36
// kernels reads padding, so each is a 1x1 convolution that spends nine
// times its work multiplying zeros. A library that gathers its windows
// (im2col, or oneDNN's dilated kernels) does that work: oneDNN ran such a
// 960 -> 256 convolution in 6 to 12 ms and the same 1x1 convolution in
// about 1. Which taps can read the input depends only on the static shape
// and the attributes, and along each spatial axis the taps that can form
// one run, so the kernel shrinks to the run of live taps on every axis and
// the pads shrink by the dilated width of what was cut: the same sums, term
// for term.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// For every Conv of the default domain with a constant float32 weight,
// static shapes, auto_pad NOTSET (explicit pads) and a tap that reads only
// padding at every output position along some spatial axis: slices the
// weight to the taps that read the input, and lowers the pads by what was
// cut (never below zero: a tap is kept where cutting it would need a
// negative pad). A trimmed axis of one tap gets dilation 1. Returns the
// number of Convs rewritten.
int trim_conv_taps(Graph& graph);

}  // namespace collage
