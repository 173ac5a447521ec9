// What a partition boundary costs in a running plan.
//
// A chain of N MatMuls (x[64,64] · W[64,64], each followed by the next) is
// run through the executor in four ways, interleaved round by round:
//   whole      one partition of N nodes on a backend,
//   split      N partitions of one node on the same backend,
//   alternate  N one-node partitions alternating between two backends,
// and the costs are derived as
//   per partition  (split - whole) / (N - 1)            on one backend,
//   per switch     (alternate - (split_a + split_b) / 2) / (N - 1)
// The tensors are 2-D, so no backend converts layouts at its edges: what is
// left is the executor's hand-off, the kernel's entry and the thread pools.
//
// Usage: bench_partition_overhead [threads=2] [N=32] [rounds=200]
#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/runtime/executor.h"
#include "collage/runtime/interleaved_timing.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

constexpr std::int64_t kSize = 64;

Graph matmul_chain(int n) {
  Graph g;
  const TensorType type{DType::kFloat32, {kSize, kSize}};
  ValueId x = g.add_input("x", type);
  for (int i = 0; i < n; ++i) {
    Tensor weight = Tensor::allocate(type);
    float* w = weight.data<float>();
    for (std::int64_t j = 0; j < weight.numel(); ++j) {
      w[j] = static_cast<float>((j * 7 + i) % 13) / 13.0f - 0.5f;
    }
    ValueId wv = g.add_constant(fmt::format("w{}", i), std::move(weight));
    ValueId y = g.add_value(fmt::format("y{}", i), type);
    g.add_node("MatMul", {x, wv}, {y}, {}, fmt::format("mm{}", i));
    x = y;
  }
  g.add_output(x);
  return g;
}

// Partition i holds the nodes of group i; each group is compiled by the
// backend named for it. Nothing when a backend cannot compile its group.
std::optional<Executor> executor_for(const Graph& model,
                                     const std::vector<std::vector<NodeId>>& groups,
                                     const std::vector<std::string>& backends, int threads) {
  std::vector<CompiledPartition> partitions;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Backend& backend = BackendRegistry::global().get(backends[i]);
    Graph graph = extract_subgraph(model, groups[i]);
    auto kernel = backend.compile(graph, CompileOptions{threads});
    if (!kernel) return std::nullopt;
    partitions.push_back(
        CompiledPartition{groups[i], std::move(graph), std::move(*kernel), backends[i]});
  }
  return Executor(model, std::move(partitions));
}

int run(int threads, int n, int rounds) {
  Graph model = matmul_chain(n);
  std::map<std::string, Tensor> inputs = random_inputs(model);
  std::vector<NodeId> all;
  std::vector<std::vector<NodeId>> singles;
  for (int i = 0; i < n; ++i) {
    all.push_back(static_cast<NodeId>(i));
    singles.push_back({static_cast<NodeId>(i)});
  }
  const std::vector<std::string> names = BackendRegistry::global().names();
  auto has = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };

  std::vector<std::string> labels;
  std::vector<Executor> executors;
  std::map<std::string, std::size_t> index;
  auto add = [&](const std::string& label, const std::vector<std::vector<NodeId>>& groups,
                 const std::vector<std::string>& backends) {
    std::optional<Executor> executor = executor_for(model, groups, backends, threads);
    if (!executor) return false;
    index[label] = executors.size();
    labels.push_back(label);
    executors.push_back(std::move(*executor));
    return true;
  };
  std::vector<std::string> single_backends;
  for (const char* name : {"native", "xnnpack", "onednn", "openblas"}) {
    if (!has(name)) continue;
    if (!add(fmt::format("{} split", name), singles, std::vector<std::string>(n, name))) continue;
    single_backends.push_back(name);
    add(fmt::format("{} whole", name), {all}, {name});
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::size_t a = 0; a < single_backends.size(); ++a) {
    for (std::size_t b = a + 1; b < single_backends.size(); ++b) {
      const std::string& first = single_backends[a];
      const std::string& second = single_backends[b];
      std::vector<std::string> alternating;
      for (int i = 0; i < n; ++i) alternating.push_back(i % 2 == 0 ? first : second);
      if (add(fmt::format("{}/{} alternate", first, second), singles, alternating)) {
        pairs.emplace_back(first, second);
      }
    }
  }

  std::vector<std::function<void()>> variants;
  for (Executor& executor : executors) {
    variants.push_back([&executor, &inputs] { executor.run(inputs); });
  }
  std::vector<TimingResult> timings = time_interleaved(variants, rounds, 20);
  auto us = [&](const std::string& label) { return timings[index.at(label)].median_seconds * 1e6; };
  auto has_run = [&](const std::string& label) { return index.count(label) != 0; };

  fmt::print(
      "Chain of {} MatMuls [{}x{}] through the executor, {} thread{}, {} interleaved "
      "rounds; medians.\n\n",
      n, kSize, kSize, threads, threads == 1 ? "" : "s", rounds);
  fmt::print("| backend | whole (us) | {} partitions (us) | per extra partition (us) |\n", n);
  fmt::print("|---|---:|---:|---:|\n");
  for (const std::string& name : single_backends) {
    double split = us(name + " split");
    if (!has_run(name + " whole")) {
      fmt::print("| {} | (cannot run the chain as one partition) | {:.1f} | - |\n", name, split);
      continue;
    }
    double whole = us(name + " whole");
    fmt::print("| {} | {:.1f} | {:.1f} | {:.2f} |\n", name, whole, split,
               (split - whole) / (n - 1));
  }
  fmt::print("\n| backends | alternating (us) | mean of their splits (us) | per switch (us) |\n");
  fmt::print("|---|---:|---:|---:|\n");
  for (const auto& [first, second] : pairs) {
    double alternating = us(first + "/" + second + " alternate");
    double mean_split = (us(first + " split") + us(second + " split")) / 2;
    fmt::print("| {} / {} | {:.1f} | {:.1f} | {:.2f} |\n", first, second, alternating, mean_split,
               (alternating - mean_split) / (n - 1));
  }
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int n = argc > 2 ? std::atoi(argv[2]) : 32;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 200;
  if (threads < 1 || n < 2 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_partition_overhead [threads>=1] [N>=2] [rounds>=1]\n");
    return 2;
  }
  return collage::run(threads, n, rounds);
}
