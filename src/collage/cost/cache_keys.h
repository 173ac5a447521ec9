// Cache keys: every key under which the measurement cache keeps what a tune
// measured or learned, built here and nowhere else.
//
// A key names everything its value depends on, so that a value is reused
// only where it still holds: the machine and how it measures
// (measurement_context(), cost/measurer.h), the backend's library and code
// versions (backend_version_key()), and for what a model's tune learned,
// the model's structure. Changing how a value is computed changes its key
// (a rule's text or number below), so that values of the old rule are not
// read by the new one.
#pragma once

#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/cost/measurer.h"
#include "collage/ir/graph.h"

namespace collage {

// The machine (its fingerprint text) as every measurement's and overhead's
// key sees it: with how it measures (measurement_context()) and the graph
// optimization level, so that plans and measurements made at different
// levels never mix.
std::string machine_key(const std::string& machine, const MeasureOptions& options,
                        const std::string& graph_opt);

// A backend's version as keys see it: the library's version and, when the
// build generated one, the hash of our own code of the backend.
std::string backend_version_key(const Backend& backend);

// A partition (its structural hash) measured by a backend on a machine.
std::string measurement_key(const std::string& partition_hash, const std::string& backend_name,
                            const std::string& backend_version, const std::string& machine);

// A layout conversion (`what`: layout, direction, type, converter) timed
// with `threads` on `machine`.
std::string conversion_key(const std::string& what, int threads, const std::string& machine);

// A model as its tune's learned state sees it: its structure and the
// versions and code of the backends it was tuned with, so that what was
// learned for other code is not reused.
std::string model_key(const Graph& graph, const std::vector<const Backend*>& backends);

// The per-partition overhead of `backend` on `machine`: learned on this
// machine by any model when `model` is empty, else the overhead a model's
// kept plan was found with (`model`: model_key()), or what its own
// profiles taught (model_overheads_learned()).
std::string overhead_key(const std::string& backend, const std::string& machine,
                         const std::string& model);
// The model, for the overheads its own profiles taught (overhead_key()).
std::string model_overheads_learned(const std::string& model);

// The cover that local moves kept for a model (model_key()) on a machine,
// within one search space.
std::string local_moves_key(const std::string& model, const std::string& machine,
                            const std::vector<std::string>& backends, int max_depth, int max_exits,
                            bool boundary_costs);

// The layout a tune of `model` (model_key()) chose to search in on
// `machine` (choose_search_layout, session/tuning.h), so that a tune from a
// warm cache searches where the first did.
std::string search_layout_key(const std::string& model, const std::string& machine);

}  // namespace collage
