// The halide backend (style: fusing compiler). See halide_backend.cc.
#pragma once

#include <memory>

#include "collage/backends/backend.h"

namespace collage {

std::unique_ptr<Backend> make_halide_backend();

}  // namespace collage
