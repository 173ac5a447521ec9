// Boundary costs: the layout conversions a plan pays between partitions.
//
// A candidate is timed with its 4-D edges in the layout its backend
// computes in (preferred_edges, measurer.h), as it runs beside partitions
// of its own backend. In a plan, compile_plan negotiates each boundary
// value's layout (negotiate_edge_layouts): where the two sides agree the
// value is handed over as it is, and where the layout family changes one
// side converts it. Those conversions are what the candidates' costs leave
// out. The search charges them on its edges: when a candidate is placed
// next to partitions already on the path, it pays the conversions those
// boundaries need (per pair of backends, layout and tensor size); a graph
// input or output is timed plain, as the plan hands it over, so its
// conversion is in the candidate's own time. A lone partition of
// another family between two oneDNN convolutions costs what it really
// does. What one conversion costs is measured the way the side that does it
// converts (oneDNN with a reorder primitive, XNNPACK with tiled transposes),
// once per machine, tensor shape, layout and direction, and cached like any
// measurement.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/cost/measurement_cache.h"
#include "collage/partition/dataflow_graph.h"

namespace collage {

// Seconds of conversion at one boundary, by the side that does it.
struct BoundaryCharge {
  double producer_seconds = 0;
  double consumer_seconds = 0;
  double total() const { return producer_seconds + consumer_seconds; }
};

// One conversion at a boundary: a 4-D float32 tensor from plain into
// `layout` or, with `to_plain`, back, done the way `backend` converts
// (Backend::layout_conversion; the tiled transpose of ir/block_transpose.h
// for a backend without a conversion of its own, or none given).
struct LayoutChange {
  EdgeLayout layout = EdgeLayout::kPlain;
  bool to_plain = false;
  const Backend* backend = nullptr;
};

// Seconds of one conversion of a tensor on this machine at `threads`
// threads, timed once per shape, layout, direction and converter and kept
// in `cache` (nullptr: in memory only) under `machine`.
class ConversionCosts {
 public:
  ConversionCosts(MeasurementCache* cache, std::string machine, int threads)
      : cache_(cache), machine_(std::move(machine)), threads_(threads) {}
  virtual ~ConversionCosts() = default;

  // 0 for plain and for a tensor that is the same in every layout.
  virtual double seconds(const TensorType& type, const LayoutChange& change);

 protected:
  // Times the conversion (overridden by tests).
  virtual double measure(const TensorType& type, const LayoutChange& change);

 private:
  MeasurementCache* cache_;
  std::string machine_;
  int threads_;
  std::map<std::string, double> known_;
};

// A partition placed in a plan, or on a search's path so far.
struct PlacedPartition {
  std::string backend;
  const IndexSet* nodes = nullptr;
};

// Where operators are placed: the partition that holds dfg index i, or
// nothing where none does (yet). It tells what layout a partition that
// follows layouts computes in: the one its inputs come in.
using PlacedOperators = std::function<std::optional<PlacedPartition>(PostDfsIndex)>;

class BoundaryCosts {
 public:
  virtual ~BoundaryCosts() = default;
  // The conversions of the values that operator or graph input `producer`
  // (a dfg index) hands from the partition `from_nodes` of backend `from`
  // ("" and null: `producer` is a graph input) to the partition `to_nodes`
  // of backend `to`, or, with `to_nodes` null, to the graph's outputs.
  // `placement`, when given, places the other operators (both partitions
  // included).
  virtual BoundaryCharge charge(const DataflowGraph& dfg, PostDfsIndex producer,
                                const std::string& from, const IndexSet* from_nodes,
                                const IndexSet* to_nodes, const std::string& to,
                                const PlacedOperators* placement = nullptr) = 0;

  // A number for how the partition `nodes` of `backend`, placed as
  // `placement` says, meets the partitions still to be placed: two routes of
  // a search whose partitions at the edge of the covered set are on the
  // same backends, with the same numbers, are charged alike at the
  // boundaries still to come. 0 unless a subclass tells partitions of one
  // backend apart; below 4096 (a search keeps it in 12 bits).
  virtual std::uint32_t edge_class(const DataflowGraph& /*dfg*/, const std::string& /*backend*/,
                                   const IndexSet& /*nodes*/,
                                   const PlacedOperators& /*placement*/) {
    return 0;
  }
};

// Charges what edge-layout negotiation leaves to convert, with each side
// measured in its backend's first layout.
//
// A side that follows its neighbours' layouts (follows_layouts) computes in
// the layout its first laid-out input comes in, as a plan settles it
// (negotiate_edge_layouts): with `placement`, that layout is found from the
// partitions that feed it (through other followers), and the follower is
// charged like a partition timed in it, converting its own way. A native
// Swish between a oneDNN convolution in nChw16c and an XNNPACK one in NHWC
// computes in nChw16c and hands XNNPACK a plain tensor: two conversions,
// which in EfficientNet-B0's searched plan cost 1.6 ms of 9.5 and were
// charged nothing. A follower fed only plain tensors computes plain.
// Without `placement` (or where what feeds it is not placed yet) a
// follower's boundary costs nothing.
class LayoutBoundaryCosts : public BoundaryCosts {
 public:
  LayoutBoundaryCosts(std::vector<const Backend*> backends, ConversionCosts& conversions)
      : backends_(std::move(backends)), conversions_(conversions) {}

  BoundaryCharge charge(const DataflowGraph& dfg, PostDfsIndex producer, const std::string& from,
                        const IndexSet* from_nodes, const IndexSet* to_nodes, const std::string& to,
                        const PlacedOperators* placement = nullptr) override;
  // 0 for a partition that does not follow layouts; for a follower, 1 while
  // its layout is unknown, else 2 + the layout it computes in.
  std::uint32_t edge_class(const DataflowGraph& dfg, const std::string& backend,
                           const IndexSet& nodes, const PlacedOperators& placement) override;

 private:
  const Backend* find(const std::string& name) const;
  // Whether the partition `nodes` of `backend` follows layouts.
  static bool follows(const Backend* backend, const DataflowGraph& dfg, const IndexSet* nodes);
  // The layout the follower `nodes` of `backend` computes in, given where
  // its producers are placed; nothing when none of them is placed and it
  // reads no graph input. `known`: the followers settled so far in this
  // call (a follower fed by followers that share feeders is settled once).
  using SettledFollowers = std::map<const IndexSet*, std::optional<EdgeLayout>>;
  std::optional<EdgeLayout> followed_layout(const DataflowGraph& dfg, const Backend& backend,
                                            const IndexSet& nodes, const PlacedOperators& placement,
                                            SettledFollowers& known) const;
  std::optional<EdgeLayout> followed_layout(const DataflowGraph& dfg, const Backend& backend,
                                            const IndexSet& nodes,
                                            const PlacedOperators& placement) const {
    SettledFollowers known;
    return followed_layout(dfg, backend, nodes, placement, known);
  }

  std::vector<const Backend*> backends_;
  ConversionCosts& conversions_;
};

}  // namespace collage
