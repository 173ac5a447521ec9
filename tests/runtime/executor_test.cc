#include "collage/runtime/executor.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// A kernel that interprets Neg, Relu and Add on f32 tensors, node by node,
// and records the buffers it was handed. It stands in for a backend so the
// executor is tested on its own.
class InterpretingKernel : public Kernel {
 public:
  explicit InterpretingKernel(Graph graph, std::vector<const void*>* seen_outputs = nullptr)
      : graph_(std::move(graph)), seen_outputs_(seen_outputs) {}

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    std::vector<Tensor> values(graph_.num_values());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      values[static_cast<std::size_t>(graph_.inputs()[i])] = inputs[i];
    }
    for (std::size_t v = 0; v < graph_.num_values(); ++v) {
      if (graph_.values()[v].is_constant()) values[v] = *graph_.values()[v].constant;
    }
    for (const Node& node : graph_.nodes()) {
      Tensor out = Tensor::allocate(graph_.type(node.outputs[0]));
      const float* a = values[static_cast<std::size_t>(node.inputs[0])].data<float>();
      float* y = out.data<float>();
      ScopedSpan span("interpret", SpanKind::kLayout);
      for (std::int64_t i = 0; i < out.numel(); ++i) {
        if (node.op_type == "Neg") y[i] = -a[i];
        if (node.op_type == "Relu") y[i] = a[i] > 0 ? a[i] : 0;
        if (node.op_type == "Add") {
          y[i] = a[i] + values[static_cast<std::size_t>(node.inputs[1])].data<float>()[i];
        }
      }
      values[static_cast<std::size_t>(node.outputs[0])] = out;
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Tensor& result = values[static_cast<std::size_t>(graph_.outputs()[i])];
      std::copy_n(result.data<float>(), result.numel(), outputs[i].data<float>());
      if (seen_outputs_ != nullptr) seen_outputs_->push_back(outputs[i].raw());
    }
  }

 private:
  Graph graph_;
  std::vector<const void*>* seen_outputs_;
};

// x -> Neg -> a -> Relu -> b -> Add(b, x) -> y (output)
Graph chain_model() {
  Graph g;
  ValueId x = g.add_input("x", f32({4}));
  ValueId a = g.add_value("a", f32({4}));
  ValueId b = g.add_value("b", f32({4}));
  ValueId y = g.add_value("y", f32({4}));
  g.add_node("Neg", {x}, {a});
  g.add_node("Relu", {a}, {b});
  g.add_node("Add", {b, x}, {y});
  g.add_output(y);
  return g;
}

CompiledPartition partition_of(const Graph& model, std::vector<NodeId> nodes,
                               std::vector<const void*>* seen_outputs = nullptr) {
  Graph graph = extract_subgraph(model, nodes);
  auto kernel = std::make_unique<InterpretingKernel>(graph, seen_outputs);
  return CompiledPartition{std::move(nodes), std::move(graph), std::move(kernel), "test"};
}

std::map<std::string, Tensor> input_x(std::vector<float> values) {
  Shape shape{static_cast<std::int64_t>(values.size())};
  return {{"x", Tensor::from_vector(values, shape)}};
}

std::vector<float> to_vector(const Tensor& tensor) {
  return {tensor.data<float>(), tensor.data<float>() + tensor.numel()};
}

Executor two_partition_executor(const Graph& model,
                                std::vector<const void*>* seen_outputs = nullptr) {
  std::vector<CompiledPartition> partitions;
  partitions.push_back(partition_of(model, {0, 1}, seen_outputs));
  partitions.push_back(partition_of(model, {2}));
  return Executor(model, std::move(partitions));
}

TEST(ExecutorTest, RunsPartitionsInOrderAndReturnsModelOutputs) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  auto outputs = executor.run(input_x({1, -2, 3, -4}));
  ASSERT_EQ(outputs.size(), 1u);
  // y = relu(-x) + x
  EXPECT_EQ(to_vector(outputs.at("y")), (std::vector<float>{1, 0, 3, 0}));
}

TEST(ExecutorTest, ReusesBoundaryTensorsAcrossRuns) {
  Graph model = chain_model();
  std::vector<const void*> seen;
  Executor executor = two_partition_executor(model, &seen);
  executor.run(input_x({1, 2, 3, 4}));
  executor.run(input_x({5, 6, 7, 8}));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(ExecutorTest, OutputsStayValidAfterTheNextRun) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  auto first = executor.run(input_x({-1, -1, -1, -1}));
  auto second = executor.run(input_x({2, 2, 2, 2}));
  EXPECT_EQ(to_vector(first.at("y")), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(to_vector(second.at("y")), (std::vector<float>{2, 2, 2, 2}));
}

TEST(ExecutorTest, RecordsARunSpanAndOneSpanPerPartitionPerTracedRun) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  executor.run(input_x({1, 2, 3, 4}));  // not traced
  TraceRecorder recorder;
  executor.record_into(&recorder);
  executor.run(input_x({1, 2, 3, 4}));
  executor.run(input_x({1, 2, 3, 4}));
  executor.record_into(nullptr);
  executor.run(input_x({1, 2, 3, 4}));  // not traced

  std::map<std::pair<int, int>, int> partition_spans;
  int runs = 0;
  int inside = 0;
  for (const TraceSpan& span : recorder.spans()) {
    if (span.kind == SpanKind::kRun) ++runs;
    if (span.kind == SpanKind::kPartition) ++partition_spans[{span.run, span.partition}];
    if (span.kind == SpanKind::kLayout) {
      ++inside;
      EXPECT_GE(span.partition, 0) << "a kernel's own span belongs to its partition";
    }
  }
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(partition_spans, (std::map<std::pair<int, int>, int>{
                                 {{0, 0}, 1}, {{0, 1}, 1}, {{1, 0}, 1}, {{1, 1}, 1}}));
  // Three nodes, each interpreted under a span, per run.
  EXPECT_EQ(inside, 6);
}

TEST(ExecutorTest, KernelSpansAreNotRecordedWithoutARecorder) {
  EXPECT_EQ(TraceRecorder::current(), nullptr);
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  executor.run(input_x({1, 2, 3, 4}));
  EXPECT_EQ(TraceRecorder::current(), nullptr);
}

TEST(ExecutorTest, RecordsOneTimingPerPartition) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  executor.run(input_x({1, 2, 3, 4}));
  ASSERT_EQ(executor.last_partition_seconds().size(), 2u);
  for (double seconds : executor.last_partition_seconds()) EXPECT_GE(seconds, 0.0);
}

TEST(ExecutorTest, MissingInputIsAnErrorNamingIt) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  try {
    executor.run({});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

TEST(ExecutorTest, UnknownInputNameIsAnError) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  auto inputs = input_x({1, 2, 3, 4});
  inputs["z"] = inputs.at("x");
  try {
    executor.run(inputs);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no input 'z'"), std::string::npos) << e.what();
  }
}

TEST(ExecutorTest, WrongShapeIsAnError) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  EXPECT_THROW(executor.run(input_x({1, 2, 3})), Error);
}

TEST(ExecutorTest, WrongDtypeIsAnError) {
  Graph model = chain_model();
  Executor executor = two_partition_executor(model);
  std::map<std::string, Tensor> inputs{{"x", Tensor::from_vector<std::int64_t>({1, 2, 3, 4}, {4})}};
  EXPECT_THROW(executor.run(inputs), Error);
}

TEST(ExecutorTest, PartitionsOutOfTopologicalOrderAreRejected) {
  Graph model = chain_model();
  std::vector<CompiledPartition> partitions;
  partitions.push_back(partition_of(model, {2}));
  partitions.push_back(partition_of(model, {0, 1}));
  EXPECT_THROW(Executor(model, std::move(partitions)), Error);
}

TEST(ExecutorTest, UncoveredModelOutputIsRejected) {
  Graph model = chain_model();
  std::vector<CompiledPartition> partitions;
  partitions.push_back(partition_of(model, {0, 1}));
  EXPECT_THROW(Executor(model, std::move(partitions)), Error);
}

TEST(ExecutorTest, ModelOutputThatIsAnInputIsReturnedAsACopy) {
  Graph model;
  ValueId x = model.add_input("x", f32({2}));
  model.add_output(x);
  Executor executor(model, {});
  auto inputs = input_x({3, 4});
  auto outputs = executor.run(inputs);
  EXPECT_EQ(to_vector(outputs.at("x")), (std::vector<float>{3, 4}));
  EXPECT_NE(outputs.at("x").raw(), inputs.at("x").raw());
}

TEST(ExecutorTest, WholeModelExecutorRunsEveryNodeInOnePartition) {
  Graph model = chain_model();
  Executor executor = whole_model_executor(model, "test", [](const Graph& graph) {
    return Result<std::unique_ptr<Kernel>>(std::make_unique<InterpretingKernel>(graph));
  });
  ASSERT_EQ(executor.partitions().size(), 1u);
  EXPECT_EQ(executor.partitions()[0].nodes.size(), 3u);
  auto outputs = executor.run(input_x({-1, 2, -3, 4}));
  EXPECT_EQ(to_vector(outputs.at("y")), (std::vector<float>{0, 2, 0, 4}));
}

TEST(ExecutorTest, WholeModelCompileFailureNamesTheBackendAndReason) {
  Graph model = chain_model();
  try {
    whole_model_executor(model, "fake", [](const Graph&) {
      return Result<std::unique_ptr<Kernel>>(Failure{"no Add kernel"});
    });
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fake'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no Add kernel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collage
