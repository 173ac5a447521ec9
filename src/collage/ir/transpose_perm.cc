#include "collage/ir/transpose_perm.h"

#include <numeric>

namespace collage {

std::vector<std::int64_t> transpose_permutation(const Graph& graph, const Node& node) {
  const int rank = graph.type(node.inputs[0]).rank();
  std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = node.attributes.get_ints("perm", perm);
  if (static_cast<int>(perm.size()) != rank) return {};
  std::vector<bool> seen(perm.size(), false);
  for (std::int64_t axis : perm) {
    if (axis < 0 || axis >= rank || seen[static_cast<std::size_t>(axis)]) return {};
    seen[static_cast<std::size_t>(axis)] = true;
  }
  return perm;
}

}  // namespace collage
