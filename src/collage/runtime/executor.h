// Executor: runs a model that has been split into compiled partitions.
//
// A plan assigns every node of the model to one partition; each partition
// was extracted as a standalone Graph (extract_subgraph) and compiled into a
// Kernel by its backend. The executor wires the kernels together: values
// flow between partitions by name, boundary tensors (every value one
// partition produces and another reads) are allocated once at construction
// and reused by every run, and partitions run in the given order, which must
// be topological. Graph outputs get fresh buffers on every run, so what
// run() returns stays valid after the next run; one whose shape the data
// decides (TensorType::at_run_time) is the buffer its kernel allocated.
//
// run() validates what it is given, because the inputs come from users
// (.npy files, --input flags): an unknown name, a missing input, or a wrong
// dtype or shape is an Error naming the input.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"
#include "collage/runtime/kernel.h"
#include "collage/runtime/trace.h"

namespace collage {

struct CompiledPartition {
  // Node ids in the model.
  std::vector<NodeId> nodes;
  // extract_subgraph(model, nodes): its inputs and outputs name model values.
  Graph graph;
  std::unique_ptr<Kernel> kernel;
  // The backend that compiled the kernel, for reports.
  std::string backend;
};

class Executor {
 public:
  // Checks that the partitions fit the model (every value a partition reads
  // is a model input, a constant, or produced by an earlier partition; types
  // agree; every model output is defined) and allocates boundary tensors.
  // Throws Error when they do not fit.
  Executor(const Graph& model, std::vector<CompiledPartition> partitions);

  // Runs all partitions once. `inputs` must hold exactly the model's inputs
  // by name, with their exact types. Returns the model's outputs by name.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

  // Like run(), but each output named in `outputs` is written into the
  // tensor given there (kernels write straight into it where the output is
  // computed; its type must be the output's, else Error; it must not
  // overlap an input). Outputs not named are added in new buffers.
  void run_into(const std::map<std::string, Tensor>& inputs,
                std::map<std::string, Tensor>& outputs);

  // Records every later run into `recorder` (nullptr: stop recording): a
  // span per run, per partition and per allocation, plus the spans kernels
  // record inside. The recorder must outlive the runs. Traced runs are
  // numbered from 0 for each new recorder; stopping and resuming the same
  // one goes on numbering, so traced runs can alternate with untraced ones.
  void record_into(TraceRecorder* recorder) {
    if (recorder != nullptr && recorder != numbered_for_) {
      traced_runs_ = 0;
      numbered_for_ = recorder;
    }
    trace_ = recorder;
  }

  // Seconds each partition's kernel took in the last run, in partition order.
  const std::vector<double>& last_partition_seconds() const { return partition_seconds_; }
  // Their sum: the last run's time inside kernels.
  double last_kernel_seconds() const;

  // A value that passed between partitions in the last run (or a model
  // input or output), by its name in the model; nullptr for any other name.
  const Tensor* last_value(const std::string& name) const {
    auto it = slot_by_name_.find(name);
    return it == slot_by_name_.end() || slots_[it->second].empty() ? nullptr : &slots_[it->second];
  }

  const std::vector<CompiledPartition>& partitions() const { return partitions_; }
  // The model's input and output names, in model order.
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Binds the inputs, runs every partition with each fresh output slot
  // bound to the tensor `given` names for it (or a new buffer).
  void run_partitions(const std::map<std::string, Tensor>& inputs,
                      const std::map<std::string, Tensor>& given);
  void release_arguments();
  // Whether `slot` holds a model output a kernel writes (a new buffer per run).
  bool is_fresh(std::size_t slot) const {
    return std::find(fresh_slots_.begin(), fresh_slots_.end(), slot) != fresh_slots_.end();
  }
  void record_partition(std::size_t index, int run, Clock::time_point start, Clock::time_point end);

  // Where a kernel argument lives: an index into slots_.
  using Slot = std::size_t;

  std::vector<CompiledPartition> partitions_;
  std::vector<std::string> input_names_;
  std::vector<TensorType> input_types_;
  std::vector<std::string> output_names_;
  // One tensor per model value some partition reads or writes, or that is a
  // model input or output.
  std::vector<Tensor> slots_;
  std::vector<TensorType> slot_types_;
  std::map<std::string, Slot> slot_by_name_;
  std::vector<Slot> input_slots_;   // per model input
  std::vector<Slot> output_slots_;  // per model output
  // Slots that hold model outputs written by a kernel: reallocated per run.
  std::vector<Slot> fresh_slots_;
  std::vector<std::vector<Slot>> partition_inputs_;
  std::vector<std::vector<Slot>> partition_outputs_;
  // Argument arrays handed to the kernels, kept to avoid allocating per run.
  std::vector<std::vector<Tensor>> input_args_;
  std::vector<std::vector<Tensor>> output_args_;
  std::vector<double> partition_seconds_;
  TraceRecorder* trace_ = nullptr;
  int traced_runs_ = 0;
  // The recorder traced_runs_ counts for.
  const TraceRecorder* numbered_for_ = nullptr;
};

// Compiles one partition Graph: a backend's compile() bound to its options.
using PartitionCompiler = std::function<Result<std::unique_ptr<Kernel>>(const Graph& partition)>;

// The whole model as one partition compiled by `compile` (the `native`
// strategy, and the single-backend baselines where a backend runs every
// node). A compile failure is an Error naming the backend and the reason.
Executor whole_model_executor(const Graph& model, const std::string& backend,
                              const PartitionCompiler& compile);

}  // namespace collage
