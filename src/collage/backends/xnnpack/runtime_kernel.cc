#include "collage/backends/xnnpack/runtime_kernel.h"

#include <fmt/format.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstring>
#include <map>
#include <mutex>

#include "collage/backends/xnnpack/channels_last.h"
#include "collage/ir/error.h"
#include "collage/runtime/trace.h"

namespace collage::xnnpack {
namespace {

using Pool = std::shared_ptr<pthreadpool>;

// One pool handle per thread count for the whole process; a handle lives as
// long as some kernel uses it. The threads behind it are OpenMP's.
Pool shared_pool(int threads) {
  // With one thread XNNPACK runs on the caller's thread; no pool is needed.
  if (threads <= 1) return nullptr;
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<pthreadpool>> pools;
  std::lock_guard<std::mutex> lock(mutex);
  std::weak_ptr<pthreadpool>& cached = pools[threads];
  if (Pool pool = cached.lock()) return pool;
  pthreadpool_t raw = pthreadpool_create(static_cast<std::size_t>(threads));
  if (raw == nullptr) return nullptr;
  Pool pool(raw, [](pthreadpool_t p) { pthreadpool_destroy(p); });
  cached = pool;
  return pool;
}

struct RuntimeDeleter {
  void operator()(xnn_runtime* runtime) const { xnn_delete_runtime(runtime); }
};

// Whether an edge stored as `external` by the caller and as `internal` by
// XNNPACK holds the same bytes.
bool same_order(EdgeLayout external, Layout internal, const Shape& shape) {
  if (is_layout_free(shape)) return true;
  return (external == EdgeLayout::kChannelsLast) == (internal == Layout::kChannelsLast);
}

class RuntimeKernel final : public Kernel {
 public:
  RuntimeKernel(BuiltSubgraph built, Pool pool, xnn_runtime_t runtime,
                const std::vector<EdgeLayout>& input_layouts,
                const std::vector<EdgeLayout>& output_layouts)
      : static_data_(std::move(built.static_data)), pool_(std::move(pool)), runtime_(runtime) {
    for (std::size_t i = 0; i < built.inputs.size(); ++i) {
      ExternalValue& value = built.inputs[i];
      // XNNPACK may read XNN_EXTRA_BYTES past an input's end.
      std::vector<std::byte> staging(byte_size(value.type) + XNN_EXTRA_BYTES);
      externals_.push_back({value.id, staging.data()});
      EdgeLayout layout = i < input_layouts.size() ? input_layouts[i] : EdgeLayout::kPlain;
      inputs_.push_back({std::move(value), layout, std::move(staging)});
    }
    for (std::size_t i = 0; i < built.outputs.size(); ++i) {
      ExternalValue& value = built.outputs[i];
      EdgeLayout layout = i < output_layouts.size() ? output_layouts[i] : EdgeLayout::kPlain;
      std::vector<std::byte> staging;
      if (value.shifted || !same_order(layout, value.layout, value.type.shape)) {
        staging.resize(byte_size(value.type));
      }
      externals_.push_back({value.id, nullptr});
      outputs_.push_back({std::move(value), layout, std::move(staging)});
    }
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    check_contract(inputs, outputs);
    pthreadpool_t pool = pool_.get();
    // The runtime is set up again only when the caller hands in other buffers.
    bool moved = !set_up_;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      Edge& edge = inputs_[i];
      // An input in XNNPACK's order, as it is, with room to read past its
      // end is read in place; any other is staged.
      const bool in_place = inputs[i].readable_past_end() && !edge.value.shifted &&
                            same_order(edge.external, edge.value.layout, edge.value.type.shape);
      void* read = in_place ? const_cast<void*>(inputs[i].raw()) : edge.staging.data();
      xnn_external_value& external = externals_[i];
      moved |= external.data != read;
      external.data = read;
      if (!in_place) stage(edge, inputs[i].raw(), edge.staging.data(), true, pool);
    }
    // Outputs in the caller's order are written in place.
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      Edge& edge = outputs_[i];
      void* target =
          edge.staging.empty() ? outputs[i].raw() : static_cast<void*>(edge.staging.data());
      xnn_external_value& external = externals_[inputs_.size() + i];
      moved |= external.data != target;
      external.data = target;
    }
    if (moved) {
      xnn_status status = xnn_setup_runtime(runtime_.get(), externals_.size(), externals_.data());
      if (status != xnn_status_success) {
        throw Error(fmt::format("XNNPACK could not set up the runtime: {}", status_name(status)));
      }
      set_up_ = true;
    }
    xnn_status status = xnn_invoke_runtime(runtime_.get());
    if (status != xnn_status_success) {
      throw Error(fmt::format("XNNPACK could not run the runtime: {}", status_name(status)));
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Edge& edge = outputs_[i];
      if (!edge.staging.empty()) stage(edge, edge.staging.data(), outputs[i].raw(), false, pool);
    }
  }

 private:
  struct Edge {
    ExternalValue value;
    // How the caller stores the tensor.
    EdgeLayout external = EdgeLayout::kPlain;
    std::vector<std::byte> staging;
  };

  static std::size_t byte_size(const TensorType& type) {
    return static_cast<std::size_t>(type.numel()) * dtype_size(type.dtype);
  }

  // Moves an edge between the caller's buffer and XNNPACK's (`into` the
  // subgraph or out of it), transposing where the two layouts differ and
  // flipping the sign bits of a shifted uint8 value.
  static void stage(const Edge& edge, const void* from, void* to, bool into, pthreadpool_t pool) {
    const TensorType& type = edge.value.type;
    const bool flip = edge.value.shifted;
    if (same_order(edge.external, edge.value.layout, type.shape)) {
      ScopedSpan span(into ? "stage input" : "stage output", SpanKind::kCopy);
      if (flip) {
        flip_sign_bits(static_cast<const std::uint8_t*>(from), static_cast<std::uint8_t*>(to),
                       byte_size(type));
      } else {
        std::memcpy(to, from, byte_size(type));
      }
      return;
    }
    // Into a channels-last value, or out of a plain one to a channels-last
    // edge: NCHW to NHWC.
    const bool to_channels_last = into == (edge.value.layout == Layout::kChannelsLast);
    ScopedSpan span(to_channels_last ? "nchw to nhwc" : "nhwc to nchw", SpanKind::kLayout);
    transpose_nchw(type, from, to, to_channels_last, flip, pool);
  }

  void check_contract(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
    if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size()) {
      throw Error(
          fmt::format("XNNPACK kernel called with {} inputs and {} outputs, expected {} and {}",
                      inputs.size(), outputs.size(), inputs_.size(), outputs_.size()));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].type() != inputs_[i].value.type || inputs[i].empty()) {
        throw Error(fmt::format("XNNPACK kernel input {} is {}, expected {}", i,
                                inputs[i].type().to_string(), inputs_[i].value.type.to_string()));
      }
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].type() != outputs_[i].value.type || outputs[i].empty()) {
        throw Error(fmt::format("XNNPACK kernel output {} is {}, expected {}", i,
                                outputs[i].type().to_string(), outputs_[i].value.type.to_string()));
      }
    }
  }

  // Declared before runtime_, so the runtime is destroyed first.
  std::vector<std::vector<std::byte>> static_data_;
  Pool pool_;
  std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime_;
  std::vector<Edge> inputs_;
  std::vector<Edge> outputs_;
  std::vector<xnn_external_value> externals_;
  bool set_up_ = false;
};

}  // namespace

std::optional<std::string> initialize_xnnpack() {
  static const std::optional<std::string> failure = []() -> std::optional<std::string> {
    xnn_status status = xnn_initialize(nullptr);
    if (status == xnn_status_success) return std::nullopt;
    return fmt::format("XNNPACK could not initialize: {}", status_name(status));
  }();
  return failure;
}

Result<std::unique_ptr<Kernel>> make_runtime_kernel(BuiltSubgraph built,
                                                    const CompileOptions& options) {
  // The backend checked the layouts against the partition (edge_layout_problem).
  const int threads = options.threads;
  Pool pool = shared_pool(threads);
  if (threads > 1 && pool == nullptr) return Failure{"could not create a pthreadpool"};
  // The pool runs on the OpenMP threads every backend shares
  // (openmp_pthreadpool.h), so there are no workers of its own to yield.
  xnn_runtime_t runtime = nullptr;
  xnn_status status = xnn_create_runtime_v2(built.subgraph.get(), pool.get(), 0, &runtime);
  if (status != xnn_status_success) {
    return Failure{fmt::format("XNNPACK could not create the runtime: {}", status_name(status))};
  }
  // The runtime no longer needs the subgraph; it keeps reading static_data.
  built.subgraph.reset();
  return std::unique_ptr<Kernel>(std::make_unique<RuntimeKernel>(
      std::move(built), std::move(pool), runtime, options.input_layouts, options.output_layouts));
}

namespace {

class EdgeConversion final : public LayoutConversion {
 public:
  EdgeConversion(TensorType type, bool to_plain, Pool pool)
      : type_(std::move(type)), to_plain_(to_plain), pool_(std::move(pool)) {}

  void run(const void* src, void* dst) override {
    // A uint8 edge is held shifted beside int8 weights: timed as flipping.
    transpose_nchw(type_, src, dst, !to_plain_, type_.dtype == DType::kUInt8, pool_.get());
  }

 private:
  TensorType type_;
  bool to_plain_;
  Pool pool_;
};

}  // namespace

std::unique_ptr<LayoutConversion> make_edge_conversion(const TensorType& type, bool to_plain,
                                                       int threads) {
  Pool pool = shared_pool(threads);
  if (type.shape.size() != 4 || (threads > 1 && pool == nullptr)) return nullptr;
  return std::make_unique<EdgeConversion>(type, to_plain, std::move(pool));
}

}  // namespace collage::xnnpack
