// What a layout conversion at a boundary costs, timed the ways the boundary
// charges time it (cost/boundary_costs.h): the tiled transpose of
// ir/block_transpose.h on OpenMP threads (the charge of a backend without a
// conversion of its own), oneDNN's reorder primitive and XNNPACK's edge
// conversion over its pool. Each round measures every converter once per
// shape and direction, in turn (A B C A B C ...), on a fresh ConversionCosts
// with no cache; the table gives the median over rounds of each (ms) with
// its min-max, and each backend's median over the tiled one's.
//
// Usage: bench_conversion_costs [threads=2] [rounds=7]
// Shapes: activations of the zoo's CNNs and of a U-Net at 128x128, in the
// layout each backend computes in first (oneDNN's on this machine, and
// channels-last for XNNPACK).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/boundary_costs.h"
#include "collage/ir/error.h"
#include "collage/runtime/timing.h"

using namespace collage;

namespace {

double median(const std::vector<double>& values) { return percentile(values, 0.5); }

struct Converter {
  std::string name;
  const Backend* backend;  // nullptr: the tiled transpose
};

// One line of the table: a shape and direction, with each converter's
// milliseconds, one per round.
struct Row {
  Shape shape;
  bool to_plain;
  std::vector<std::vector<double>> ms;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
    if (threads < 1 || rounds < 1) {
      fmt::print(stderr, "usage: bench_conversion_costs [threads=2] [rounds=7]\n");
      return 2;
    }
    const BackendRegistry& registry = BackendRegistry::global();
    std::vector<Converter> converters = {{"tiled", nullptr}};
    for (const char* name : {"onednn", "xnnpack"}) {
      if (const Backend* backend = registry.find(name)) converters.push_back({name, backend});
    }
    const std::vector<Shape> shapes = {
        {1, 64, 112, 112}, {1, 64, 56, 56},   {1, 144, 56, 56},  {1, 256, 28, 28},
        {1, 32, 160, 160}, {1, 32, 128, 128}, {1, 64, 128, 128}, {1, 96, 128, 128},
    };
    std::vector<Row> rows;
    for (const Shape& shape : shapes) {
      for (bool to_plain : {false, true}) {
        rows.push_back({shape, to_plain, std::vector<std::vector<double>>(converters.size())});
      }
    }
    for (int round = 0; round < rounds; ++round) {
      fmt::print(stderr, "round {}/{}\n", round + 1, rounds);
      ConversionCosts costs(nullptr, "bench", threads);
      for (Row& row : rows) {
        const TensorType type{DType::kFloat32, row.shape};
        for (std::size_t c = 0; c < converters.size(); ++c) {
          const Backend* backend = converters[c].backend;
          const EdgeLayout layout =
              backend ? timed_edge_layout(*backend, type) : EdgeLayout::kChannelsLast;
          row.ms[c].push_back(costs.seconds(type, LayoutChange{layout, row.to_plain, backend}) *
                              1e3);
        }
      }
    }
    fmt::print("Threads: {}. Rounds: {} (median over rounds, min-max; ms).\n\n", threads, rounds);
    fmt::print("| tensor | direction |");
    for (const Converter& converter : converters) fmt::print(" {} |", converter.name);
    for (std::size_t c = 1; c < converters.size(); ++c) {
      fmt::print(" {} / tiled |", converters[c].name);
    }
    fmt::print("\n|---|---|");
    for (std::size_t c = 1; c < 2 * converters.size(); ++c) fmt::print("---|");
    fmt::print("\n");
    for (const Row& row : rows) {
      fmt::print("| {} | {} |", fmt::join(row.shape, "x"),
                 row.to_plain ? "to plain" : "from plain");
      for (const std::vector<double>& series : row.ms) {
        fmt::print(" {:.3f} ({:.3f}-{:.3f}) |", median(series),
                   *std::min_element(series.begin(), series.end()),
                   *std::max_element(series.begin(), series.end()));
      }
      for (std::size_t c = 1; c < row.ms.size(); ++c) {
        fmt::print(" {:.2f} |", median(row.ms[c]) / median(row.ms[0]));
      }
      fmt::print("\n");
    }
    // The layouts of the first shape (every shape here fits each backend's first layout).
    std::vector<std::string> layouts;
    for (std::size_t c = 1; c < converters.size(); ++c) {
      const TensorType type{DType::kFloat32, shapes[0]};
      layouts.push_back(converters[c].name + " " +
                        edge_layout_name(timed_edge_layout(*converters[c].backend, type)));
    }
    fmt::print("\nLayouts: tiled converts channels-last; each backend its first layout ({}).\n",
               fmt::join(layouts, ", "));
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_conversion_costs: {}\n", e.what());
    return 2;
  }
  return 0;
}
