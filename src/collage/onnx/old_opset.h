// Models of opsets 1 to 6: read through ONNX's version converter, which
// writes them in opset 7, the first the importer reads.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>

namespace collage {

// A model of opset 1 to 6 as ONNX's version converter writes it in opset 7,
// the first the importer reads: the ops whose form changed since (Add's
// `broadcast` attribute, BatchNormalization's `spatial`, Reshape's shape as
// an attribute, ...) in their newer form. The converter needs the shapes
// of what it rewrites (an Add with `axis` gains an Unsqueeze), so ONNX's
// inference types the model first. Other models as they are. Throws
// Error (field opset_import, or the node) for a model the converter
// cannot take.
std::shared_ptr<const onnx::ModelProto> in_readable_opset(
    std::shared_ptr<const onnx::ModelProto> model);

}  // namespace collage
