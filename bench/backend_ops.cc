// Times every registered backend on single-op partitions with the
// convolution and matrix-multiply shapes of resnet50, mobilenet_v2 and a
// BERT-like encoder, side by side in one run.
//
// Each (op, backend) pair is compiled once, checked once against the
// reference executor, and then only Kernel::run is timed, on the same
// inputs, with every backend given the same --threads. A backend whose
// supports() rejects the op, or whose compile() fails, gets no entry.
// bench/backend_ops.sh runs this and turns its JSON into a table.
//
//   bench_backend_ops [--threads=N] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/ir/flops.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// One single-op partition of a model.
struct OpCase {
  std::string model;
  std::string op;
  std::string shape;
  Graph graph;
};

std::string dims(const Shape& shape) { return shape_to_string(shape); }

// Conv with constant weights and bias, as an imported model has them.
OpCase conv(const std::string& model, std::int64_t c, std::int64_t hw, std::int64_t m,
            std::int64_t k, std::int64_t stride, std::int64_t group = 1) {
  const std::int64_t pad = k / 2;
  const std::int64_t out = (hw + 2 * pad - k) / stride + 1;
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  ValueId w = graph.add_constant("w", random_tensor(f32({m, c / group, k, k}), "w"));
  ValueId b = graph.add_constant("b", random_tensor(f32({m}), "b"));
  ValueId y = graph.add_value("y", f32({1, m, out, out}));
  Attributes attrs;
  attrs.set("kernel_shape", std::vector<std::int64_t>{k, k});
  attrs.set("strides", std::vector<std::int64_t>{stride, stride});
  attrs.set("pads", std::vector<std::int64_t>{pad, pad, pad, pad});
  attrs.set("group", group);
  graph.add_node("Conv", {x, w, b}, {y}, attrs);
  graph.add_output(y);

  std::string op = group == 1 ? "conv" : "depthwise conv";
  op += " " + std::to_string(k) + "x" + std::to_string(k);
  if (stride != 1) op += " s" + std::to_string(stride);
  op += group == 1 ? " " + std::to_string(c) + "->" + std::to_string(m) : " " + std::to_string(c);
  std::string shape = "x" + dims({1, c, hw, hw}) + " -> " + dims({1, m, out, out});
  return {model, op, shape, std::move(graph)};
}

// MatMul; a constant right operand is a weight, a runtime one an activation.
OpCase matmul(const std::string& model, const std::string& op, const Shape& a, const Shape& b,
              const Shape& y, bool b_constant) {
  Graph graph;
  ValueId av = graph.add_input("a", f32(a));
  ValueId bv = b_constant ? graph.add_constant("b", random_tensor(f32(b), "b"))
                          : graph.add_input("b", f32(b));
  ValueId yv = graph.add_value("y", f32(y));
  graph.add_node("MatMul", {av, bv}, {yv});
  graph.add_output(yv);
  return {model, op, dims(a) + " x " + dims(b), std::move(graph)};
}

// The classifier of resnet50: Gemm with transB=1 and a bias.
OpCase classifier() {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 2048}));
  ValueId w = graph.add_constant("w", random_tensor(f32({1000, 2048}), "w"));
  ValueId b = graph.add_constant("b", random_tensor(f32({1000}), "b"));
  ValueId y = graph.add_value("y", f32({1, 1000}));
  Attributes attrs;
  attrs.set("transB", std::int64_t{1});
  graph.add_node("Gemm", {x, w, b}, {y}, attrs);
  graph.add_output(y);
  return {"resnet50", "gemm fc 2048->1000", "[1,2048] x [1000,2048]^T", std::move(graph)};
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  // resnet50 (batch 1).
  cases.push_back(conv("resnet50", 3, 224, 64, 7, 2));
  cases.push_back(conv("resnet50", 64, 56, 64, 1, 1));
  cases.push_back(conv("resnet50", 64, 56, 64, 3, 1));
  cases.push_back(conv("resnet50", 64, 56, 256, 1, 1));
  cases.push_back(conv("resnet50", 256, 56, 64, 1, 1));
  cases.push_back(conv("resnet50", 128, 56, 128, 3, 2));
  cases.push_back(conv("resnet50", 128, 28, 128, 3, 1));
  cases.push_back(conv("resnet50", 256, 14, 256, 3, 1));
  cases.push_back(conv("resnet50", 512, 7, 512, 3, 1));
  cases.push_back(conv("resnet50", 2048, 7, 512, 1, 1));
  cases.push_back(conv("resnet50", 512, 7, 2048, 1, 1));
  cases.push_back(classifier());
  // mobilenet_v2 (batch 1): stem, depthwise 3x3 at every resolution, 1x1 expand/project.
  cases.push_back(conv("mobilenet_v2", 3, 224, 32, 3, 2));
  cases.push_back(conv("mobilenet_v2", 32, 112, 32, 3, 1, 32));
  cases.push_back(conv("mobilenet_v2", 96, 112, 96, 3, 2, 96));
  cases.push_back(conv("mobilenet_v2", 144, 56, 144, 3, 1, 144));
  cases.push_back(conv("mobilenet_v2", 144, 56, 144, 3, 2, 144));
  cases.push_back(conv("mobilenet_v2", 192, 28, 192, 3, 1, 192));
  cases.push_back(conv("mobilenet_v2", 384, 14, 384, 3, 1, 384));
  cases.push_back(conv("mobilenet_v2", 576, 14, 576, 3, 2, 576));
  cases.push_back(conv("mobilenet_v2", 960, 7, 960, 3, 1, 960));
  cases.push_back(conv("mobilenet_v2", 16, 112, 96, 1, 1));
  cases.push_back(conv("mobilenet_v2", 144, 56, 24, 1, 1));
  cases.push_back(conv("mobilenet_v2", 24, 56, 144, 1, 1));
  cases.push_back(conv("mobilenet_v2", 384, 14, 64, 1, 1));
  cases.push_back(conv("mobilenet_v2", 160, 7, 960, 1, 1));
  cases.push_back(conv("mobilenet_v2", 960, 7, 160, 1, 1));
  cases.push_back(conv("mobilenet_v2", 320, 7, 1280, 1, 1));
  // BERT-like encoder: sequence 128, hidden 256, 4 heads of 64, FFN 1024.
  cases.push_back(
      matmul("bert", "matmul projection 256->256", {128, 256}, {256, 256}, {128, 256}, true));
  cases.push_back(
      matmul("bert", "matmul ffn up 256->1024", {128, 256}, {256, 1024}, {128, 1024}, true));
  cases.push_back(
      matmul("bert", "matmul ffn down 1024->256", {128, 1024}, {1024, 256}, {128, 256}, true));
  cases.push_back(
      matmul("bert", "batched matmul q x k^T", {4, 128, 64}, {4, 64, 128}, {4, 128, 128}, false));
  cases.push_back(matmul("bert", "batched matmul scores x v", {4, 128, 128}, {4, 128, 64},
                         {4, 128, 64}, false));
  return cases;
}

// A compiled (op, backend) pair and what its timing loop needs.
struct Entry {
  const OpCase* op = nullptr;
  std::string backend;
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  bool matches_reference = false;
};

bool close_to(const Tensor& actual, const Tensor& expected) {
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    if (!(std::fabs(a[i] - e[i]) <= 1e-3f + 1e-3f * std::fabs(e[i]))) return false;
  }
  return true;
}

// Strips --threads=N from argv (Google Benchmark rejects flags it does not know).
int take_threads_flag(int& argc, char** argv) {
  int threads = 2;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::max(1, std::atoi(argv[i] + 10));
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return threads;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  using namespace collage;
  const int threads = take_threads_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  static const std::vector<OpCase> cases = op_cases();
  static std::vector<std::unique_ptr<Entry>> entries;
  benchmark::AddCustomContext("threads", std::to_string(threads));
  for (const Backend* backend : BackendRegistry::global().all()) {
    benchmark::AddCustomContext("backend." + backend->name(), backend->version());
  }

  for (const OpCase& op : cases) {
    const Graph& graph = op.graph;
    std::vector<Tensor> inputs;
    for (ValueId id : graph.inputs()) {
      inputs.push_back(random_tensor(graph.type(id), graph.value(id).name));
    }
    std::vector<Tensor> expected = {Tensor::allocate(graph.type(graph.outputs()[0]))};
    compile_reference(graph, threads)->run(inputs, expected);
    const double flops = static_cast<double>(node_flops(graph, graph.node(0)));

    for (const Backend* backend : BackendRegistry::global().all()) {
      if (!backend->supports(graph, graph.node(0))) continue;
      Result<std::unique_ptr<Kernel>> kernel = backend->compile(graph, CompileOptions{threads});
      if (!kernel) {
        std::cerr << backend->name() << " cannot compile " << op.op << ": " << kernel.error()
                  << "\n";
        continue;
      }
      auto entry = std::make_unique<Entry>();
      entry->op = &op;
      entry->backend = backend->name();
      entry->kernel = std::move(*kernel);
      entry->inputs = inputs;
      entry->outputs = {Tensor::allocate(graph.type(graph.outputs()[0]))};
      entry->kernel->run(entry->inputs, entry->outputs);
      entry->matches_reference = close_to(entry->outputs[0], expected[0]);
      Entry* e = entry.get();
      entries.push_back(std::move(entry));

      const std::string name = op.model + "/" + op.op + "/" + backend->name();
      benchmark::RegisterBenchmark(
          name.c_str(),
          [e, flops](benchmark::State& state) {
            for (auto _ : state) e->kernel->run(e->inputs, e->outputs);
            state.counters["GFLOP"] = flops * 1e-9;
            state.counters["GFLOP/s"] =
                benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
            state.counters["matches_reference"] = e->matches_reference;
            state.SetLabel(e->op->shape);
          })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
