// Model loading: one place that turns a model (a file or bytes) and input
// shapes into an imported, canonicalized Graph.
//
// Every front end sees the same canonical graph (constant sub-graphs folded
// by the native kernels), so what `collage info` reports is what a session
// executes and what the partitioner searches over.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "collage/backends/backend.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"

namespace collage {

// Imports and canonicalizes the model at `path` with the native evaluator,
// applying the graph optimizations of `level`; `stats`, when given, receives
// what canonicalization did; `data_shapes` are the shapes of data the caller
// holds for inputs (ImportOptions::data_shapes). Throws Error naming the file
// for anything the importer rejects, and for an input_shapes name the model
// has no input for.
Graph load_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                 GraphOptLevel level = GraphOptLevel::kAll, CanonicalizeStats* stats = nullptr,
                 const std::map<std::string, Shape>& data_shapes = {});

// The same for a model held in memory (the bytes of an .onnx file). External
// data is refused: there is no directory to resolve it against.
Graph load_model_bytes(const std::string& bytes, const std::map<std::string, Shape>& input_shapes,
                       GraphOptLevel level = GraphOptLevel::kAll,
                       const std::map<std::string, Shape>& data_shapes = {});

// One line saying which input dimensions the model left open and import set
// to kOpenDimSize (Graph::open_dims), with the --input-shape flags that fix
// them; nullopt when there are none.
std::optional<std::string> open_dims_warning(const Graph& graph);

// The shapes of the inputs with dimensions the model leaves dynamic
// (Graph::dynamic_dims), as `graph` has them.
std::map<std::string, Shape> dynamic_input_shapes(const Graph& graph);

// Adds the shape of each input with an open dimension to `input_shapes`, so
// that what is planned, loaded again by worker processes and saved in a plan
// is what was imported; returns open_dims_warning(graph).
std::optional<std::string> pin_open_dims(const Graph& graph,
                                         std::map<std::string, Shape>& input_shapes);

// `error`, raised while planning `graph`, with a hint when the model's
// open dimensions were set to kOpenDimSize and the error is not about an
// option: a model whose images are 1x1 may have operators no backend can
// run there (a 3x3 window, a stride), and the search's error would not say
// that the size is the cause.
Error with_open_dims_hint(const Error& error, const Graph& graph);

// The level a --graph-opt value names ("none", "basic" or "all"); Error otherwise.
GraphOptLevel graph_opt_level(const std::string& text);

// The ops of `graph` that `backend` cannot run, with how many nodes each.
std::map<std::string, int> unsupported_ops(const Graph& graph, const Backend& backend);

// "Foo (x3), Bar" — for messages listing unsupported_ops().
std::string describe_op_counts(const std::map<std::string, int>& counts);

// Throws Error naming the file and every op the native backend cannot run.
void require_native_support(const Graph& graph, const std::string& path);

// load_model(), then require_native_support() and check_max_memory()
// (resources.h): the model a command may plan and run.
Graph load_runnable_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                          GraphOptLevel level, const std::string& max_memory);

}  // namespace collage
