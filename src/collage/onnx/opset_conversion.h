// Opset conversion: models of opsets 18 to 21 in the opset-17 form that
// ONNX shape inference knows.
//
// Current exporters write opset 18 and later (PyTorch 2 writes 18), but
// libonnx 1.12, whose schemas type every value at import, knows opsets up to
// 17. Most operators read the same in all of them; those that do not are
// rewritten before inference into their opset-17 form: parameters that moved
// from attributes to inputs move back (Reduce* axes), new conveniences become
// what they stand for (Split's num_outputs as explicit sizes, Pad's and
// Resize's axes as full-rank parameters computed from the input's shape,
// which folding makes constant). Opset 20's Gelu, 18's Mish and 18's and
// 21's GroupNormalization have no opset-17 form and stay as they are
// (type_inference.cc types them). What
// opset 17 cannot express (Resize's antialiasing, Pad's wrap mode, Scatter's
// max and min reductions) is reported, naming the node.
#pragma once

#include <cstdint>

#include "collage/ir/graph.h"

namespace collage {

// The opset models are converted to: the newest that libonnx 1.12 knows.
inline constexpr std::int64_t kInferenceOpset = 17;

// Rewrites the nodes of `graph`, read from a model of opset graph.opset, into
// their opset-17 form, and sets graph.opset to 17 (graph.source_opset keeps
// the model's). A graph of opset 17 or older is left as it is. Runs before
// types are known: new parameters are computed in the graph. Throws Error
// naming the node for a form opset 17 cannot express.
void convert_to_inference_opset(Graph& graph);

}  // namespace collage
