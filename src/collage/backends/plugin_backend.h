// A backend from a shared library (include/collage/backend_plugin.h): the
// Backend interface over the plugin's C functions. Graphs reach the plugin
// as collage_graph views of Collage's own (shapes, attributes, weights
// without a copy); tensors as pointers to their buffers.
#pragma once

#include <memory>
#include <string>

#include "collage/backends/backend.h"

namespace collage {

// Loads the plugin at `path` (dlopen, its entry symbol, the ABI checks).
// Throws Error naming the file for a library that does not load, lacks the
// entry symbol, is of another ABI version, leaves a required member unset,
// names itself badly, or declares patterns that do not read.
std::unique_ptr<Backend> load_plugin_backend(const std::string& path);

}  // namespace collage
