// Common-subexpression elimination: identical work is done once.
//
// Two nodes with the same op, attributes and inputs compute the same values;
// the second's readers can read the first's. Exporters repeat shape
// computations and small constants (each attention block builds its own
// copies of the same reshape shapes and scalars), and graph surgery leaves
// duplicate branches. Constants with equal type and bytes are merged first,
// so that nodes reading equal-but-separate constants also merge. Ops with a
// random result never merge.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

struct CommonSubexpressions {
  int constants = 0;
  int nodes = 0;
};

// Merges duplicate constants and duplicate nodes (in one topological sweep,
// so chains of duplicates merge whole). Prunes when anything merged.
CommonSubexpressions merge_common_subexpressions(Graph& graph);

}  // namespace collage
