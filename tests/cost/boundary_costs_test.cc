#include "collage/cost/boundary_costs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "collage/ir/error.h"
#include "cost/layout_backend.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

using testing::LayoutBackend;

// A plain backend whose Relus run in any layout (Backend::runs_in_layout),
// as native's do.
class FollowingBackend : public LayoutBackend {
 public:
  using LayoutBackend::LayoutBackend;
  bool runs_in_layout(const Graph&, const Node& node, EdgeLayout) const override {
    return node.op_type == "Relu";
  }
};

// A conversion that counts its runs.
class CountedConversion : public LayoutConversion {
 public:
  explicit CountedConversion(int* runs) : runs_(runs) {}
  void run(const void*, void*) override { ++*runs_; }

 private:
  int* runs_;
};

// A layout backend that converts its own way.
class ConvertingBackend : public LayoutBackend {
 public:
  using LayoutBackend::LayoutBackend;
  mutable int runs = 0;
  std::unique_ptr<LayoutConversion> layout_conversion(const TensorType&, EdgeLayout, bool,
                                                      int) const override {
    return std::make_unique<CountedConversion>(&runs);
  }
};

// Every conversion costs 1 second per million elements; counts measurements
// and keeps the conversions asked for.
class CountingConversions : public ConversionCosts {
 public:
  using ConversionCosts::ConversionCosts;
  int measured = 0;
  std::vector<LayoutChange> changes;

  double seconds(const TensorType& type, const LayoutChange& change) override {
    changes.push_back(change);
    return ConversionCosts::seconds(type, change);
  }

 protected:
  double measure(const TensorType& type, const LayoutChange&) override {
    ++measured;
    return static_cast<double>(type.numel()) / 1e6;
  }
};

LayoutChange into(EdgeLayout layout, const Backend* backend = nullptr) {
  return LayoutChange{layout, false, backend};
}

TEST(ConversionCostsTest, PlainAndLayoutFreeTensorsCostNothing) {
  CountingConversions conversions(nullptr, "machine", 1);
  EXPECT_EQ(conversions.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kPlain)), 0.0);
  EXPECT_EQ(conversions.seconds(f32({1, 16, 1, 1}), into(EdgeLayout::kChannelsLast)), 0.0);
  EXPECT_EQ(conversions.seconds(f32({1, 1, 8, 8}), into(EdgeLayout::kChannelsLast)), 0.0);
  EXPECT_EQ(conversions.seconds(f32({16, 64}), into(EdgeLayout::kChannelsLast)), 0.0);
  EXPECT_EQ(conversions.seconds(f32({1, 12, 8, 8}), into(EdgeLayout::kBlocked16)), 0.0);
  EXPECT_EQ(conversions.measured, 0);
}

TEST(ConversionCostsTest, EachShapeAndLayoutIsMeasuredOncePerMachineAndKept) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "collage_conversion_costs_test.sqlite").string();
  std::filesystem::remove(path);
  {
    auto cache = MeasurementCache::open(path);
    CountingConversions conversions(cache.get(), "machine", 2);
    EXPECT_DOUBLE_EQ(conversions.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kChannelsLast)),
                     1024e-6);
    EXPECT_DOUBLE_EQ(conversions.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kChannelsLast)),
                     1024e-6);
    EXPECT_DOUBLE_EQ(conversions.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kBlocked16)),
                     1024e-6);
    EXPECT_EQ(conversions.measured, 2);
  }
  auto cache = MeasurementCache::open(path);
  CountingConversions again(cache.get(), "machine", 2);
  EXPECT_DOUBLE_EQ(again.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kChannelsLast)), 1024e-6);
  EXPECT_EQ(again.measured, 0);
  CountingConversions other_machine(cache.get(), "another machine", 2);
  other_machine.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kChannelsLast));
  EXPECT_EQ(other_machine.measured, 1);
  cache.reset();
  std::filesystem::remove(path);
}

TEST(ConversionCostsTest, AMeasuredConversionTakesTime) {
  ConversionCosts conversions(nullptr, "machine", 1);
  for (bool to_plain : {false, true}) {
    for (EdgeLayout layout : {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8}) {
      EXPECT_GT(conversions.seconds(f32({1, 32, 28, 28}), LayoutChange{layout, to_plain}), 0.0);
    }
  }
}

TEST(ConversionCostsTest, EightBitValuesGoChannelsLastButNeverBlocked) {
  const TensorType u8{DType::kUInt8, {1, 32, 28, 28}};
  EXPECT_TRUE(edge_layout_fits(EdgeLayout::kChannelsLast, u8));
  EXPECT_FALSE(edge_layout_fits(EdgeLayout::kBlocked16, u8));
  EXPECT_FALSE(edge_layout_free(u8));
  EXPECT_TRUE(edge_layout_free(TensorType{DType::kInt8, {1, 32, 1, 1}}));
  EXPECT_TRUE(edge_layout_free(TensorType{DType::kInt64, {1, 32, 28, 28}}));
  // A backend computing blocked first is timed channels-last on 8-bit
  // values, and two such backends exchange them channels-last.
  const LayoutBackend blocked(
      "blocked", {EdgeLayout::kBlocked16, EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  const LayoutBackend nhwc("nhwc", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  EXPECT_EQ(timed_edge_layout(blocked, u8), EdgeLayout::kChannelsLast);
  EXPECT_EQ(timed_edge_layout(blocked, f32({1, 32, 28, 28})), EdgeLayout::kBlocked16);
  EXPECT_EQ(agreed_edge_layout(blocked, {&nhwc}, u8), EdgeLayout::kChannelsLast);
  // Their conversion is timed on bytes.
  ConversionCosts conversions(nullptr, "machine", 1);
  EXPECT_GT(conversions.seconds(u8, into(EdgeLayout::kChannelsLast)), 0.0);
  EXPECT_EQ(conversions.seconds(u8, into(EdgeLayout::kBlocked16)), 0.0);
}

TEST(ConversionCostsTest, DirectionsAndConvertersAreMeasuredApart) {
  CountingConversions conversions(nullptr, "machine", 1);
  const LayoutBackend nhwc("nhwc", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  const TensorType type = f32({1, 16, 8, 8});
  conversions.seconds(type, into(EdgeLayout::kChannelsLast));
  conversions.seconds(type, LayoutChange{EdgeLayout::kChannelsLast, true});
  conversions.seconds(type, into(EdgeLayout::kChannelsLast, &nhwc));
  conversions.seconds(type, LayoutChange{EdgeLayout::kChannelsLast, true, &nhwc});
  EXPECT_EQ(conversions.measured, 4);
  conversions.seconds(type, LayoutChange{EdgeLayout::kChannelsLast, true, &nhwc});
  EXPECT_EQ(conversions.measured, 4);
}

TEST(ConversionCostsTest, ABackendsOwnConversionIsTheOneTimed) {
  ConversionCosts conversions(nullptr, "machine", 1);
  const ConvertingBackend own("own", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  conversions.seconds(f32({1, 16, 8, 8}), into(EdgeLayout::kChannelsLast, &own));
  EXPECT_GT(own.runs, 0);
}

// x[1,16,8,8] -> a Relu -> b Relu -> c Relu (graph output)
Graph relu_chain() {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 16, 8, 8}));
  ValueId a = g.add_value("a", f32({1, 16, 8, 8}));
  g.add_node("Relu", {x}, {a}, {}, "a");
  ValueId b = g.add_value("b", f32({1, 16, 8, 8}));
  g.add_node("Relu", {a}, {b}, {}, "b");
  ValueId c = g.add_value("c", f32({1, 16, 8, 8}));
  g.add_node("Relu", {b}, {c}, {}, "c");
  g.add_output(c);
  return g;
}

// The dfg index of the operator named `node`.
PostDfsIndex node_index(const DataflowGraph& dfg, const std::string& node) {
  for (std::size_t i = 0; i < dfg.size(); ++i) {
    const auto index = static_cast<PostDfsIndex>(i);
    if (dfg.is_operator(index) && dfg.node(index).name == node) return index;
  }
  throw Error("no node " + node);
}

// The partition of the one operator named `node`.
IndexSet node_set(const DataflowGraph& dfg, const std::string& node) {
  IndexSet set = dfg.empty_set();
  set.add(node_index(dfg, node));
  return set;
}

// A placement of these partitions (backend, nodes), nothing else placed.
PlacedOperators placed_as(std::vector<PlacedPartition> partitions) {
  return [partitions = std::move(partitions)](PostDfsIndex i) -> std::optional<PlacedPartition> {
    for (const PlacedPartition& partition : partitions) {
      if (partition.nodes->contains(i)) return partition;
    }
    return std::nullopt;
  };
}

class LayoutBoundaryCostsTest : public ::testing::Test {
 protected:
  LayoutBoundaryCostsTest()
      : graph_(relu_chain()),
        dfg_(graph_),
        conversions_(nullptr, "machine", 1),
        boundaries_({&plain_, &nhwc_, &blocked_, &following_}, conversions_) {}

  PostDfsIndex index(const std::string& node) const { return node_index(dfg_, node); }
  IndexSet set_of(const std::string& node) const { return node_set(dfg_, node); }
  BoundaryCharge between(const std::string& from, const std::string& to) {
    IndexSet writer = set_of("a");
    IndexSet reader = set_of("b");
    return boundaries_.charge(dfg_, index("a"), from, &writer, &reader, to);
  }

  // One conversion of a [1,16,8,8] tensor.
  static constexpr double kOne = 1024e-6;
  LayoutBackend plain_{"plain", {EdgeLayout::kPlain}};
  LayoutBackend nhwc_{"nhwc", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain}};
  LayoutBackend blocked_{"blocked",
                         {EdgeLayout::kBlocked16, EdgeLayout::kChannelsLast, EdgeLayout::kPlain}};
  FollowingBackend following_{"following", {EdgeLayout::kPlain}};
  Graph graph_;
  DataflowGraph dfg_;
  CountingConversions conversions_;
  LayoutBoundaryCosts boundaries_;
};

TEST_F(LayoutBoundaryCostsTest, TwoPartitionsOfOneLayoutFamilyConvertNothing) {
  EXPECT_EQ(between("nhwc", "nhwc").total(), 0.0);
  EXPECT_EQ(between("blocked", "blocked").total(), 0.0);
  EXPECT_EQ(between("plain", "plain").total(), 0.0);
}

TEST_F(LayoutBoundaryCostsTest, TheSideTimedInAnotherLayoutThanTheAgreedOnePays) {
  // nhwc hands plain a plain tensor: nhwc converts.
  BoundaryCharge to_plain = between("nhwc", "plain");
  EXPECT_DOUBLE_EQ(to_plain.producer_seconds, kOne);
  EXPECT_EQ(to_plain.consumer_seconds, 0.0);
  BoundaryCharge from_plain = between("plain", "nhwc");
  EXPECT_EQ(from_plain.producer_seconds, 0.0);
  EXPECT_DOUBLE_EQ(from_plain.consumer_seconds, kOne);
  // blocked and nhwc agree on channels-last: blocked converts.
  BoundaryCharge mixed = between("blocked", "nhwc");
  EXPECT_DOUBLE_EQ(mixed.producer_seconds, kOne);
  EXPECT_EQ(mixed.consumer_seconds, 0.0);
}

TEST_F(LayoutBoundaryCostsTest, APartitionThatFollowsLayoutsConvertsNothingOnEitherSide) {
  for (const char* other : {"nhwc", "blocked", "plain"}) {
    EXPECT_EQ(between("following", other).total(), 0.0) << other;
    EXPECT_EQ(between(other, "following").total(), 0.0) << other;
  }
  EXPECT_TRUE(conversions_.changes.empty());
}

// a (producer) -> b (follower) -> c: b computes in the layout a hands it.
class FollowerBetweenTest : public LayoutBoundaryCostsTest {
 protected:
  // The charge at b's boundary with c, a's and c's backends given: b
  // follows, with a, b and c placed.
  BoundaryCharge into_c(const std::string& a_backend, const std::string& c_backend) {
    place(a_backend, c_backend);
    return boundaries_.charge(dfg_, index("b"), "following", &b_, &c_, c_backend, &placement_);
  }
  // b's edge class, as placed by the last charge.
  std::uint32_t edge_class_of_b() {
    return boundaries_.edge_class(dfg_, "following", b_, placement_);
  }
  const PlacedOperators& placement() const { return placement_; }
  // The charge at a's boundary with b.
  BoundaryCharge into_b(const std::string& a_backend, const std::string& c_backend) {
    place(a_backend, c_backend);
    return boundaries_.charge(dfg_, index("a"), a_backend, &a_, &b_, "following", &placement_);
  }

 private:
  void place(const std::string& a_backend, const std::string& c_backend) {
    placement_ = placed_as({{a_backend, &a_}, {"following", &b_}, {c_backend, &c_}});
  }

  IndexSet a_ = set_of("a");
  IndexSet b_ = set_of("b");
  IndexSet c_ = set_of("c");
  PlacedOperators placement_;
};

TEST_F(FollowerBetweenTest, AFollowerBetweenTwoLayoutFamiliesPaysTheConversions) {
  // b computes in a's nChw16c, which nhwc does not take: b hands over plain
  // (its conversion), and nhwc converts to NHWC.
  const BoundaryCharge charge = into_c("blocked", "nhwc");
  EXPECT_DOUBLE_EQ(charge.producer_seconds, kOne);
  EXPECT_DOUBLE_EQ(charge.consumer_seconds, kOne);
  ASSERT_EQ(conversions_.changes.size(), 2u);
  EXPECT_EQ(conversions_.changes[0].layout, EdgeLayout::kBlocked16);
  EXPECT_TRUE(conversions_.changes[0].to_plain);
  EXPECT_EQ(conversions_.changes[0].backend, &following_);
  EXPECT_EQ(conversions_.changes[1].layout, EdgeLayout::kChannelsLast);
  EXPECT_FALSE(conversions_.changes[1].to_plain);
  EXPECT_EQ(conversions_.changes[1].backend, &nhwc_);
  // Into b, from the layout it computes in: nothing.
  EXPECT_EQ(into_b("blocked", "nhwc").total(), 0.0);
}

TEST_F(FollowerBetweenTest, AFollowerWithinOneFamilyOrFedPlainPaysWhatItsLayoutNeeds) {
  EXPECT_EQ(into_c("nhwc", "nhwc").total(), 0.0);
  EXPECT_EQ(into_c("blocked", "blocked").total(), 0.0);
  // blocked takes NHWC, so b hands it over as it computed it; blocked
  // converts to its own layout.
  const BoundaryCharge to_blocked = into_c("nhwc", "blocked");
  EXPECT_EQ(to_blocked.producer_seconds, 0.0);
  EXPECT_DOUBLE_EQ(to_blocked.consumer_seconds, kOne);
  // Fed plain, b computes plain: the reader in NHWC converts.
  const BoundaryCharge from_plain = into_c("plain", "nhwc");
  EXPECT_EQ(from_plain.producer_seconds, 0.0);
  EXPECT_DOUBLE_EQ(from_plain.consumer_seconds, kOne);
}

TEST_F(FollowerBetweenTest, AFollowersEdgeClassIsTheLayoutItComputesIn) {
  // Two routes to one covered set, b fed by blocked or by nhwc, meet c
  // differently: a search keeps them apart by this number.
  into_c("blocked", "nhwc");
  const std::uint32_t blocked = edge_class_of_b();
  into_c("nhwc", "nhwc");
  const std::uint32_t nhwc = edge_class_of_b();
  into_c("plain", "nhwc");
  const std::uint32_t plain = edge_class_of_b();
  EXPECT_EQ(blocked, 2 + static_cast<std::uint32_t>(EdgeLayout::kBlocked16));
  EXPECT_EQ(nhwc, 2 + static_cast<std::uint32_t>(EdgeLayout::kChannelsLast));
  EXPECT_EQ(plain, 2 + static_cast<std::uint32_t>(EdgeLayout::kPlain));
  // A partition that does not follow has one class.
  EXPECT_EQ(boundaries_.edge_class(dfg_, "nhwc", set_of("c"), placement()), 0u);
}

TEST_F(LayoutBoundaryCostsTest, AFollowerWhosePlaceIsUnknownIsChargedNothing) {
  IndexSet b = set_of("b");
  IndexSet c = set_of("c");
  // Nothing placed feeds b yet.
  const PlacedOperators nothing = placed_as({});
  EXPECT_EQ(boundaries_.charge(dfg_, index("b"), "following", &b, &c, "nhwc", &nothing).total(),
            0.0);
  // A follower still unknown is told apart from a partition that does not
  // follow.
  EXPECT_EQ(boundaries_.edge_class(dfg_, "following", b, nothing), 1u);
  EXPECT_TRUE(conversions_.changes.empty());
}

TEST_F(LayoutBoundaryCostsTest, EachSideConvertsItsOwnWayAndDirection) {
  between("nhwc", "plain");
  ASSERT_EQ(conversions_.changes.size(), 1u);
  EXPECT_EQ(conversions_.changes[0].layout, EdgeLayout::kChannelsLast);
  EXPECT_TRUE(conversions_.changes[0].to_plain);
  EXPECT_EQ(conversions_.changes[0].backend, &nhwc_);
  conversions_.changes.clear();
  between("plain", "blocked");
  ASSERT_EQ(conversions_.changes.size(), 1u);
  EXPECT_EQ(conversions_.changes[0].layout, EdgeLayout::kBlocked16);
  EXPECT_FALSE(conversions_.changes[0].to_plain);
  EXPECT_EQ(conversions_.changes[0].backend, &blocked_);
}

// A partition times the model's own inputs and outputs plain
// (Graph::model_edges), as the plan hands them over: no conversion to charge.
TEST_F(LayoutBoundaryCostsTest, GraphInputsAndOutputsAreTimedPlainAndChargeNothing) {
  IndexSet first = set_of("a");
  IndexSet middle = set_of("b");
  IndexSet last = set_of("c");
  PostDfsIndex x = 0;
  for (std::size_t i = 0; i < dfg_.size(); ++i) {
    if (dfg_.role(static_cast<PostDfsIndex>(i)) == DataflowGraph::Role::kInput) {
      x = static_cast<PostDfsIndex>(i);
    }
  }
  EXPECT_EQ(boundaries_.charge(dfg_, x, "", nullptr, &first, "nhwc").total(), 0.0);
  EXPECT_EQ(boundaries_.charge(dfg_, x, "", nullptr, &first, "plain").total(), 0.0);
  EXPECT_EQ(boundaries_.charge(dfg_, index("c"), "blocked", &last, nullptr, "").total(), 0.0);
  EXPECT_TRUE(conversions_.changes.empty());
  // b is not a graph output: nothing to hand over there.
  EXPECT_EQ(boundaries_.charge(dfg_, index("b"), "blocked", &middle, nullptr, "").total(), 0.0);
}

// A graph output that another partition also reads is handed over plain:
// its producer timed it plain, the reader in its own layout converts.
TEST(LayoutBoundaryCostsOutputTest, AGraphOutputReadOnIsChargedToItsReaderOnly) {
  Graph graph = relu_chain();
  graph.add_output(*graph.find_value("a"));
  const DataflowGraph dfg(graph);
  const LayoutBackend blocked("blocked", {EdgeLayout::kBlocked16, EdgeLayout::kPlain});
  CountingConversions conversions(nullptr, "machine", 1);
  LayoutBoundaryCosts boundaries({&blocked}, conversions);
  const IndexSet writer = node_set(dfg, "a");
  const IndexSet reader = node_set(dfg, "b");
  const BoundaryCharge charge =
      boundaries.charge(dfg, node_index(dfg, "a"), "blocked", &writer, &reader, "blocked");
  EXPECT_EQ(charge.producer_seconds, 0.0);
  EXPECT_GT(charge.consumer_seconds, 0.0);
  ASSERT_EQ(conversions.changes.size(), 1u);
  EXPECT_EQ(conversions.changes[0].layout, EdgeLayout::kBlocked16);
  EXPECT_FALSE(conversions.changes[0].to_plain);
}

// A follower whose nodes do not run in nChw16c, as native's Concat of a
// channel count the block does not divide.
class NhwcFollowingBackend : public LayoutBackend {
 public:
  using LayoutBackend::LayoutBackend;
  bool runs_in_layout(const Graph&, const Node& node, EdgeLayout layout) const override {
    return node.op_type == "Relu" && layout != EdgeLayout::kBlocked16;
  }
};

// The feeder hands the follower the first of its layouts that the follower
// runs in, as a plan negotiates it: here NHWC, not its nChw16c.
TEST(LayoutBoundaryCostsFollowerTest, AFollowerTakesTheFeedersFirstLayoutItRunsIn) {
  const Graph graph = relu_chain();
  const DataflowGraph dfg(graph);
  const LayoutBackend blocked(
      "blocked", {EdgeLayout::kBlocked16, EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  const LayoutBackend nhwc("nhwc", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  const NhwcFollowingBackend following("following", {EdgeLayout::kPlain});
  CountingConversions conversions(nullptr, "machine", 1);
  LayoutBoundaryCosts boundaries({&blocked, &nhwc, &following}, conversions);
  const IndexSet a = node_set(dfg, "a");
  const IndexSet b = node_set(dfg, "b");
  const IndexSet c = node_set(dfg, "c");
  const PlacedOperators placement = placed_as({{"blocked", &a}, {"following", &b}, {"nhwc", &c}});
  EXPECT_EQ(boundaries.edge_class(dfg, "following", b, placement),
            2 + static_cast<std::uint32_t>(EdgeLayout::kChannelsLast));
  // b computes in NHWC and hands nhwc its own layout: nothing to convert.
  EXPECT_EQ(
      boundaries.charge(dfg, node_index(dfg, "b"), "following", &b, &c, "nhwc", &placement).total(),
      0.0);
  EXPECT_TRUE(conversions.changes.empty());
}

// A graph output is handed over plain, so a follower that reads one
// computes plain, whatever its producer computes in.
TEST(LayoutBoundaryCostsOutputTest, AFollowerFedAGraphOutputComputesPlain) {
  Graph graph = relu_chain();
  graph.add_output(*graph.find_value("a"));
  const DataflowGraph dfg(graph);
  const LayoutBackend blocked("blocked", {EdgeLayout::kBlocked16, EdgeLayout::kPlain});
  const FollowingBackend following("following", {EdgeLayout::kPlain});
  CountingConversions conversions(nullptr, "machine", 1);
  LayoutBoundaryCosts boundaries({&blocked, &following}, conversions);
  const IndexSet a = node_set(dfg, "a");
  const IndexSet b = node_set(dfg, "b");
  const PlacedOperators placement = placed_as({{"blocked", &a}, {"following", &b}});
  EXPECT_EQ(boundaries.edge_class(dfg, "following", b, placement),
            2 + static_cast<std::uint32_t>(EdgeLayout::kPlain));
}

}  // namespace
}  // namespace collage
