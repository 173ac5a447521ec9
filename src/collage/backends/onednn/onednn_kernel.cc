#include "collage/backends/onednn/onednn_kernel.h"

#include <fmt/format.h>

#include "collage/backends/onednn/omp_threads.h"
#include "collage/ir/error.h"
#include "collage/runtime/trace.h"

namespace collage::onednn {
namespace {

template <typename T>
void check_types(std::span<T> tensors, const std::vector<TensorType>& types, const char* role) {
  if (tensors.size() != types.size()) {
    throw Error(fmt::format("oneDNN kernel: {} {}s given, {} expected", tensors.size(), role,
                            types.size()));
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (tensors[i].type() != types[i] || tensors[i].empty()) {
      throw Error(fmt::format("oneDNN kernel: {} {} is {}, expected {}", role, i,
                              tensors[i].type().to_string(), types[i].to_string()));
    }
  }
}

}  // namespace

OnednnKernel::OnednnKernel(Program program, dnnl::stream stream,
                           std::vector<TensorType> input_types,
                           std::vector<TensorType> output_types, int threads)
    : program_(std::move(program)),
      stream_(std::move(stream)),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)),
      threads_(threads) {}

void OnednnKernel::run(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  check_types(inputs, input_types_, "input");
  check_types(outputs, output_types_, "output");
  for (Binding& binding : program_.bindings) {
    // Inputs are only read: oneDNN takes non-const handles for every memory.
    void* data = binding.output
                     ? outputs[static_cast<std::size_t>(binding.slot)].raw()
                     : const_cast<void*>(inputs[static_cast<std::size_t>(binding.slot)].raw());
    binding.mem.set_data_handle(static_cast<char*>(data) + binding.offset_bytes);
  }
  ScopedOmpThreads threads(threads_);
  try {
    for (const Step& step : program_.steps) {
      if (step.is_reorder) {
        ScopedSpan span("reorder", SpanKind::kLayout);
        step.primitive.execute(stream_, step.args);
        continue;
      }
      ScopedSpan span(step.label.c_str(), SpanKind::kOp, step.node.c_str());
      step.primitive.execute(stream_, step.args);
    }
    stream_.wait();
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN kernel failed: {}", e.what()));
  }
}

}  // namespace collage::onednn
