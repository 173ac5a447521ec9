#include "collage/backends/onednn/convolution.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/runtime/interleaved_timing.h"

namespace collage::onednn {

WeightsView deconvolution_weights(memory::dim groups, const Shape& w) {
  const memory::dim in_per_group = w[0] / groups;
  const memory::dim out_per_group = w[1];
  memory::dims spatial(w.begin() + 2, w.end());
  const memory::dims spatial_strides = row_major_strides(spatial);
  const memory::dim kernel = dims_numel(spatial);
  WeightsView view{{out_per_group, in_per_group}, {kernel, out_per_group * kernel}};
  view.dims.insert(view.dims.end(), spatial.begin(), spatial.end());
  view.strides.insert(view.strides.end(), spatial_strides.begin(), spatial_strides.end());
  if (groups > 1) {
    view.dims.insert(view.dims.begin(), groups);
    view.strides.insert(view.strides.begin(), in_per_group * out_per_group * kernel);
  }
  return view;
}

namespace {

memory::dims spatial_of(const Shape& shape) { return memory::dims(shape.begin() + 2, shape.end()); }

}  // namespace

Result<WindowDims> convolution_window(const Node& node, bool transposed, const Shape& x,
                                      const Shape& w, const Shape& y) {
  const memory::dims in = spatial_of(x);
  const memory::dims kernel = spatial_of(w);
  Result<Window> window =
      transposed ? transposed_window(node, in, kernel) : forward_window(node, in, kernel);
  if (!window) return Failure{window.error()};
  if (window->output_shape() != spatial_of(y)) {
    return Failure{fmt::format("{} output shape disagrees with its attributes", node.op_type)};
  }
  if (!transposed) return forward_dims(*window);
  for (const WindowAxis& axis : window->axes) {
    if (axis.pad_begin < 0 || axis.output < 1) {
      return Failure{
          fmt::format("{} with negative leading padding or an empty output", node.op_type)};
    }
  }
  return transposed_dims(*window);
}

namespace {

// Weight dims and strides for a Conv: ONNX [O, I/g, k...] is oneDNN's
// [g, O/g, I/g, k...] read row-major.
void conv_weights(ConvolutionSpec& spec, const Shape& w) {
  memory::dims dims(w.begin(), w.end());
  if (spec.groups > 1) {
    dims[0] /= spec.groups;
    dims.insert(dims.begin(), spec.groups);
  }
  spec.weights_dims = dims;
  spec.weights_strides = row_major_strides(dims);
}

void deconv_weights(ConvolutionSpec& spec, const Shape& w) {
  const WeightsView view = deconvolution_weights(spec.groups, w);
  spec.weights_dims = view.dims;
  spec.weights_strides = view.strides;
}

Result<ConvolutionSpec> common_spec(const Graph& graph, const Node& node) {
  if (auto problem = tensor_problem(graph, node, 3)) return Failure{*problem};
  if (node.input(0) == kNoValue || node.input(1) == kNoValue || node.outputs.size() != 1) {
    return Failure{fmt::format("{} needs an input, weights and one output", node.op_type)};
  }
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(1)).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || y.size() != x.size()) {
    return Failure{
        fmt::format("{} supports 1 to 3 spatial dims with matching ranks", node.op_type)};
  }
  ConvolutionSpec spec;
  spec.transposed = node.op_type == "ConvTranspose";
  spec.input = node.input(0);
  spec.weights = node.input(1);
  spec.bias = node.input(2);
  spec.output = node.outputs[0];
  spec.groups = node.attributes.get_int("group", 1);
  spec.src_dims = to_dims(x);
  spec.dst_dims = to_dims(y);
  spec.out_channels = y[1];
  if (spec.groups < 1 || x[1] % spec.groups != 0 || y[1] % spec.groups != 0) {
    return Failure{
        fmt::format("{} channels are not divisible by group={}", node.op_type, spec.groups)};
  }
  // Conv weights are [O, I / g, k...], ConvTranspose weights [I, O / g, k...].
  const bool weights_fit = spec.transposed ? w[0] == x[1] && w[1] * spec.groups == y[1]
                                           : w[0] == y[1] && w[1] * spec.groups == x[1];
  if (!weights_fit) {
    return Failure{fmt::format("{} weights do not match the channels and group", node.op_type)};
  }
  if (y[0] != x[0]) return Failure{fmt::format("{} changes the batch size", node.op_type)};
  if (spec.bias != kNoValue && graph.type(spec.bias).shape != Shape{y[1]}) {
    return Failure{fmt::format("{} bias is not [{}]", node.op_type, y[1])};
  }
  return spec;
}

// The node's window in oneDNN's terms, checked against the output size the
// graph gives.
Result<WindowDims> window_dims(const Graph& graph, const Node& node, const ConvolutionSpec& spec) {
  return convolution_window(node, spec.transposed, graph.type(spec.input).shape,
                            graph.type(spec.weights).shape, graph.type(spec.output).shape);
}

}  // namespace

Result<ConvolutionSpec> convolution_spec(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node)) return Failure{"not an ONNX-domain op"};
  if (node.op_type != "Conv" && node.op_type != "ConvTranspose") {
    return Failure{fmt::format("{} is not a convolution", node.op_type)};
  }
  Result<ConvolutionSpec> result = common_spec(graph, node);
  if (!result) return result;
  ConvolutionSpec& spec = result.value();
  Result<WindowDims> window = window_dims(graph, node, spec);
  if (!window) return Failure{window.error()};
  spec.window = std::move(window.value());
  const Shape& w = graph.type(spec.weights).shape;
  if (spec.transposed) {
    deconv_weights(spec, w);
    return result;
  }
  conv_weights(spec, w);
  return result;
}

namespace {

std::atomic<WinogradPolicy> winograd_policy{WinogradPolicy::kWhenFaster};

// How much faster the Winograd kernel must be to be chosen: a tie keeps the
// direct kernel, so that noise cannot flip the choice between processes.
constexpr double kWinogradMargin = 0.9;

// A convolution primitive ready to time on zeroed buffers, with the
// reorders it needs from the layout its input arrives in (`arrives`) and to
// the layout the direct kernel would leave (`leaves`).
class TimedConvolution {
 public:
  TimedConvolution(const dnnl::engine& engine, const memory::desc& arrives,
                   const memory::desc& leaves, const dnnl::primitive_desc& pd)
      : engine_(engine), stream_(engine) {
    memory in = zeroed(arrives);
    memory src = zeroed(pd.src_desc(0));
    memory dst = zeroed(pd.dst_desc(0));
    if (arrives != pd.src_desc(0)) {
      steps_.push_back({dnnl::reorder(in, src), {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, src}}});
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, zeroed(pd.weights_desc(0))}, {DNNL_ARG_DST, dst}};
    if (const memory::desc bias = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_BIAS);
        bias.get_size() > 0) {
      args[DNNL_ARG_BIAS] = zeroed(bias);
    }
    steps_.push_back({dnnl::primitive(pd), std::move(args)});
    if (leaves != pd.dst_desc(0)) {
      memory out = zeroed(leaves);
      steps_.push_back({dnnl::reorder(dst, out), {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, out}}});
    }
  }

  void run() {
    for (auto& [primitive, args] : steps_) primitive.execute(stream_, args);
    stream_.wait();
  }

 private:
  memory zeroed(const memory::desc& desc) {
    memory mem(desc, engine_);
    std::memset(mem.get_data_handle(), 0, desc.get_size());
    return mem;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory>>> steps_;
};

// The layout a descriptor has, as text for a memo key.
std::string layout_name(const memory::desc& desc) {
  if (std::optional<EdgeLayout> layout = laid_out_edge_layout(desc)) {
    return std::to_string(static_cast<int>(*layout));
  }
  return is_plain(desc) ? "plain" : "other";
}

// Whether `winograd` (with its reorders) runs clearly faster than `direct`,
// timed alternately; remembered per convolution shape, layouts and thread
// count for the life of the process.
bool winograd_wins(const dnnl::engine& engine, const memory::desc& arrives,
                   const memory::desc& leaves, const dnnl::primitive_desc& direct,
                   const dnnl::primitive_desc& winograd, const ConvolutionSpec& spec) {
  if (winograd_policy.load() == WinogradPolicy::kWhenAvailable) return true;
  const WindowDims& w = spec.window;
  const std::string key = fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", fmt::join(spec.src_dims, ","),
      fmt::join(spec.weights_dims, ","), fmt::join(w.strides, ","), fmt::join(w.padding_l, ","),
      fmt::join(w.padding_r, ","), layout_name(arrives), layout_name(leaves),
      layout_name(direct.src_desc(0)), spec.bias != kNoValue, omp_get_max_threads());
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> decided;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = decided.find(key); it != decided.end()) return it->second;
  }
  // One warm-up run each, then alternate (no settling runs), so that a slow
  // spell of the machine falls on both.
  constexpr int kRuns = 7;
  TimedConvolution timed_direct(engine, arrives, leaves, direct);
  TimedConvolution timed_winograd(engine, arrives, leaves, winograd);
  const std::vector<TimingResult> timings = time_interleaved(
      {[&] { timed_direct.run(); }, [&] { timed_winograd.run(); }}, kRuns, 1, /*settle=*/0);
  const bool wins = timings[1].median_seconds < kWinogradMargin * timings[0].median_seconds;
  const std::lock_guard<std::mutex> lock(mutex);
  decided.emplace(key, wins);
  return wins;
}
}  // namespace

void set_winograd_policy(WinogradPolicy policy) { winograd_policy.store(policy); }

std::size_t emit_convolution(ProgramBuilder& builder, const ConvolutionSpec& spec,
                             const PostOpChain& fusible) {
  using dnnl::prop_kind;
  // A deconvolution takes no post-ops: oneDNN (2.6) ran DCGAN's with a Relu
  // fused 3 to 4 times slower than without it (256 -> 128 channels, 8x8 to
  // 16x16: 1.62 ms against 0.45 ms), and the activation alone, as its own
  // primitive, takes microseconds.
  const PostOpChain none;
  const PostOpChain& chain = spec.transposed ? none : fusible;
  const memory::dims bias_dims = {spec.out_channels};
  const memory::desc bias_md = spec.bias != kNoValue ? plain_desc(bias_dims) : memory::desc();
  const WindowDims& w = spec.window;
  // A primitive_attr -> primitive_desc builder for create_fused, with the
  // source and destination in `src_md` and `dst_md` (any_desc: oneDNN picks).
  auto build_in = [&](const memory::desc& src_md, const memory::desc& dst_md,
                      dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
    return
        [&, src_md, dst_md, algorithm](const dnnl::primitive_attr& attr) -> dnnl::primitive_desc {
          if (spec.transposed) {
            dnnl::deconvolution_forward::desc desc(
                prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
                any_desc(spec.weights_dims), bias_md, dst_md, w.strides, w.onednn_dilations(),
                w.padding_l, w.padding_r);
            return dnnl::deconvolution_forward::primitive_desc(desc, attr, builder.engine());
          }
          dnnl::convolution_forward::desc desc(
              prop_kind::forward_inference, algorithm, src_md, any_desc(spec.weights_dims), bias_md,
              dst_md, w.strides, w.onednn_dilations(), w.padding_l, w.padding_r);
          return dnnl::convolution_forward::primitive_desc(desc, attr, builder.engine());
        };
  };
  // oneDNN's own choice may differ from the layout the input arrives in: on
  // AVX-512 it computes a convolution of 8 channels per group blocked by 8
  // while the partitions around it exchange channels-last tensors, and the
  // reorders in and out cost more than the convolution (RegNet's first
  // grouped one: 0.22 ms to reorder its input, 0.16 ms to compute). So when
  // oneDNN has a generated kernel for the layout the input is in, with as
  // many post-ops fused, the convolution reads and writes that layout.
  //
  // A convolution whose input arrives in no such layout (the partition's
  // plain input) computes in the builder's compute_layout() when one is
  // asked for and oneDNN has a generated kernel writing it: the ones after
  // it then follow in that layout.
  auto choose = [&]() -> FusedPd<dnnl::primitive_desc> {
    FusedPd<dnnl::primitive_desc> chosen = create_fused<dnnl::primitive_desc>(
        builder, build_in(any_desc(spec.src_dims), any_desc(spec.dst_dims)), {}, chain,
        spec.dst_dims);
    const memory::desc arrives = builder.desc(spec.input);
    const std::optional<EdgeLayout> arrived = laid_out_edge_layout(arrives);
    const Shape dst_shape(spec.dst_dims.begin(), spec.dst_dims.end());
    const std::optional<EdgeLayout> asked = builder.compute_layout();
    if (!arrived && asked && spec.dst_dims.size() == 4 &&
        edge_layout_fits(*asked, TensorType{DType::kFloat32, dst_shape}) &&
        chosen.pd.dst_desc(0) != edge_desc(dst_shape, *asked)) {
      try {
        FusedPd<dnnl::primitive_desc> in_asked = create_fused<dnnl::primitive_desc>(
            builder, build_in(any_desc(spec.src_dims), edge_desc(dst_shape, *asked)), {}, chain,
            spec.dst_dims);
        if (in_asked.fused == chosen.fused && is_generated_kernel(in_asked.pd)) return in_asked;
      } catch (const dnnl::error&) {
        // No implementation writing that layout: keep oneDNN's choice.
      }
    }
    if (!arrived || arrives.dims() != spec.src_dims || chosen.pd.src_desc(0) == arrives) {
      return chosen;
    }
    const memory::desc leaves = edge_desc(dst_shape, *arrived);
    try {
      FusedPd<dnnl::primitive_desc> in_place = create_fused<dnnl::primitive_desc>(
          builder, build_in(arrives, leaves), {}, chain, spec.dst_dims);
      if (in_place.fused == chosen.fused && is_generated_kernel(in_place.pd)) return in_place;
    } catch (const dnnl::error&) {
      // No implementation for that layout: keep oneDNN's choice.
    }
    return chosen;
  };
  // Winograd's F(2x2, 3x3) and F(4x4, 3x3) do 2.25 to 4 times fewer
  // multiplications than a direct 3x3 convolution of stride 1, within the
  // same error of a double-precision result; oneDNN's own heuristic
  // (convolution_auto) keeps the direct kernel for nearly every shape. Its
  // Winograd kernels compute in the blocked layout only, so on a machine
  // whose direct kernels work channels-last they cost two reorders, and
  // which is faster depends on the shape (docs/onednn.md): both are timed
  // once per process and the Winograd kernel runs where it wins clearly.
  auto winograd = [&](FusedPd<dnnl::primitive_desc> direct) -> FusedPd<dnnl::primitive_desc> {
    // oneDNN's Winograd kernels take 2-D 3x3 windows of stride 1, undilated
    // and ungrouped; asking for any other throws after trying each kernel.
    const memory::dims three = {3, 3};
    const memory::dims one = {1, 1};
    if (spec.transposed || spec.groups != 1 || w.kernel != three || w.strides != one ||
        w.dilations != one) {
      return direct;
    }
    const std::pair<memory::desc, memory::desc> layouts[] = {
        {direct.pd.src_desc(0), direct.pd.dst_desc(0)},
        {any_desc(spec.src_dims), any_desc(spec.dst_dims)}};
    for (const auto& [src_md, dst_md] : layouts) {
      try {
        FusedPd<dnnl::primitive_desc> fast = create_fused<dnnl::primitive_desc>(
            builder, build_in(src_md, dst_md, dnnl::algorithm::convolution_winograd), {}, chain,
            spec.dst_dims);
        if (fast.fused != direct.fused || !is_generated_kernel(fast.pd)) continue;
        const memory::desc arrives = builder.desc(spec.input);
        const dnnl::primitive_attr no_post_ops;
        const bool wins =
            winograd_wins(builder.engine(), arrives, direct.pd.dst_desc(0),
                          build_in(direct.pd.src_desc(0), direct.pd.dst_desc(0))(no_post_ops),
                          build_in(fast.pd.src_desc(0), fast.pd.dst_desc(0),
                                   dnnl::algorithm::convolution_winograd)(no_post_ops),
                          spec);
        return wins ? fast : direct;
      } catch (const dnnl::error&) {
        // No Winograd kernel for this convolution in these layouts (not 3x3,
        // strided, grouped, dilated, or not on this machine).
      }
    }
    return direct;
  };
  auto [pd, post_ops, fused] = winograd(choose());

  const ValueId output = fused > 0 ? chain.outputs[fused - 1] : spec.output;
  const memory::desc weights_view = strided_desc(spec.weights_dims, spec.weights_strides);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, builder.read(spec.input, pd.src_desc(0))},
      {DNNL_ARG_WEIGHTS, builder.read_view(spec.weights, weights_view, pd.weights_desc(0))}};
  if (spec.bias != kNoValue) args[DNNL_ARG_BIAS] = builder.read_plain(spec.bias, bias_dims);
  memory dst = post_ops.destination(builder, output, pd.dst_desc(0), chain, fused);
  args[DNNL_ARG_DST] = dst;
  post_ops.bind(builder, args, dst);
  builder.add(dnnl::primitive(pd), std::move(args));
  builder.define(output, dst);
  return fused;
}

}  // namespace collage::onednn
