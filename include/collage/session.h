// collage::Session: a model compiled under a plan, ready to run.
//
// A session imports the model (a file or its bytes), canonicalizes it as
// `collage tune` did, compiles every partition of the plan with its backend
// once, and then runs it as often as asked:
//
//   collage::Session session("model.onnx", {.plan_file = "model.plan.json"});
//   std::vector<float> pixels(1 * 3 * 224 * 224);
//   auto outputs = session.run({{"input", collage::Array::view(pixels.data(), {1, 3, 224, 224})}});
//   const float* scores = outputs.at("output").data_as<float>();
//
// Shapes: a plan is compiled for fixed input shapes. A plan file that `tune`
// wrote for several shapes of an input (a plan set) is compiled for each of
// them, and run() picks the one made for the shapes it is given. Shapes no
// plan was made for, in dimensions the model leaves dynamic, still run: the
// closest plan is compiled again for them (or, when it does not fit, the
// native kernels run them) on the first run that brings them, and
// warnings() gains one line saying so and what the compile cost. The last
// few such compiles are kept.
//
// Threads: run() may be called from any number of threads at once. Calls on
// one session are serialized (one runs while the others wait), because a
// compiled plan owns the buffers between its partitions, and each run
// already uses every thread the session was given. To run in parallel,
// create one session per thread, each with its share of --threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/array.h"

namespace collage {

struct SessionOptions {
  // A plan saved by `collage tune -o` or TuneResult::save(), or a plan set
  // (one plan per input shape).
  std::string plan_file;
  // A plan as JSON text (TuneResult::plan_json); give this or plan_file.
  std::string plan_json;
  // Without a plan: how to place the model on backends, as `collage run
  // --strategy` takes it ("native", "single:onednn", "greedy:onednn,xnnpack").
  std::string strategy = "native";
  // Threads for every backend; 0: the plan's own count, or every core.
  int threads = 0;
  // Shapes for inputs with dynamic dimensions, which inputs() then shows; a
  // plan brings its own (of a plan set: these choose the plan).
  std::map<std::string, std::vector<std::int64_t>> input_shapes;
  // Graph optimizations ("none", "basic", "all"); empty: the plan's level, or "all".
  std::string graph_opt;
  // Refuse a model whose tensors need more bytes than this ("512M", "4G");
  // empty: 3/4 of physical memory.
  std::string max_memory;
};

// A model input or output: its name, element type and dimensions (for an
// output whose shape the data decides, such as a detector's boxes, 0 for
// each dimension known only when the model runs).
struct ValueInfo {
  std::string name;
  ElementType type = ElementType::kFloat32;
  std::vector<std::int64_t> dims;
  // Per dimension of an input, the model's name for one it leaves open ("?"
  // when unnamed), which run() takes at any size; empty for a dimension
  // that is fixed. `dims` has the size the session was made for (1 where
  // neither a plan nor SessionOptions::input_shapes gave one). Empty for
  // outputs.
  std::vector<std::string> open_dims;

  // Whether run() takes an input of `dims` here: of this rank, the size of
  // `dims` in every dimension the model fixes, any size >= 0 in one it
  // leaves open.
  bool takes(const std::vector<std::int64_t>& given) const {
    if (given.size() != dims.size()) return false;
    for (std::size_t axis = 0; axis < given.size(); ++axis) {
      const bool open = axis < open_dims.size() && !open_dims[axis].empty();
      if (given[axis] != dims[axis] && !(open && given[axis] >= 0)) return false;
    }
    return true;
  }
};

class Session {
 public:
  // Throws Error for a model or plan that cannot be loaded, a plan made for
  // another model, or a partition that does not compile.
  explicit Session(const std::string& model_path, const SessionOptions& options = {});
  // The same for the bytes of an .onnx file (external data is read relative
  // to the working directory).
  static Session from_bytes(const std::string& model_bytes, const SessionOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // The model's inputs and outputs, in model order.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  // Runs the model once. `inputs` holds every model input by name with its
  // exact type and dimensions (any size in a dimension the model leaves
  // open: see Shapes above); views are read in place. Returns every output
  // in a buffer of its own. Throws Error naming a missing, unknown or
  // mistyped input.
  std::map<std::string, Array> run(const std::map<std::string, Array>& inputs);

  // Like run(), writing each output named in `outputs` into the caller's
  // array (its type and dimensions must match: Error otherwise); outputs not
  // named are added to `outputs` in new buffers.
  void run(const std::map<std::string, Array>& inputs, std::map<std::string, Array>& outputs);

  // The plan this session runs, as JSON (the format of `collage tune -o`;
  // a plan set when it was given one).
  std::string plan_json() const;
  // The strategy ("collage", "native", "single:onednn", ...), thread count
  // and partitions per backend of the plan for the shapes inputs() shows.
  std::string strategy() const;
  int threads() const;
  std::map<std::string, int> partitions() const;
  // One line each on what the session chose for the caller: input
  // dimensions the model leaves open, set to 1 (SessionOptions::input_shapes
  // gives other sizes); a plan measured on another machine; shapes that no
  // plan was made for, and what ran them.
  std::vector<std::string> warnings() const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace collage
