// Model loading for the subcommands: one place that turns a model path and
// the --input-shape flags into an imported, canonicalized Graph.
//
// Every command sees the same canonical graph (constant sub-graphs folded by
// the native kernels), so what `info` reports is what `run` executes and what
// the partitioner later searches over.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"

namespace collage::cli {

// Parses every --input-shape value ("NAME=D0,D1,..."). Throws Error for
// malformed text or a name given twice.
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& flags);

// Imports and canonicalizes the model at `path` with the native evaluator,
// applying the graph optimizations of `level`; `stats`, when given, receives
// what canonicalization did. Throws Error naming the file for anything the
// importer rejects, and for an input_shapes name the model has no input for.
Graph load_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                 GraphOptLevel level = GraphOptLevel::kAll, CanonicalizeStats* stats = nullptr);

// Adds --graph-opt LEVEL (none, basic, all; default all) to `command`.
CLI::Option* add_graph_opt_flag(CLI::App& command, std::string& level);
// The level a --graph-opt value names (add_graph_opt_flag has checked it).
GraphOptLevel graph_opt_level(const std::string& text);

// The ops of `graph` that `backend` cannot run, with how many nodes each.
std::map<std::string, int> unsupported_ops(const Graph& graph, const Backend& backend);

// "Foo (x3), Bar" — for messages listing unsupported_ops().
std::string describe_op_counts(const std::map<std::string, int>& counts);

// Throws Error naming the file and every op the native backend cannot run.
void require_native_support(const Graph& graph, const std::string& path);

}  // namespace collage::cli
