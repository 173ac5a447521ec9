#include "collage/backends/onednn/onednn_backend.h"

#include <fmt/format.h>

#include <dnnl.hpp>

#include "code_version.h"
#include "collage/backends/onednn/fusion_patterns.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/lowering.h"
#include "collage/backends/onednn/omp_threads.h"
#include "collage/backends/onednn/onednn_kernel.h"
#include "collage/backends/onednn/op_support.h"

namespace collage {
namespace {

// A reorder between a plain tensor and one of the edge layouts: the step a
// oneDNN kernel adds where an edge arrives or leaves plain.
class ReorderConversion final : public LayoutConversion {
 public:
  ReorderConversion(const dnnl::engine& engine, const dnnl::memory::desc& from,
                    const dnnl::memory::desc& to, int threads)
      : stream_(engine), from_(from, engine, nullptr), to_(to, engine, nullptr), threads_(threads) {
    // The primitive's blocking depends on the thread count, as a kernel's does.
    onednn::ScopedOmpThreads scoped(threads_);
    reorder_ = dnnl::reorder(from_, to_);
  }

  void run(const void* src, void* dst) override {
    onednn::ScopedOmpThreads scoped(threads_);
    from_.set_data_handle(const_cast<void*>(src));
    to_.set_data_handle(dst);
    reorder_.execute(stream_, from_, to_);
    stream_.wait();
  }

 private:
  dnnl::stream stream_;
  dnnl::memory from_;
  dnnl::memory to_;
  dnnl::reorder reorder_;
  int threads_;
};

class OnednnBackend final : public Backend {
 public:
  // One CPU engine per backend: creating it queries the machine, and every
  // kernel can share it.
  OnednnBackend()
      : engine_(dnnl::engine::kind::cpu, 0),
        preferred_layout_(onednn::preferred_edge_layout(engine_)),
        other_layout_(onednn::other_compute_layout(engine_, preferred_layout_)) {}

  std::string name() const override { return "onednn"; }

  std::string version() const override {
    const dnnl_version_t* v = dnnl_version();
    return fmt::format("oneDNN {}.{}.{}", v->major, v->minor, v->patch);
  }

  std::string code_version() const override { return COLLAGE_CODE_VERSION; }

  BackendStyle style() const override { return BackendStyle::kLibrary; }
  // A partition is one program of primitives over memories (onednn/program.h).
  bool compiles_regions() const override { return true; }

  bool supports(const Graph& graph, const Node& node) const override {
    return !onednn::why_unsupported(graph, node).has_value();
  }

  // Every layout (a primitive reorders what it does not compute in), the
  // one its convolutions choose on this machine first, so that adjacent
  // oneDNN partitions hand over their tensors without reordering them.
  std::vector<EdgeLayout> edge_layouts() const override {
    std::vector<EdgeLayout> layouts = {preferred_layout_};
    for (EdgeLayout layout : {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked16,
                              EdgeLayout::kBlocked8, EdgeLayout::kPlain}) {
      if (layout != preferred_layout_) layouts.push_back(layout);
    }
    return layouts;
  }

  // One alternative to the layout oneDNN picks: the first of nChw16c,
  // nChw8c and nhwc with generated convolution kernels here (on AVX-512,
  // where oneDNN computes nhwc, nChw16c: 13 to 15 % faster on
  // EfficientNet-B0 and SqueezeNet, 8 times slower on RegNetY's grouped
  // convolutions; measured per plan by the tuner).
  std::vector<EdgeLayout> compute_layouts() const override {
    if (!other_layout_) return {};
    return {*other_layout_};
  }

  // A oneDNN kernel converts its edges with a reorder primitive.
  std::unique_ptr<LayoutConversion> layout_conversion(const TensorType& type, EdgeLayout layout,
                                                      bool to_plain, int threads) const override {
    if (layout == EdgeLayout::kPlain || !edge_layout_fits(layout, type)) return nullptr;
    const std::optional<dnnl::memory::data_type> data_type = onednn::onednn_data_type(type.dtype);
    if (!data_type) return nullptr;
    const dnnl::memory::desc plain = onednn::edge_desc(type.shape, EdgeLayout::kPlain, *data_type);
    const dnnl::memory::desc laid_out = onednn::edge_desc(type.shape, layout, *data_type);
    try {
      return std::make_unique<ReorderConversion>(engine_, to_plain ? laid_out : plain,
                                                 to_plain ? plain : laid_out, threads);
    } catch (const dnnl::error&) {
      return nullptr;  // no reorder for this case: timed as the tiled transpose
    }
  }

  std::vector<NamedPattern> patterns() const override { return onednn::fusion_patterns(); }

  std::string report_color() const override { return "#8ecae6"; }
  std::string describe_support() const override {
    std::vector<std::string> names;
    for (const NamedPattern& pattern : patterns()) names.push_back(pattern.name);
    return fmt::format(
        "ops (float32; per-tensor QuantizeLinear and DequantizeLinear; int8 for QLinearConv, "
        "QLinearConvTranspose, QLinearMatMul, QGemm, QLinearConcat, QLinearAdd, "
        "QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearHardSwish, QLinearHardSigmoid, "
        "QLinearSoftmax (output zero point 0), "
        "QLinearAveragePool, "
        "QLinearGlobalAveragePool and 8-bit MaxPool): {}\n"
        "patterns: {}\nnotes: Conv/ConvTranspose/pooling over 1-3 spatial "
        "dims; MatMul with batch broadcasting; binary ops broadcast their second input; "
        "Softmax follows opset semantics; Clip and Pow need constant scalars; int8 weights "
        "need zero points of 0",
        fmt::join(onednn::supported_op_types(), ", "), fmt::join(names, ", "));
  }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    // Primitive creation already depends on the thread count (blockings).
    if (auto why = edge_layout_problem(partition, options)) return Failure{*why};
    onednn::ScopedOmpThreads threads(options.threads);
    dnnl::stream stream(engine_);
    Result<onednn::Program> program = onednn::lower_partition(partition, engine_, stream, options);
    if (!program) return Failure{program.error()};
    std::vector<TensorType> inputs;
    std::vector<TensorType> outputs;
    for (ValueId input : partition.inputs()) inputs.push_back(partition.type(input));
    for (ValueId output : partition.outputs()) outputs.push_back(partition.type(output));
    return std::unique_ptr<Kernel>(std::make_unique<onednn::OnednnKernel>(
        std::move(program.value()), std::move(stream), std::move(inputs), std::move(outputs),
        options.threads));
  }

 private:
  dnnl::engine engine_;
  EdgeLayout preferred_layout_;
  std::optional<EdgeLayout> other_layout_;
};

}  // namespace

std::unique_ptr<Backend> make_onednn_backend() { return std::make_unique<OnednnBackend>(); }

}  // namespace collage
