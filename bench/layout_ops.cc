// The ops that sit between heavy kernels (MaxPool, GlobalAveragePool,
// depthwise Conv, GroupNormalization, Resize, a per-channel Mul, a channel shuffle's Gather) and
// the dense Convs around them, one
// op per partition, on every backend that runs them, with the edges in each layout the backend
// takes: native plain, and native and oneDNN in channels-last, blocked-8 and blocked-16
// (docs/native_compute_kernels.md, "In oneDNN's layouts"). Each case is compiled once and checked
// against the reference executor; then only Kernel::run is timed, alternating the cases, and the
// median per case is printed in ms.
//
//   bench_layout_ops [THREADS] [ROUNDS]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/runtime/layout_convert.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

struct OpGraph {
  std::string name;
  Graph graph;
};

// A k x k MaxPool (pads k / 2 for an odd window, none for an even one, as
// U-Net's 2x2 halvings have them).
OpGraph max_pool(std::int64_t c, std::int64_t hw, std::int64_t stride, std::int64_t k = 3) {
  const std::int64_t pad = k % 2 == 1 ? k / 2 : 0;
  const std::int64_t out = (hw + 2 * pad - k) / stride + 1;
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  ValueId y = graph.add_value("y", f32({1, c, out, out}));
  Attributes attributes;
  attributes.set("kernel_shape", std::vector<std::int64_t>{k, k});
  attributes.set("strides", std::vector<std::int64_t>{stride, stride});
  attributes.set("pads", std::vector<std::int64_t>{pad, pad, pad, pad});
  graph.add_node("MaxPool", {x}, {y}, attributes);
  graph.add_output(y);
  return {fmt::format("MaxPool {}x{} s{} {}x{}x{}", k, k, stride, c, hw, hw), std::move(graph)};
}

OpGraph global_average_pool(std::int64_t c, std::int64_t hw) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  ValueId y = graph.add_value("y", f32({1, c, 1, 1}));
  graph.add_node("GlobalAveragePool", {x}, {y});
  graph.add_output(y);
  return {fmt::format("GlobalAveragePool {}x{}x{}", c, hw, hw), std::move(graph)};
}

// An FPN's upsampling of H and W by `scale`: Resize in `mode` with
// asymmetric coordinates (nearest rounding down), as PaddleOCR's DB neck has
// it.
OpGraph upsample(std::int64_t c, std::int64_t hw, std::int64_t scale, const std::string& mode) {
  Graph graph;
  graph.opset = 13;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  const auto factor = static_cast<float>(scale);
  ValueId scales =
      graph.add_constant("scales", Tensor::from_vector<float>({1.0f, 1.0f, factor, factor}, {4}));
  ValueId y = graph.add_value("y", f32({1, c, hw * scale, hw * scale}));
  Attributes attributes;
  attributes.set("mode", mode);
  attributes.set("coordinate_transformation_mode", std::string("asymmetric"));
  attributes.set("nearest_mode", std::string("floor"));
  graph.add_node("Resize", {x, kNoValue, scales}, {y}, attributes);
  graph.add_output(y);
  return {fmt::format("Resize {} x{} {}x{}x{}", mode, scale, c, hw, hw), std::move(graph)};
}

// x * a per-channel scale [1, C, 1, 1], as a squeeze-and-excitation block
// ends (its gate a constant here).
OpGraph channel_scale(std::int64_t c, std::int64_t hw) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  Tensor scale = Tensor::allocate(f32({1, c, 1, 1}));
  for (std::int64_t i = 0; i < c; ++i) scale.data<float>()[i] = static_cast<float>(i % 7) * 0.2f;
  ValueId s = graph.add_constant("scale", std::move(scale));
  ValueId y = graph.add_value("y", f32({1, c, hw, hw}));
  graph.add_node("Mul", {x, s}, {y});
  graph.add_output(y);
  return {fmt::format("Mul by channel {}x{}x{}", c, hw, hw), std::move(graph)};
}

// Makes `y` the graph's output, or, with `silu`, SiLU of it (one Swish, as
// fuse_activations makes Sigmoid and Mul).
void add_output_with_silu(Graph& graph, ValueId y, bool silu) {
  if (!silu) {
    graph.add_output(y);
    return;
  }
  ValueId z = graph.add_value("z", graph.type(y));
  Attributes alpha;
  alpha.set("alpha", 1.0f);
  graph.add_node("Swish", {y}, {z}, alpha);
  graph.add_output(z);
}

// GroupNormalization of `groups` groups (scale and bias per channel, as
// fuse_group_norm makes PyTorch's export), then SiLU when `silu`, as a U-Net
// block has them.
OpGraph group_norm(std::int64_t c, std::int64_t hw, std::int64_t groups, bool silu) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  Tensor scale = Tensor::allocate(f32({c}));
  Tensor bias = Tensor::allocate(f32({c}));
  for (std::int64_t i = 0; i < c; ++i) {
    scale.data<float>()[i] = 0.5f + static_cast<float>(i % 3) * 0.25f;
    bias.data<float>()[i] = static_cast<float>(i % 5) * 0.1f - 0.2f;
  }
  ValueId s = graph.add_constant("scale", std::move(scale));
  ValueId b = graph.add_constant("bias", std::move(bias));
  ValueId y = graph.add_value("y", f32({1, c, hw, hw}));
  Attributes attributes;
  attributes.set("num_groups", groups);
  attributes.set("epsilon", 1e-5f);
  graph.add_node("GroupNormalization", {x, s, b}, {y}, attributes);
  add_output_with_silu(graph, y, silu);
  return {fmt::format("GroupNorm {} groups {}x{}x{}{}", groups, c, hw, hw, silu ? " + SiLU" : ""),
          std::move(graph)};
}

// A depthwise Conv (k x k, pads k/2) with its bias, then SiLU when `silu`,
// as EfficientNet has them (Sigmoid and Mul, which fuse_activations makes
// one Swish).
OpGraph depthwise_conv(std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t stride,
                       bool silu) {
  const std::int64_t out = (hw + 2 * (k / 2) - k) / stride + 1;
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  Tensor weights = Tensor::allocate(f32({c, 1, k, k}));
  Tensor bias = Tensor::allocate(f32({c}));
  for (std::int64_t i = 0; i < weights.numel(); ++i) {
    weights.data<float>()[i] = static_cast<float>((i * 7919) % 17) / 17.0f - 0.5f;
  }
  for (std::int64_t i = 0; i < c; ++i) bias.data<float>()[i] = static_cast<float>(i % 5) * 0.1f;
  ValueId w = graph.add_constant("w", std::move(weights));
  ValueId b = graph.add_constant("b", std::move(bias));
  ValueId y = graph.add_value("y", f32({1, c, out, out}));
  Attributes attributes;
  attributes.set("kernel_shape", std::vector<std::int64_t>{k, k});
  attributes.set("strides", std::vector<std::int64_t>{stride, stride});
  attributes.set("pads", std::vector<std::int64_t>{k / 2, k / 2, k / 2, k / 2});
  attributes.set("group", c);
  graph.add_node("Conv", {x, w, b}, {y}, attributes);
  add_output_with_silu(graph, y, silu);
  return {
      fmt::format("dw Conv {}x{} s{} {}x{}x{}{}", k, k, stride, c, hw, hw, silu ? " + SiLU" : ""),
      std::move(graph)};
}

// A dense Conv of `c` to `k_out` channels (k x k, stride 1, pads k/2) with
// its bias, then Relu: the heavy kernels around which the ops above sit.
OpGraph dense_conv(std::int64_t c, std::int64_t k_out, std::int64_t hw, std::int64_t k) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  Tensor weights = Tensor::allocate(f32({k_out, c, k, k}));
  Tensor bias = Tensor::allocate(f32({k_out}));
  for (std::int64_t i = 0; i < weights.numel(); ++i) {
    weights.data<float>()[i] = (static_cast<float>((i * 7919) % 17) / 17.0f - 0.5f) * 0.1f;
  }
  for (std::int64_t i = 0; i < k_out; ++i) bias.data<float>()[i] = static_cast<float>(i % 5) * 0.1f;
  ValueId w = graph.add_constant("w", std::move(weights));
  ValueId b = graph.add_constant("b", std::move(bias));
  ValueId y = graph.add_value("y", f32({1, k_out, hw, hw}));
  ValueId relu = graph.add_value("relu", f32({1, k_out, hw, hw}));
  Attributes attributes;
  attributes.set("kernel_shape", std::vector<std::int64_t>{k, k});
  attributes.set("pads", std::vector<std::int64_t>{k / 2, k / 2, k / 2, k / 2});
  graph.add_node("Conv", {x, w, b}, {y}, attributes);
  graph.add_node("Relu", {y}, {relu}, {});
  graph.add_output(relu);
  return {fmt::format("Conv {}x{} {}->{} {}x{} + Relu", k, k, c, k_out, hw, hw), std::move(graph)};
}

// One half of ShuffleNet's channel shuffle of `c` channels: the Gather of
// c / 2 channels that canonicalize makes of it, interleaving the first
// quarter of the channels with the third.
OpGraph channel_shuffle_half(std::int64_t c, std::int64_t hw) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, c, hw, hw}));
  std::vector<std::int64_t> indices;
  for (std::int64_t j = 0; j < c / 2; ++j) indices.push_back(j % 2 * (c / 2) + j / 2);
  ValueId index = graph.add_constant("indices", Tensor::from_vector(indices, {c / 2}));
  ValueId y = graph.add_value("y", f32({1, c / 2, hw, hw}));
  Attributes attributes;
  attributes.set("axis", std::int64_t{1});
  graph.add_node("Gather", {x, index}, {y}, attributes);
  graph.add_output(y);
  return {fmt::format("shuffle half, Gather {} of {}x{}x{}", c / 2, c, hw, hw), std::move(graph)};
}

struct Case {
  std::string column;
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::vector<double> ms;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int run(int threads, int rounds) {
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<OpGraph> ops = {max_pool(32, 128, 2, 2),
                              max_pool(64, 64, 2, 2),
                              max_pool(480, 14, 1),
                              max_pool(192, 28, 1),
                              max_pool(64, 112, 2),
                              global_average_pool(96, 112),
                              global_average_pool(480, 14),
                              global_average_pool(1152, 7),
                              depthwise_conv(96, 112, 3, 2, false),
                              depthwise_conv(96, 112, 3, 2, true),
                              depthwise_conv(144, 56, 3, 1, false),
                              depthwise_conv(144, 56, 3, 1, true),
                              depthwise_conv(240, 28, 5, 1, false),
                              depthwise_conv(240, 28, 5, 1, true),
                              depthwise_conv(672, 14, 5, 1, false),
                              depthwise_conv(672, 14, 5, 1, true),
                              depthwise_conv(480, 14, 3, 1, true),
                              depthwise_conv(1152, 7, 5, 1, false),
                              depthwise_conv(1152, 7, 5, 1, true),
                              depthwise_conv(32, 112, 3, 1, false),
                              group_norm(32, 128, 8, false),
                              group_norm(32, 128, 8, true),
                              group_norm(64, 64, 8, true),
                              group_norm(128, 16, 8, true),
                              upsample(96, 20, 2, "nearest"),
                              upsample(96, 20, 4, "nearest"),
                              upsample(64, 40, 2, "linear"),
                              channel_scale(32, 112),
                              channel_scale(144, 56),
                              channel_scale(1152, 7),
                              channel_shuffle_half(116, 28),
                              channel_shuffle_half(232, 14),
                              channel_shuffle_half(464, 7),
                              dense_conv(64, 64, 56, 3),
                              dense_conv(128, 128, 28, 3),
                              dense_conv(256, 256, 14, 3),
                              dense_conv(64, 256, 56, 1),
                              dense_conv(256, 64, 56, 1),
                              dense_conv(512, 128, 14, 1)};
  struct Column {
    std::string backend;
    EdgeLayout layout;
  };
  const std::vector<Column> columns = {
      {"native", EdgeLayout::kPlain},         {"native", EdgeLayout::kChannelsLast},
      {"native", EdgeLayout::kBlocked8},      {"native", EdgeLayout::kBlocked16},
      {"xnnpack", EdgeLayout::kChannelsLast}, {"onednn", EdgeLayout::kChannelsLast},
      {"onednn", EdgeLayout::kBlocked8},      {"onednn", EdgeLayout::kBlocked16}};
  std::string header = "| op |";
  std::string rule = "|---|";
  for (const Column& column : columns) {
    header += fmt::format(" {} {} |", column.backend, edge_layout_name(column.layout));
    rule += "---|";
  }
  fmt::print("{} threads, {} rounds, median ms of Kernel::run\n\n{}\n{}\n", threads, rounds, header,
             rule);
  for (const OpGraph& op : ops) {
    const Tensor input = random_inputs(op.graph).begin()->second;
    std::vector<Tensor> expected = {Tensor::allocate(op.graph.type(op.graph.outputs()[0]))};
    compile_reference(op.graph, 1)->run(std::vector<Tensor>{input}, expected);
    std::vector<Case> cases;
    for (const Column& column : columns) {
      Case c{fmt::format("{} {}", column.backend, edge_layout_name(column.layout)),
             nullptr,
             {},
             {},
             {}};
      const Backend* backend = registry.find(column.backend);
      // A global pool's [1, C, 1, 1] is the same in every layout.
      const EdgeLayout out_layout =
          edge_layout_free(expected[0].type()) ? EdgeLayout::kPlain : column.layout;
      if (backend != nullptr) {
        CompileOptions options{threads};
        options.input_layouts = {column.layout};
        options.output_layouts = {out_layout};
        auto kernel = backend->compile(op.graph, options);
        if (kernel.ok()) c.kernel = std::move(kernel.value());
      }
      if (c.kernel) {
        Tensor laid = Tensor::allocate(input.type());
        convert_edge_layout(input.type(), input.raw(), EdgeLayout::kPlain, laid.raw(),
                            column.layout, 1);
        c.inputs = {laid};
        c.outputs = {Tensor::allocate(expected[0].type())};
        c.kernel->run(c.inputs, c.outputs);
        Tensor plain = Tensor::allocate(expected[0].type());
        convert_edge_layout(plain.type(), c.outputs[0].raw(), out_layout, plain.raw(),
                            EdgeLayout::kPlain, 1);
        for (std::int64_t i = 0; i < plain.numel(); ++i) {
          if (std::abs(plain.data<float>()[i] - expected[0].data<float>()[i]) > 1e-4f) {
            fmt::print(stderr, "{} on {}: element {} differs from the reference\n", op.name,
                       c.column, i);
            return 1;
          }
        }
      }
      cases.push_back(std::move(c));
    }
    for (int round = 0; round < rounds; ++round) {
      for (Case& c : cases) {
        if (!c.kernel) continue;
        for (int warm = 0; warm < 5; ++warm) c.kernel->run(c.inputs, c.outputs);
        constexpr int kRuns = 50;
        const auto start = std::chrono::steady_clock::now();
        for (int r = 0; r < kRuns; ++r) c.kernel->run(c.inputs, c.outputs);
        const auto end = std::chrono::steady_clock::now();
        c.ms.push_back(std::chrono::duration<double, std::milli>(end - start).count() / kRuns);
      }
    }
    std::string row = "| " + op.name + " |";
    for (const Case& c : cases) {
      row += c.kernel ? fmt::format(" {:.3f} |", median(c.ms)) : std::string(" - |");
    }
    fmt::print("{}\n", row);
  }
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  return collage::run(threads, rounds);
}
