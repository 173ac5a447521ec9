// What ONNX's recurrent ops (RNN, GRU, LSTM) say about their activations,
// read one way by every backend that runs them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

// The op's activations for one direction when the node names none: RNN's
// f, GRU's f and g, LSTM's f, g and h.
std::vector<std::string> default_recurrent_activations(std::string_view op_type);

// The activations of every direction, in order (forward's, then reverse's):
// the node's list or the op's defaults, a list of one direction's serving
// both. Throws Error naming the node when the list's length fits neither.
std::vector<std::string> recurrent_activations(const Node& node, int directions);

// Whether two activation names are the same name; ONNX's own examples write
// them in any letter case ("sigmoid", "Tanh").
bool same_activation(std::string_view a, std::string_view b);

}  // namespace collage
