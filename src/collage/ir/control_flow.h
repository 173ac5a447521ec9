// Control flow: If, Loop and Scan, the ONNX ops that run graphs of their own.
//
// A control-flow node holds its bodies as graph attributes (Subgraph):
// If's then_branch and else_branch, Loop's and Scan's body. A body reads
// values of the enclosing graph by name in ONNX; here every such value is
// explicit: the node takes it as one of its last inputs and the body as one
// of its last inputs (Graph::captured), so a partition, a pass or the
// executor sees the node's whole dataflow. If's two branches capture the
// same list. The ONNX export names them back (onnx/exporter.h).
//
// The node's formal inputs come first, as in ONNX:
//   If:   cond, captured...
//   Loop: M (trip count, optional), cond (optional), v_initial..., captured...
//   Scan: initial states..., scan inputs..., captured...
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

// If, Loop or Scan of the default domain with its bodies.
bool is_control_flow(const Node& node);

// The node's bodies (If: then, else), in attribute order; empty for other nodes.
std::vector<const Graph*> bodies(const Node& node);

// The attribute names of the node's bodies, in bodies() order
// ("then_branch", "else_branch"; "body").
std::vector<std::string> body_names(const Node& node);

// The node's inputs before the captured ones (all of them for other nodes).
std::size_t formal_inputs(const Node& node);

// Whether every value of `graph` has a static type. An If's branch that
// could not be typed for the model's shapes has not: it cannot run for
// them, and is refused only if taken.
bool is_typed(const Graph& graph);

// The op types ("Conv", "com.microsoft.QLinearAdd") of the nodes of `graph`
// that `supported` refuses, with their counts. A refused control-flow node
// counts as the refused ops its typed bodies hold, when they hold any, else
// as itself.
std::map<std::string, int> unsupported_op_counts(
    const Graph& graph, const std::function<bool(const Graph&, const Node&)>& supported);

// Calls `visit` with every node of `graph` and of its bodies, nested, each
// with the graph that holds it; a node comes before its bodies' nodes.
void for_each_body_node(const Graph& graph,
                        const std::function<void(const Graph&, const Node&)>& visit);

}  // namespace collage
