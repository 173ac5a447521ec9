// Collage: run an ONNX model partitioned across inference backends by
// measurement. The whole public C++ API:
//   collage/error.h    collage::Error, the one exception type
//   collage/array.h    collage::Array, inputs and outputs; .npy files
//   collage/session.h  collage::Session, a model compiled under a plan
//   collage/tuning.h   collage::tune, collage::compare, collage::backends
#pragma once

#include "collage/array.h"
#include "collage/error.h"
#include "collage/session.h"
#include "collage/tuning.h"

#define COLLAGE_VERSION_MAJOR 0
#define COLLAGE_VERSION_MINOR 1
#define COLLAGE_VERSION_PATCH 0

namespace collage {
// "0.1.0"
const char* version();
}  // namespace collage
