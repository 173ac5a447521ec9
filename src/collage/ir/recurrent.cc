#include "collage/ir/recurrent.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "collage/ir/error.h"

namespace collage {

std::vector<std::string> default_recurrent_activations(std::string_view op_type) {
  if (op_type == "LSTM") return {"Sigmoid", "Tanh", "Tanh"};
  if (op_type == "GRU") return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

std::vector<std::string> recurrent_activations(const Node& node, int directions) {
  std::vector<std::string> names = default_recurrent_activations(node.op_type);
  const std::size_t per_direction = names.size();
  if (node.attributes.has("activations")) names = node.attributes.get_strings("activations");
  if (names.size() == per_direction && directions == 2) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  const std::size_t expected = per_direction * static_cast<std::size_t>(directions);
  if (names.size() != expected) {
    throw Error(fmt::format("{} activations given, {} expected", names.size(), expected),
                {.node = node.name, .field = "activations"});
  }
  return names;
}

bool same_activation(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace collage
