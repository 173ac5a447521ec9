// ShapePlans: which plan of a plan file runs the input shapes a run brings,
// and what runs shapes that no plan was made for.
//
// A plan is measured and compiled for fixed input shapes. `tune` given
// several shapes for an input writes a plan set, one plan per shape
// (plan/plan_json.h); a run picks the plan made for its shapes. Shapes that
// no plan was made for still run, never fail: the plan whose shapes are
// closest is compiled again for them, when its partitions still fit the
// model at those shapes (node names come from the model file, so they
// usually do), and otherwise the model runs on the native kernels. Either
// way the run gets one warning saying so, with the time the compile took.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/plan/plan.h"
#include "collage/session/prepared_model.h"

namespace collage {

// shapes_to_string, or "the model's own shapes" for none.
std::string shapes_text(const std::map<std::string, Shape>& shapes);
// The shapes of each plan: "ids=[1,16]; ids=[1,32]".
std::string plan_shapes_text(const std::vector<Plan>& plans);

// The plan made for `shapes`: every input named there that the plan fixes
// (Plan::input_shapes) has that shape in it. nullopt when none is.
// `shapes` may be partial; the first plan that fits is taken.
std::optional<std::size_t> plan_for_shapes(const std::vector<Plan>& plans,
                                           const std::map<std::string, Shape>& shapes);

// The plan whose shapes differ least from `shapes`: the smallest sum, over
// the dimensions of the inputs both name, of |log(size / plan's size)|, so
// that 320 is as near 640 as 640 is to 1280. Ties go to the earlier plan.
std::size_t closest_plan(const std::vector<Plan>& plans,
                         const std::map<std::string, Shape>& shapes);

// Prepares the model (prepare_model) under the plan of `plans` made for the
// shapes `options.input_shapes` and `options.data_shapes` give, or, when
// none was, under the closest plan compiled again for them, else natively;
// the fallback adds a warning naming the shapes, the plans there are, what
// ran instead and the milliseconds it cost. `options.plan` is ignored;
// `plans` is not empty. Throws Error as prepare_model does.
PreparedModel prepare_for_shapes(const std::string& path, const std::optional<std::string>& bytes,
                                 PrepareOptions options, const std::vector<Plan>& plans);

}  // namespace collage
