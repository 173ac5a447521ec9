// What the estimator tests share: x -> a Relu -> b Abs (output), and
// candidates of spec "lib" over its nodes, named.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/partition/candidate_partition.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "partition/graph_builder.h"

namespace collage::testing {

struct EstimatorFixture {
  Graph graph;
  std::unique_ptr<DataflowGraph> dfg;
  PartitionSpecPtr spec = make_partition_spec("lib", nullptr);

  EstimatorFixture() {
    GraphBuilder b;
    ValueId x = b.input("x");
    b.output(b.op("Abs", {b.op("Relu", {x}, "a")}, "b"));
    graph = std::move(b.graph());
    dfg = std::make_unique<DataflowGraph>(graph);
  }
  CandidatePartition candidate(const std::vector<std::string>& names) const {
    return {SubGraph(*dfg, set_of(*dfg, names)), spec, "test"};
  }
};

}  // namespace collage::testing
