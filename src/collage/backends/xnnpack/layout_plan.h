// LayoutPlan: the layout every 4-D value of a partition is stored in.
//
// XNNPACK's spatial operators need channels-last values, while reshapes and
// fully connected layers read the logical (plain) order. Transposes are not
// in this XNNPACK's subgraph API, so a value cannot change layout inside a
// runtime unless its two orders coincide (see is_layout_free). The plan
// groups the values that must share a layout (an elementwise op's input and
// output), intersects the layouts each group's ops accept, and picks one per
// group: channels-last where required, or where the group holds an edge the
// caller exchanges channels-last (no transpose at that edge), plain otherwise
// (plain inputs need no transpose at the partition's entry). A group no layout satisfies makes the
// partition fail to compile, naming the value; smaller partitions still
// compile, since every single supported node has a consistent plan.
#pragma once

#include <vector>

#include "collage/backends/xnnpack/channels_last.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::xnnpack {

// Whether `value` has exactly one layout in a partition: a computed 4-D
// value whose NCHW and NHWC orders differ. The plan places these and the
// builder keeps them where the plan put them; any other value is read in
// either layout by a reshape (layout-free), has only one (other ranks), or is
// re-laid out when the subgraph is built (constants).
bool is_layout_constrained(const Graph& graph, ValueId value);

class LayoutPlan {
 public:
  // Plans `partition`, whose nodes must all be supported (supports_node);
  // `channels_last_edges` are the partition inputs and outputs the caller
  // stores channels-last.
  static Result<LayoutPlan> make(const Graph& partition,
                                 const std::vector<ValueId>& channels_last_edges = {});

  // The layout of `value`. For a layout-free 4-D value this is only a
  // preference: channels-last when a spatial op reads it, so a partition input
  // feeding a convolution is staged channels-last and needs no reshape.
  Layout layout(ValueId value) const { return layouts_[static_cast<std::size_t>(value)]; }

 private:
  std::vector<Layout> layouts_;
};

}  // namespace collage::xnnpack
