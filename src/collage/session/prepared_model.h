// PreparedModel: a model imported, planned (or given a saved plan) and
// compiled, ready to run; what `collage run` and collage::Session both stand on.
//
// One place decides how a saved plan and the caller's options combine: the
// plan brings its input shapes (the caller's override them), its graph
// optimization level (another level is refused: the plan names nodes of that
// graph) and its thread count (used unless the caller gives one). A plan made
// for another model is refused; one measured on another machine or with
// other backend versions runs, with a warning.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/executor.h"

namespace collage {

struct PrepareOptions {
  // A saved plan and what it came from (a file name, for messages); without
  // one, `strategy` is planned.
  std::optional<Plan> plan;
  std::string plan_source = "plan";
  // The plan was made for other input shapes than the ones input_shapes and
  // data_shapes give (session/shape_plans.h): its partitions are compiled
  // for those shapes, without its own shapes or the check of its model
  // hash; a plan that does not fit them is an Error from compile_plan.
  bool plan_for_other_shapes = false;
  std::string strategy = "native";
  // 0: the plan's own count, or every core.
  int threads = 0;
  std::map<std::string, Shape> input_shapes;
  // Shapes of the data the caller will run with, by input ("" for a model's
  // only input): they fix the dynamic dimensions input_shapes and the plan
  // leave open (ImportOptions::data_shapes).
  std::map<std::string, Shape> data_shapes;
  // Empty: the plan's level, or "all".
  std::string graph_opt;
  // Empty: the default budget (see resources.h).
  std::string max_memory;
};

struct PreparedModel {
  Graph graph;
  Plan plan;
  Executor executor;
  int threads = 1;
  // One line each: input dimensions the model left open and import set
  // (open_dims_warning), a plan measured on another machine or with other
  // backend versions.
  std::vector<std::string> warnings;
};

// Loads the model at `path` (or, when `bytes` is given, from those bytes)
// and prepares it. Throws Error for anything that does not fit.
PreparedModel prepare_model(const std::string& path, const std::optional<std::string>& bytes,
                            const PrepareOptions& options);

}  // namespace collage
