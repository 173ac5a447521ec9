#include "collage/backends/halide/halide_kernel.h"

#include <HalideRuntime.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <omp.h>

#include <atomic>
#include <string>
#include <vector>

#include "collage/ir/error.h"
#include "collage/ir/flops.h"

namespace collage::halide {
namespace {

// Below this much work (flops, or elements written) a run stays on one
// thread: waking a second one costs more than it saves (the same bound as
// the native kernels').
constexpr std::int64_t kMinParallelWork = 1 << 15;

std::int64_t region_work(const Graph& partition) {
  std::int64_t elements = 0;
  for (const Node& node : partition.nodes()) {
    for (ValueId out : node.outputs) {
      if (out != kNoValue) elements += partition.type(out).numel();
    }
  }
  return std::max(elements, graph_flops(partition));
}

// What travels in Halide's user context.
struct RunContext {
  int threads = 1;
  std::string error;
};

int openmp_do_par_for(void* user_context, halide_task_t task, int min, int size, uint8_t* closure) {
  const auto* context = static_cast<RunContext*>(user_context);
  const int threads = std::min(context != nullptr ? context->threads : 1, size);
  if (threads <= 1 || omp_in_parallel()) {
    for (int i = min; i < min + size; ++i) {
      if (int result = task(user_context, i, closure); result != 0) return result;
    }
    return 0;
  }
  std::atomic<int> failure{0};
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int i = min; i < min + size; ++i) {
    if (failure.load(std::memory_order_relaxed) != 0) continue;
    if (int result = task(user_context, i, closure); result != 0) failure.store(result);
  }
  return failure.load();
}

void capture_error(void* user_context, const char* message) {
  if (user_context != nullptr) static_cast<RunContext*>(user_context)->error = message;
}

// A dense row-major tensor as a Halide buffer: dimensions innermost first.
struct BufferShape {
  std::vector<halide_dimension_t> dims;
  halide_buffer_t buffer{};

  explicit BufferShape(const Shape& shape) {
    std::int64_t stride = 1;
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
      dims.push_back(
          halide_dimension_t(0, static_cast<int32_t>(*it), static_cast<int32_t>(stride)));
      stride *= *it;
    }
    buffer.type = halide_type_t(halide_type_float, 32);
    buffer.dimensions = static_cast<int32_t>(dims.size());
    buffer.dim = dims.empty() ? nullptr : dims.data();
  }
};

class HalideKernel final : public Kernel {
 public:
  HalideKernel(const Graph& partition, KernelLibrary library,
               const std::vector<ValueId>& param_values, int threads)
      : library_(std::move(library)) {
    context_.threads = region_work(partition) < kMinParallelWork ? 1 : std::max(1, threads);
    // Each library holds its own runtime: point its hooks at ours.
    using SetParFor = halide_do_par_for_t (*)(halide_do_par_for_t);
    using SetError = halide_error_handler_t (*)(halide_error_handler_t);
    auto set_par_for =
        reinterpret_cast<SetParFor>(::dlsym(library_.handle.get(), "halide_set_custom_do_par_for"));
    auto set_error =
        reinterpret_cast<SetError>(::dlsym(library_.handle.get(), "halide_set_error_handler"));
    if (set_par_for == nullptr || set_error == nullptr) {
      throw Error("the Halide kernel library lacks its runtime hooks");
    }
    set_par_for(&openmp_do_par_for);
    set_error(&capture_error);
    for (std::size_t i = 0; i < param_values.size(); ++i) {
      const ValueId id = param_values[i];
      buffers_.emplace_back(std::make_unique<BufferShape>(partition.type(id).shape));
      if (i >= partition.inputs().size()) {
        // A buffer constant: its data lives as long as the kernel.
        constants_.push_back(*partition.value(id).constant);
        buffers_.back()->buffer.host = static_cast<uint8_t*>(constants_.back().raw());
      }
    }
    num_inputs_ = partition.inputs().size();
    for (ValueId id : partition.outputs()) {
      buffers_.emplace_back(std::make_unique<BufferShape>(partition.type(id).shape));
    }
    num_outputs_ = partition.outputs().size();
    context_pointer_ = &context_;
    arguments_.push_back(&context_pointer_);
    for (auto& buffer : buffers_) arguments_.push_back(&buffer->buffer);
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    if (inputs.size() != num_inputs_ || outputs.size() != num_outputs_) {
      throw Error(fmt::format("Halide kernel expects {} inputs and {} outputs, got {} and {}",
                              num_inputs_, num_outputs_, inputs.size(), outputs.size()));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      // Halide never writes an input buffer.
      buffers_[i]->buffer.host = static_cast<uint8_t*>(const_cast<void*>(inputs[i].raw()));
    }
    const std::size_t first_output = buffers_.size() - num_outputs_;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      buffers_[first_output + k]->buffer.host = static_cast<uint8_t*>(outputs[k].raw());
    }
    context_.error.clear();
    const int status = library_.entry(arguments_.data());
    if (status != 0) {
      throw Error(fmt::format("the Halide kernel failed ({}): {}", status,
                              context_.error.empty() ? "no message" : context_.error));
    }
  }

 private:
  KernelLibrary library_;
  RunContext context_;
  void* context_pointer_ = nullptr;
  std::vector<std::unique_ptr<BufferShape>> buffers_;
  std::vector<Tensor> constants_;
  std::vector<void*> arguments_;
  std::size_t num_inputs_ = 0;
  std::size_t num_outputs_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_halide_kernel(const Graph& partition, KernelLibrary library,
                                           const std::vector<ValueId>& param_values, int threads) {
  return std::make_unique<HalideKernel>(partition, std::move(library), param_values, threads);
}

}  // namespace collage::halide
